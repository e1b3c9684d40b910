"""Explain: why one tool is allowed or removed in a run, and what to edit to change that.

A renderer over `Resolution`, never a second pipeline: the CLI's `explain`, the runtime's
refusal messages and the sandbox refusal text all come from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .located import list_path
from .resolve import RemovedTool, Resolution


@dataclass(frozen=True, slots=True)
class ToolDecision:
    tool: str
    allowed: bool
    known: bool
    removal: RemovedTool | None
    fix: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "tool": self.tool,
            "allowed": self.allowed,
            "inInventory": self.known,
            "removed": self.removal.to_json() if self.removal else None,
            "fix": self.fix,
        }


def fix_for(removal: RemovedTool) -> str:
    tool = removal.tool
    if removal.kind == "owner-only":
        return f"{tool} is owner-only: only runs whose sender is the owner get it"
    if removal.kind == "optional-plugin":
        return (
            f'{tool} is an optional plugin tool: name "{tool}", its plugin id or '
            '"group:plugins" in an allow list that applies to this run'
        )
    if removal.kind == "catalog":
        return f"{tool} exists only for some providers ({removal.scope})"
    if removal.stage == 11:
        return (
            f"the parent run (or the job's creator) did not have {tool}; a child never exceeds it"
        )
    if removal.origin == "catalog" and removal.stage == 10:
        return (
            f"{tool} is on the catalog's subagent deny list, which configuration cannot lift; "
            "run it from the main session"
        )
    if removal.origin == "catalog" and removal.stage == 9:
        return (
            f'{tool} is on the sandbox default deny list: add "{tool}" to '
            "tools.sandbox.tools.alsoAllow to lift it, or run unsandboxed"
        )
    if removal.kind == "deny":
        via = f" (it expands to {tool})" if removal.expanded_from else ""
        where = f" at {removal.source}" if removal.source else ""
        written = removal.written_as or removal.entry
        return f'remove "{written}"{via} from {list_path(removal.scope)}{where}'
    target = list_path(removal.scope)
    if removal.stage in (1, 2):
        return (
            f'add "{tool}" to the alsoAllow of the scope that sets {target}, '
            "or choose a profile that includes it"
        )
    return f'add "{tool}" to {target}' + (f" at {removal.source}" if removal.source else "")


def decide_tool(resolution: Resolution, tool: str) -> ToolDecision:
    name = tool.strip().lower()
    known = name in resolution.inventory.names
    if name in resolution.allowed:
        return ToolDecision(name, True, True, None, None)
    removal = resolution.removal(name)
    if removal is None:
        return ToolDecision(
            name,
            False,
            known,
            None,
            f"{name} is not in this run's inventory: no tool of that name exists",
        )
    return ToolDecision(name, False, True, removal, fix_for(removal))


def summary_line(r: RemovedTool) -> str:
    """One line under a layer heading: the tool and the rule, without repeating the layer."""
    where = f" ({r.source})" if r.source else ""
    if r.kind == "deny" and r.entry:
        via = f" (from {r.expanded_from})" if r.expanded_from and r.expanded_from != r.entry else ""
        return f'{r.tool}: denied by "{r.entry}"{via}{where}'
    if r.kind == "allow":
        return f"{r.tool}: not in the allow list{where}"
    return f"{r.tool}: {r.kind}"


def _shorten(key: str) -> str:
    return key if len(key) <= 14 else f"{key[:6]}…{key[-6:]}"


def sandbox_refusal(resolution: Resolution, tool: str) -> str | None:
    """Semantics 9: the refusal a sandboxed run reads when it calls a tool the sandbox removed."""
    r = resolution.removal(tool.strip().lower())
    ctx = resolution.context
    if r is None or r.stage != 9:
        return None
    lines = [
        f'Tool "{r.tool}" blocked by sandbox tool policy (mode={ctx.sandbox_mode}).',
        f"Session: {_shorten(ctx.session_key or '')}",
        f"Reason: {'deny list' if r.kind == 'deny' else 'allow list'}",
        "Fix:",
        "- agents.defaults.sandbox.mode=off (disable sandbox)",
    ]
    if r.kind == "deny":
        deny_key = list_path(r.scope) if r.origin == "config" else "tools.sandbox.tools.deny"
        lines.append(f'- Remove "{r.tool}" from {deny_key}.')
    else:
        allow_key = list_path(r.scope).removesuffix(".alsoAllow").removesuffix(".allow") + ".allow"
        lines.append(f'- Add "{r.tool}" to {allow_key} (or set it to [] to allow all).')
    if ctx.sandbox_mode == "non-main":
        lines.append("- Use the agent main session instead of a non-main session.")
    session = ctx.session_key or ""
    lines.append(
        f"Explain: policyctl explain POLICY --session-key {session} --tool {r.tool} --trail"
    )
    return "\n".join(lines)
