"""policyctl's decision inside the real nanobot agent loop.

nanobot (PyPI `nanobot-ai`) keeps its tools in `ToolRegistry`: `get_definitions()` is the tool
list sent to the model, and `prepare_call(name, params)` resolves, casts and validates every
call before it runs (its runner sends the third element of the answer back to the model as a
tool error). Those two methods are where the policy goes:

- `get_definitions` keeps the tools the run's resolution allows, so a removed tool is never
  offered to the model;
- `prepare_call` lets nanobot cast and validate first, then decides the call on the arguments
  the tool will really receive: a tool the run does not have, a call a rule denies, and an
  `ask` nobody approved come back as a refusal naming the rule, the layer and (at detail
  `full`) the file and line. Any failure of policyctl is a refusal too (fail closed).

The methods are replaced on the class, not on one registry: nanobot builds fresh registries
for subagents (`SubagentManager._build_tools`) and for sessions with disabled tools, and a
per-object patch would be lost there. A subagent's registry is marked where nanobot builds it,
and its calls are decided as the child run of the request's run (semantics 7.7, 7.8).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...callrules.model import Effect
from ...catalog.inventory import Inventory, Tool
from ...context import RunContext
from ...explain.refusal import how_decided, refusal_reason
from ...names import mcp_tool_name
from ...pipeline.lineage import child_context
from ...pipeline.resolve import resolve
from ...pipeline.result import NoCallableToolsError, Resolution
from .context import RunFacts, run_context

if TYPE_CHECKING:
    from ...compile.compiled import CompiledPolicy

#: the plugin id of a nanobot tool the policy's catalog does not name (a tool plugin)
PLUGIN_ID = "nanobot-plugins"
#: the attribute that marks a registry nanobot built for a subagent
SUBAGENT_MARK = "_policyctl_subagent"
#: the workspace nanobot built a subagent's registry for (its request does not carry one)
WORKSPACE_MARK = "_policyctl_workspace"
_CHILD_ID = "nanobot"  # one child id: nanobot's subagents share their parent's rules


class LivePolicy(Protocol):
    """What a hot-reloading source gives (`runtime.PolicyStore`): its current policy."""

    @property
    def current(self) -> CompiledPolicy | None: ...


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approver is asked: the tool, the arguments it will receive, and why."""

    tool: str
    arguments: Mapping[str, Any]
    reason: str
    context: RunContext


Approve = Callable[[ApprovalRequest], bool]


class NanobotPolicy:
    """A policy enforced in every nanobot agent loop of this process while installed.

    `policy` is a compiled policy, a `PolicyStore` (hot reload: the current policy is read on
    every decision; none loaded means every call is refused), or a path to load once.
    `approve`, when given, settles `ask` decisions synchronously (nanobot's `prepare_call` is
    not a coroutine); without it an `ask` is refused as needing approval.
    """

    def __init__(
        self,
        policy: CompiledPolicy | LivePolicy | str | Path,
        *,
        agent: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        owners: frozenset[str] | set[str] | tuple[str, ...] = (),
        home: str | None = None,
        refusal_detail: str = "layer",
        approve: Approve | None = None,
    ) -> None:
        if isinstance(policy, (str, Path)):
            from ...api import load_policy

            policy = load_policy(policy)
        self._source = policy
        self.facts = RunFacts(agent, provider, model, frozenset(owners), home)
        self.refusal_detail = refusal_detail
        self.approve = approve
        self._installed: dict[str, Any] = {}
        self._lock = threading.Lock()

    # -- the policy ------------------------------------------------------------------------

    def _policy(self) -> CompiledPolicy | None:
        source = self._source
        current = getattr(source, "current", None)
        if current is not None or not hasattr(source, "catalog"):
            return current  # a store: its live policy (None until one has loaded)
        return source  # type: ignore[return-value]

    def policy_name(self, tool: Any, taken: tuple[str, ...] = ()) -> Tool:
        """The policyctl tool a nanobot tool is: MCP tools by policyctl's MCP naming
        (`server__tool`), tools the catalog does not name as plugin tools."""
        server = getattr(tool, "_server_name", None)
        original = getattr(tool, "_original_name", None)
        if isinstance(server, str) and isinstance(original, str):
            return Tool.mcp(mcp_tool_name(server, original, taken))
        policy = self._policy()
        name = str(tool.name)
        if policy is not None and name in policy.catalog.tool_ids:
            return Tool(name)
        return Tool(name, PLUGIN_ID)

    def inventory(self, registry: Any, policy: CompiledPolicy) -> tuple[Inventory, dict[str, Tool]]:
        mapping: dict[str, Tool] = {}
        taken: list[str] = []
        for name in registry.tool_names:
            mapped = self.policy_name(registry.get(name), tuple(taken))
            mapping[name] = mapped
            taken.append(mapped.name)
        return Inventory.of(mapping.values(), policy.catalog), mapping

    def resolution(self, registry: Any) -> tuple[Resolution, dict[str, Tool], RunContext] | None:
        """The resolution of the run nanobot is serving now, over this registry's tools; None
        when there is no policy (every tool is then withheld)."""
        policy = self._policy()
        if policy is None:
            return None
        from nanobot.agent.tools.context import current_request_context

        inventory, mapping = self.inventory(registry, policy)
        context = run_context(current_request_context(), self.facts)
        built_for = getattr(registry, WORKSPACE_MARK, None)
        if context.workspace is None and built_for is not None:
            # nanobot binds a subagent's request without a workspace: its tools' is the one
            context = replace(context, workspace=built_for)
        if getattr(registry, SUBAGENT_MARK, False):
            parent = resolve(policy, context, require_tools=False)
            context = child_context(context, parent, _CHILD_ID)
        return resolve(policy, context, inventory, require_tools=False), mapping, context

    # -- the two decisions -----------------------------------------------------------------

    def offered(self, registry: Any, definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tool definitions the model may see."""
        try:
            found = self.resolution(registry)
        except NoCallableToolsError:
            return []
        if found is None:
            return []
        resolution, mapping, _ = found
        return [
            d
            for d in definitions
            if (tool := mapping.get(_schema_name(d))) is not None and resolution.allows(tool)
        ]

    def refusal(self, registry: Any, name: str, params: Mapping[str, Any]) -> str | None:
        """None when the call may run, else the text the model reads."""
        found = self.resolution(registry)
        if found is None:
            return f"call of {name} refused: no policy is loaded (policyctl fails closed)"
        resolution, mapping, context = found
        tool = mapping.get(name)
        if tool is None or not resolution.allows(tool):
            return _removed(name, tool, resolution, self.refusal_detail)
        decision = resolution.decide_call(tool.name, params)
        verdict = decision.verdict
        if decision.effect is Effect.DENY:
            return refusal_reason(name, verdict, self.refusal_detail)
        if decision.effect is Effect.ASK:
            why = f"call of {name} needs approval: {how_decided(verdict)}"
            if self.approve is not None and self.approve(
                ApprovalRequest(name, dict(params), why, context)
            ):
                return None
            if self.refusal_detail == "minimal":
                return f"this call of {name} needs approval, and this run has no approver"
            return f"{why}. Nobody approved it, so it is refused."
        return None

    # -- installing ------------------------------------------------------------------------

    def install(self) -> NanobotPolicy:
        """Enforce this policy in every nanobot registry of the process (one policy at a time)."""
        from nanobot.agent.subagent import SubagentManager
        from nanobot.agent.tools.base import ToolResult
        from nanobot.agent.tools.registry import ToolRegistry

        with _active_lock:
            if _active:
                raise RuntimeError("a policyctl policy is already installed in nanobot")
            original_defs = ToolRegistry.get_definitions
            original_prepare = ToolRegistry.prepare_call
            original_build = SubagentManager._build_tools
            guard = self

            def get_definitions(registry: Any) -> list[dict[str, Any]]:
                return guard.offered(registry, original_defs(registry))

            def prepare_call(registry: Any, name: str, params: Any) -> tuple[Any, Any, Any]:
                tool, cast, error = original_prepare(registry, name, params)
                if error:
                    return tool, cast, error
                try:
                    refused = guard.refusal(registry, name, cast)
                except Exception as exc:  # fail closed: a call policyctl cannot decide is refused
                    failure = type(exc).__name__
                    refused = f"call of {name} refused: the policy could not decide it ({failure})"
                if refused is not None:
                    return tool, cast, ToolResult.error(f"Error: {refused}")
                return tool, cast, None

            def build_tools(manager: Any, *args: Any, **kwargs: Any) -> Any:
                registry = original_build(manager, *args, **kwargs)
                setattr(registry, SUBAGENT_MARK, True)
                root = kwargs.get("workspace", args[0] if args else None) or manager.workspace
                setattr(registry, WORKSPACE_MARK, str(Path(root).resolve()))
                return registry

            ToolRegistry.get_definitions = get_definitions
            ToolRegistry.prepare_call = prepare_call
            SubagentManager._build_tools = build_tools
            self._installed = {
                "defs": original_defs,
                "prepare": original_prepare,
                "build": original_build,
            }
            _active.append(self)
        return self

    def uninstall(self) -> None:
        from nanobot.agent.subagent import SubagentManager
        from nanobot.agent.tools.registry import ToolRegistry

        with _active_lock:
            if self not in _active:
                return
            ToolRegistry.get_definitions = self._installed["defs"]
            ToolRegistry.prepare_call = self._installed["prepare"]
            SubagentManager._build_tools = self._installed["build"]
            _active.remove(self)

    def __enter__(self) -> NanobotPolicy:
        return self.install()

    def __exit__(self, *_: object) -> None:
        self.uninstall()


_active: list[NanobotPolicy] = []
_active_lock = threading.Lock()


def _schema_name(definition: Mapping[str, Any]) -> str:
    function = definition.get("function")
    if isinstance(function, Mapping) and isinstance(function.get("name"), str):
        return str(function["name"])
    name = definition.get("name")
    return name if isinstance(name, str) else ""


def _removed(name: str, tool: Tool | None, resolution: Resolution, detail: str) -> str:
    """Why a tool the model called is not in this run."""
    if detail == "minimal" or tool is None:
        return f"tool {name} is not available in this run"
    removal = resolution.removal(tool.name)
    if removal is None:
        return f"tool {name} is not available in this run"
    text = f"tool {name} is not available in this run: removed at {removal.label}"
    if removal.entry:
        text += f' by "{removal.entry}"'
    if detail == "full" and removal.source is not None:
        src = removal.source
        text += f" ({src.file}:{src.line}:{src.column})"
    return text
