"""Explain: why one tool is allowed or removed in a run, and what to edit to change that.

A renderer over `Resolution`, never a second pipeline: the CLI's `explain`, the runtime's
refusal messages and the sandbox refusal text all come from here. The trail records only the
first layer that removed a tool; `decide_tool` also asks every later applied layer, with the
same single-tool rule (`decide`), so its fix names every edit the tool needs, not just the first.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..compile.entries import PLUGINS_GROUP, Entry, build_list
from ..diagnostics import did_you_mean
from ..located import list_path
from ..names import fold, is_glob, normalize
from ..pipeline.match import decide
from ..pipeline.result import RemovedTool, Resolution, record, removal_label

if TYPE_CHECKING:
    from ..compile.compiled import CompiledPolicy, ToolsScope
    from ..compile.layers import LayerPlan, LayerPolicy


@dataclass(frozen=True, slots=True)
class ToolDecision:
    tool: str
    allowed: bool
    known: bool
    #: the first removal (the one the run's trail shows)
    removal: RemovedTool | None
    #: one text that, applied whole, makes the tool allowed (or says why nothing can)
    fix: str | None
    #: every step that removes the tool, in pipeline order (the trail shows only the first)
    blockers: tuple[RemovedTool, ...] = ()
    #: the fix of each blocker, in the same order
    fixes: tuple[str, ...] = ()
    #: the name as asked, when an alias or the case changed it (`bash` -> `exec`)
    asked: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "tool": self.tool,
            "allowed": self.allowed,
            "inInventory": self.known,
            "removed": self.removal.to_json() if self.removal else None,
            "blockers": [b.to_json() for b in self.blockers],
            "fixes": list(self.fixes),
            "fix": self.fix,
        }


def fix_for(
    removal: RemovedTool,
    policy: CompiledPolicy | None = None,
    resolution: Resolution | None = None,
) -> str:
    """The edit that stops this removal. With the policy and the run's resolution it names the
    exact key the layer reads (the agent's alsoAllow or the global one, and so on)."""
    tool = removal.tool
    agent = resolution.context.agent if resolution is not None else None
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
    if removal.stage == 9:
        return _sandbox_fix(removal, resolution)
    if removal.kind == "deny":
        via = f" (it expands to {tool})" if removal.expanded_from else ""
        where = f" at {removal.source}" if removal.source else ""
        written = removal.written_as or removal.entry
        return f'remove "{written}"{via} from {list_path(removal.scope)}{where}'
    target = list_path(removal.scope)
    if removal.stage in (1, 2):
        return _profile_fix(removal, policy, agent)
    return f'add "{tool}" to {target}' + (f" at {removal.source}" if removal.source else "")


def _profile_fix(removal: RemovedTool, policy: CompiledPolicy | None, agent: str | None) -> str:
    """Widen a profile through the alsoAllow that the profile layer reads: the agent's when it
    has one, else the global one (semantics 7.1). A scope that also sets a non-empty `allow`
    cannot take alsoAllow (PC303); its allow list restricts it already, so there the fix is to
    drop the profile."""
    tool, target = removal.tool, list_path(removal.scope)
    if removal.stage == 2:
        return (
            f'add "{tool}" to the alsoAllow of {target.removesuffix(".profile")}, '
            "or choose a provider profile that includes it"
        )
    # the scope that sets the profile restricts itself with its own allow: drop the profile
    owner = _tools_scope(policy, target.removesuffix(".profile"))
    own_allow = owner.policy.allow if owner is not None and owner.policy is not None else None
    if own_allow is not None and own_allow.key.endswith(".allow") and not own_allow.empty:
        return (
            f"remove {target} (or set it to full): {own_allow.key} already restricts the scope, "
            f'and the profile removes "{tool}" before that list is read'
        )
    scope = _also_allow_owner(policy, agent)
    if scope is None:
        return (
            f'add "{tool}" to the alsoAllow of the scope that sets {target}, '
            "or choose a profile that includes it"
        )
    allow = scope.policy.allow if scope.policy is not None else None
    if allow is not None and allow.key.endswith(".allow") and not allow.empty:
        return (
            f"remove {target} (or set it to full): {allow.key} already restricts the scope, "
            f'and the profile removes "{tool}" before that list is read'
        )
    return (
        f'add "{tool}" to {scope.name}.alsoAllow (the profile set at {target} does not '
        "include it), or choose a profile that includes it"
    )


def _tools_scope(policy: CompiledPolicy | None, name: str) -> ToolsScope | None:
    """The global or an agent's tools scope, by its config path (`agents.entries.a.tools`)."""
    if policy is None:
        return None
    if name == policy.global_tools.name:
        return policy.global_tools
    for agent in policy.agents.values():
        if agent.tools is not None and agent.tools.name == name:
            return agent.tools
    return None


def _also_allow_owner(policy: CompiledPolicy | None, agent: str | None) -> ToolsScope | None:
    if policy is None:
        return None
    entry = policy.agents.get(agent) if agent is not None else None
    if entry is not None and entry.tools is not None and entry.tools.also_allow is not None:
        return entry.tools
    return policy.global_tools


# -- sandbox (semantics 9): one fix per reason, naming keys that exist or saying they do not --


def _sandbox_scope(removal: RemovedTool) -> str:
    """`agents.entries.a.tools.sandbox.tools` or `tools.sandbox.tools`: where the lists live."""
    for key in (removal.scope, list_path(removal.scope)):
        cut = key.find("sandbox.tools")
        if cut >= 0:
            return key[: cut + len("sandbox.tools")]
    return "tools.sandbox.tools"


def _lift_key(resolution: Resolution | None) -> str | None:
    """The list whose entries lift a tool out of the sandbox's default deny in this run: the
    allow list the layer reads (its configured allow, else the alsoAllow it reads)."""
    plan = resolution.plans[8] if resolution is not None else None
    lp = plan.policy if plan is not None and plan.stage == 9 else None
    if lp is None:
        return None
    if lp.allow is not None:
        return lp.allow.key
    return f"{lp.scope}.alsoAllow"


def _sandbox_fix(removal: RemovedTool, resolution: Resolution | None = None) -> str:
    tool, scope = removal.tool, _sandbox_scope(removal)
    if removal.kind == "deny" and removal.origin == "config":
        return f'Remove "{removal.written_as or tool}" from {list_path(removal.scope)}.'
    if removal.kind == "deny":
        key = _lift_key(resolution) or f"{scope}.alsoAllow"
        return (
            f'Add "{tool}" to {key}: {tool} is on the catalog\'s default sandbox deny list '
            "(no sandbox deny list is configured), and an allow entry lifts it."
        )
    key = list_path(removal.scope)
    if key.endswith(".alsoAllow"):
        new = "" if removal.source else " (a new key: the allow list is the catalog default)"
        return f'Add "{tool}" to {key}{new} (or set {scope}.allow to [] to allow all).'

    return f'Add "{tool}" to {key} (or set it to [] to allow all).'


# -- every blocker ----------------------------------------------------------------------------


def _all_deny_hits(
    name: str, plugin_id: str | None, lp: LayerPolicy, policy: CompiledPolicy
) -> list[Entry]:
    """Every entry of a deny list that removes the tool on its own: removing only the first
    would leave the next one in force."""
    cat = policy.catalog
    deny = lp.deny
    if deny is None:
        return []
    out = []
    literals = {name, plugin_id, *cat.deny_implies.get(name, ())}
    for entry in deny.entries:
        text = entry.text
        # only these can match on their own (a deny list may be long: skip the rest cheaply)
        if not (
            text in literals
            or is_glob(text)
            or text in cat.groups
            or text in cat.covers
            or text == PLUGINS_GROUP
        ):
            continue
        alone = build_list(deny.key, deny.source, [entry], cat.groups, cat.covers)
        if alone.match(name, plugin_id) is not None or any(
            alone.match(src) is not None for src in cat.deny_implies.get(name, ())
        ):
            out.append(entry)
    return out


def _layer_blockers(
    name: str, plugin_id: str | None, plan: LayerPlan, policy: CompiledPolicy
) -> list[RemovedTool]:
    lp = plan.policy
    if lp is None:
        return []
    verdict = decide(name, plugin_id, lp, policy.catalog)
    if verdict is None:
        return []
    kind, hit = verdict
    first = record(name, plan, lp, kind, hit)
    if kind != "deny":
        return [first]
    others = [e for e in _all_deny_hits(name, plugin_id, lp, policy) if hit and e != hit.entry]
    extra = [
        RemovedTool(
            name,
            plan.stage,
            removal_label(plan, "deny", e),
            "deny",
            e.text,
            None,
            e.source,
            e.key,
            e.raw,
            e.origin,
        )
        for e in others
    ]
    # with the deny gone, the same layer's allow list may still leave the tool out (not for
    # the sandbox's default deny: the alsoAllow entry that lifts it also extends the allow)
    allow_only = replace(lp, deny=None)
    still = decide(name, plugin_id, allow_only, policy.catalog)
    lifted_by_also_allow = plan.stage == 9 and first.origin == "catalog"
    if still is not None and not lifted_by_also_allow:
        extra.append(record(name, plan, allow_only, still[0], still[1]))
    return [first, *extra]


def blockers_of(resolution: Resolution, name: str, policy: CompiledPolicy) -> list[RemovedTool]:
    """Every construction filter and every applied layer that removes `name`, in order."""
    tool = next((t for t in resolution.inventory.tools if t.name == name), None)
    if tool is None:
        return []
    out: list[RemovedTool] = []
    first = resolution.removal(name)
    if first is not None and first.stage == 0:
        out.append(first)
    for plan in resolution.plans:
        out.extend(_layer_blockers(name, tool.plugin_id, plan, policy))
    return out


def _combined_fix(fixes: list[str]) -> str | None:
    unique = list(dict.fromkeys(fixes))
    if len(unique) <= 1:
        return unique[0] if unique else None
    steps = "; ".join(f"({i}) {f}" for i, f in enumerate(unique, 1))
    return f"{len(unique)} edits are needed, all of them: {steps}"


def decide_tool(
    resolution: Resolution, tool: str, policy: CompiledPolicy | None = None
) -> ToolDecision:
    policy = policy if policy is not None else resolution.policy
    aliases = policy.catalog.aliases if policy is not None else {}
    name = normalize(tool, aliases) or fold(tool)
    asked = tool if name != tool else None
    known = name in resolution.inventory.names
    if name in resolution.allowed:
        return ToolDecision(name, True, True, None, None, asked=asked)
    removal = resolution.removal(name)
    if removal is None:
        near = did_you_mean(name, [*resolution.inventory.names, *aliases])
        hint = f'; did you mean "{aliases.get(near, near)}"?' if near else ""
        return ToolDecision(
            name,
            False,
            known,
            None,
            f"{name} is not in this run's inventory: no tool of that name exists{hint}",
            asked=asked,
        )
    blockers = blockers_of(resolution, name, policy) if policy is not None else []
    if not blockers or blockers[0] != removal:
        blockers = [removal, *(b for b in blockers if b != removal)]
    fixes = [fix_for(b, policy, resolution) for b in blockers]
    return ToolDecision(
        name,
        False,
        True,
        removal,
        _combined_fix(fixes),
        tuple(blockers),
        tuple(dict.fromkeys(fixes)),
        asked,
    )


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


def _mode_key(resolution: Resolution, policy: CompiledPolicy | None) -> str:
    """The key that sets this run's sandbox mode: the agent's own, else the defaults'."""
    agent = resolution.context.agent
    if policy is not None and agent is not None:
        entry = policy.agents.get(agent)
        if entry is not None and entry.sandbox_mode is not None:
            return f"agents.entries.{agent}.sandbox.mode"
    return "agents.defaults.sandbox.mode"


def explain_command(resolution: Resolution, tool: str) -> str:
    """The `policyctl explain` line that reproduces this run: the session key when there is
    one, else the context flags that decided it (never an empty placeholder)."""
    ctx = resolution.context
    flags: list[str] = []
    if ctx.session_key:
        flags += ["--session-key", ctx.session_key]
    else:
        for flag, value in (
            ("--agent", ctx.agent),
            ("--channel", ctx.channel),
            ("--account", ctx.account),
            ("--group", ctx.group),
        ):
            if value:
                flags += [flag, value]
    if ctx.provider:
        flags += ["--provider", ctx.provider]
    return " ".join(["policyctl explain POLICY", *flags, "--tool", tool, "--trail"])


def sandbox_refusal(
    resolution: Resolution, tool: str, policy: CompiledPolicy | None = None
) -> str | None:
    """Semantics 9: the refusal a sandboxed run reads when it calls a tool the sandbox removed."""
    policy = policy if policy is not None else resolution.policy
    aliases = policy.catalog.aliases if policy is not None else {}
    r = resolution.removal(normalize(tool, aliases) or fold(tool))
    ctx = resolution.context
    if r is None or r.stage != 9:
        return None
    lines = [
        f'Tool "{r.tool}" blocked by sandbox tool policy (mode={ctx.sandbox_mode}).',
        f"Session: {_shorten(ctx.session_key) if ctx.session_key else '(none: a group session)'}",
        f"Reason: {'deny list' if r.kind == 'deny' else 'allow list'}",
        "Fix:",
        f"- {_mode_key(resolution, policy)}=off (disable sandbox)",
        f"- {_sandbox_fix(r, resolution)}",
    ]
    if ctx.sandbox_mode == "non-main":
        lines.append("- Use the agent main session instead of a non-main session.")
    lines.append(f"Explain: {explain_command(resolution, r.tool)}")
    return "\n".join(lines)
