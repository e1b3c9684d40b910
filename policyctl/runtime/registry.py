"""The tool registry (after nanobot's): what exists, what a run exposes, how a call is prepared.

The definitions a model sees are exactly the registered tools the run's `Resolution` allows,
in a stable order (core tools sorted, then plugin and MCP tools sorted) and cached while
neither the registry nor the resolution changes, so prompts stay cacheable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from ..catalog.inventory import Inventory, Tool, marks_mcp
from ..explain.tool import decide_tool, sandbox_refusal
from ..names import ascii_problem, fold, mcp_server_part
from ..pipeline.result import RemovedTool, Resolution
from .arguments import ArgumentError, ArgumentProblem, coerce_arguments
from .mcp import is_mcp_tool
from .tools import RuntimeTool

_ALNUM = re.compile(r"[^a-z0-9]")


RefusalDetail = Literal["full", "layer", "minimal"]
REFUSAL_DETAILS: tuple[RefusalDetail, ...] = ("full", "layer", "minimal")
MAX_MISSES = 256  # refusals kept per registry (a name is at most 256 characters)


@dataclass(frozen=True)
class CallError:
    """A call that cannot run: unknown ("unknown"), removed by policy ("refused"), or with
    arguments the tool's schema refuses ("arguments"; `problems` says where: each a JSON
    pointer into the arguments and a message)."""

    tool: str
    message: str
    removal: RemovedTool | None = None
    fix: str | None = None
    kind: Literal["unknown", "refused", "arguments"] = "unknown"
    problems: tuple[ArgumentProblem, ...] = ()

    def to_result(self, detail: RefusalDetail = "full") -> dict[str, Any]:
        """What the model reads. `full`: the policy's whole explanation (layer, entry, file
        position, fix); `layer`: the layer and the tool; `minimal`: only that it is not
        available. Provenance for operators is `provenance()`, whatever the level."""
        out: dict[str, Any] = {"status": "error", "tool": self.tool}
        if self.removal is None or detail == "full":
            out["error"] = self.message
        elif detail == "layer":
            out["error"] = (
                f'tool "{self.tool}" is not available in this run: removed at {self.layer}'
            )
        else:
            out["error"] = f'tool "{self.tool}" is not available in this run'
        if self.removal is not None and detail != "minimal":
            out["removedBy"] = {"stage": self.removal.stage, "label": self.removal.label}
            if detail == "full":
                out["removedBy"].update(
                    {
                        "kind": self.removal.kind,
                        "entry": self.removal.entry,
                        "source": str(self.removal.source) if self.removal.source else None,
                    }
                )
        if self.fix and detail == "full":
            out["fix"] = self.fix
        if self.problems:
            out["problems"] = [p.to_json() for p in self.problems]
        return out

    @property
    def layer(self) -> str:
        if self.removal is None:
            return "(no layer)"
        where = "construction" if self.removal.stage == 0 else f"layer {self.removal.stage}"
        return f"{where} ({self.removal.label})"

    def provenance(self) -> dict[str, Any]:
        """Everything the policy knows about the refusal: for the log and observers."""
        out = self.to_result("full")
        if self.removal is not None:
            out["removedBy"] = self.removal.to_json()
        return out


@dataclass(frozen=True)
class PreparedCall:
    tool: RuntimeTool
    arguments: dict[str, Any]


class ToolRegistry:
    def __init__(self, tools: list[RuntimeTool] | None = None) -> None:
        self._tools: dict[str, RuntimeTool] = {}
        #: an MCP tool-name prefix -> the server holding it and how many of its tools
        self._server_parts: dict[str, tuple[str, int]] = {}
        #: each registered tool as the inventory sees it, in registration order
        self._inventory_tools: dict[str, Tool] = {}
        self._version = 0
        #: (catalog, inventory) of the current registry version
        self._inventory: tuple[Any, Inventory] | None = None
        self._definitions: dict[tuple[int, int, str], tuple[Resolution, list[dict[str, Any]]]] = {}
        # refusals of a name a run does not have, per (version, resolution, name): a model that
        # repeats a refused call must not pay the policy's explanation each time
        self._misses: dict[tuple[int, int, str], tuple[Resolution, CallError]] = {}
        for t in tools or ():
            self.register(t)

    # -- what exists -------------------------------------------------------------------------

    def register(self, tool: RuntimeTool, *, replace: bool = False) -> None:
        problem = (
            ascii_problem(tool.name)
            if tool.name == fold(tool.name)
            else "not lowercase and trimmed"
        )
        if problem:
            # the policy matches normalised ASCII names; any other name could never be allowed
            raise ValueError(f"tool name {tool.name!r}: {problem}")
        mcp = tool.plugin_id is not None and marks_mcp(tool.plugin_id)
        if mcp and not is_mcp_tool(tool):
            # `allow: [bundle-mcp]` grants every MCP tool: a marker written into a plugin's
            # tool (a subclass, `object.__setattr__`, a copy) must not ride on it
            raise ValueError(
                f"tool {tool.name!r} carries the MCP plugin id {tool.plugin_id!r} but was not "
                "made by policyctl.runtime.mcp (mcp_tools, as_mcp_tool): refused (PC313)"
            )
        if tool.name in self._tools and not replace:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        replaced = self._tools.get(tool.name)
        server = tool.meta.get("mcp_server") if mcp else None
        if isinstance(server, str):
            self._check_server_part(server, replaced)
        self._release_server_part(replaced)
        if isinstance(server, str):
            owner, count = self._server_parts.get(mcp_server_part(server), (server, 0))
            self._server_parts[mcp_server_part(server)] = (owner, count + 1)
        self._tools[tool.name] = tool
        # made once per registration: inventory() only lists these (tools are interned, so an
        # equal tool registered again, after an MCP reconnect, is the same object)
        self._inventory_tools[tool.name] = (
            Tool.mcp(tool.name, tool.optional)
            if mcp
            else Tool(tool.name, tool.plugin_id, tool.optional)
        )
        self._changed()

    def _check_server_part(self, server: str, replaced: RuntimeTool | None) -> None:
        """Refuse a second MCP server whose tool names start with another's `<server>__`
        (a cut at 30 characters, case, unsafe characters): one server's `<server>__*` rule
        would match the other's tools (PC322). Replacing the other server's last tool frees
        its prefix."""
        part = mcp_server_part(server)
        held = self._server_parts.get(part)
        if held is None or held[0] == server:
            return
        theirs = replaced.meta.get("mcp_server") if replaced is not None else None
        if held[1] == 1 and theirs == held[0]:
            return
        raise ValueError(
            f"MCP server {server!r} makes the tool names {part}__*, as server {held[0]!r} "
            "does: one server's rules would match the other's tools (PC322); rename one of them"
        )

    def _release_server_part(self, tool: RuntimeTool | None) -> None:
        server = tool.meta.get("mcp_server") if tool is not None else None
        if not isinstance(server, str):
            return
        part = mcp_server_part(server)
        owner, count = self._server_parts.get(part, (server, 1))
        if count <= 1:
            self._server_parts.pop(part, None)
        else:
            self._server_parts[part] = (owner, count - 1)

    def unregister(self, name: str) -> None:
        self._release_server_part(self._tools.get(name))
        if self._tools.pop(name, None) is not None:
            del self._inventory_tools[name]
            self._changed()

    def _changed(self) -> None:
        self._version += 1
        self._inventory = None
        self._definitions.clear()
        self._misses.clear()

    def get(self, name: str) -> RuntimeTool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def allows(self, name: str, resolution: Resolution) -> bool:
        """Whether the tool registered as `name` is the one `resolution` allows (by identity)."""
        tool = self._inventory_tools.get(name)
        return tool is not None and resolution.allows(tool)

    def inventory(self, catalog: Any) -> Inventory:
        """The registered tools as the inventory a resolve runs against (built once per change)."""
        found = self._inventory
        if found is None or found[0] is not catalog:
            # tools of the same content are the same interned objects: a registry rebuilt
            # with the same tools (an MCP reconnect) finds the inventory already built
            found = (catalog, Inventory.of(self._inventory_tools.values(), catalog))
            self._inventory = found
        return found[1]

    # -- what a run exposes ------------------------------------------------------------------

    def exposed(self, resolution: Resolution) -> list[RuntimeTool]:
        # by identity: a tool registered under an allowed name since the resolve is not shown
        tools = self._inventory_tools
        allowed = [
            self._tools[n] for n in resolution.allowed if n in tools and resolution.allows(tools[n])
        ]
        return sorted(allowed, key=lambda t: (t.plugin_id is not None, t.name))

    def definitions(
        self, resolution: Resolution, fmt: Literal["openai", "anthropic"] = "openai"
    ) -> list[dict[str, Any]]:
        key = (self._version, id(resolution), fmt)
        cached = self._definitions.get(key)
        if cached is not None and cached[0] is resolution:
            return cached[1]
        defs = [t.to_schema(fmt) for t in self.exposed(resolution)]
        if len(self._definitions) > 256:
            self._definitions.clear()
        self._misses.clear()
        self._definitions[key] = (resolution, defs)
        return defs

    # -- preparing a call --------------------------------------------------------------------

    def prepare_call(
        self, name: str, raw_arguments: Any, resolution: Resolution
    ) -> PreparedCall | CallError:
        tool = self._tools.get(name)
        # the registered tool itself, not its name: one replaced since the resolve is refused
        if tool is None or not resolution.allows(self._inventory_tools[name]):
            return self._miss(name, resolution)
        try:
            return PreparedCall(
                tool, coerce_arguments(raw_arguments, tool.checked_schema, accept=tool.accept)
            )
        except ArgumentError as exc:
            message = f"invalid arguments for {name}: {exc}"
            return CallError(name, message, kind="arguments", problems=exc.problems)

    def _miss(self, name: str, resolution: Resolution) -> CallError:
        key = (self._version, id(resolution), name)
        cached = self._misses.get(key)
        if cached is not None and cached[0] is resolution:
            return cached[1]
        error = self._explain_miss(name, resolution)
        if len(self._misses) >= MAX_MISSES:  # names are the model's: bounded, whatever it sends
            self._misses.clear()
        self._misses[key] = (resolution, error)
        return error

    def _explain_miss(self, name: str, resolution: Resolution) -> CallError:
        if name in self._tools and resolution.is_allowed(name):
            return _swapped(name, self._inventory_tools[name], resolution)
        available = [t.name for t in self.exposed(resolution)]
        decision = decide_tool(resolution, name)
        if decision.removal is not None:
            refusal = sandbox_refusal(resolution, decision.tool)
            layer = (
                "construction" if decision.removal.stage == 0 else f"layer {decision.removal.stage}"
            )
            message = refusal or (
                f'tool "{name}" is not available in this run: removed at {layer} '
                f"({decision.removal.label})"
            )
            return CallError(name, message, decision.removal, decision.fix, "refused")
        wanted = _ALNUM.sub("", name.lower())
        close = [t for t in available if _ALNUM.sub("", t.lower()) == wanted]
        hint = f' Did you mean "{close[0]}"?' if len(close) == 1 else ""
        shown = ", ".join(available[:40]) + (" ..." if len(available) > 40 else "")
        return CallError(
            name, f'tool "{name}" does not exist.{hint} Available: {shown or "(none)"}'
        )


def _swapped(name: str, now: Tool, resolution: Resolution) -> CallError:
    """The name was allowed for another tool: this one was registered after the resolve."""
    was = next((t for t in resolution.inventory.tools if t.name == name), None)

    def who(t: Tool | None) -> str:
        if t is None or t.plugin_id is None:
            return "a core tool"
        return f"plugin {t.plugin_id}" + (", optional" if t.optional else "")

    return CallError(
        name,
        f'tool "{name}" changed since this run was resolved (resolved for {who(was)}, now '
        f"{who(now)}): refused; the next run decides it afresh",
        fix="start a new run so the policy decides the tool now registered under this name",
        kind="refused",
    )
