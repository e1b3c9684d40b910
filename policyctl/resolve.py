"""Resolve: CompiledPolicy + context + inventory -> Resolution, with the full audit trail.

Construction filters run first (stage 0), then the eleven layers of `layers.plan_layers`, each
applied to what is still in the list. A removal is recorded with its stage, label, rule kind,
the entry that decided it, what that entry expanded from and where it is written, so `explain`
is a renderer of this value and never a second implementation of the pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .catalog import Catalog
from .compile import CompiledPolicy, LayerPolicy
from .context import Capture, RunContext
from .diagnostics import Diagnostic, Source
from .entries import Entry, Hit, build_list
from .inventory import MCP_PLUGIN_ID, Inventory, Tool
from .layers import LAYER_NAMES, EffectiveContext, LayerPlan, effective_context, plan_layers
from .names import Glob, is_glob, normalize

RuleKind = Literal["deny", "allow", "owner-only", "optional-plugin", "catalog"]


@dataclass(frozen=True, slots=True)
class RemovedTool:
    tool: str
    stage: int
    label: str
    kind: RuleKind
    entry: str | None
    expanded_from: str | None
    source: Source | None
    scope: str
    written_as: str | None = None
    origin: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "tool": self.tool,
            "stage": self.stage,
            "label": self.label,
            "kind": self.kind,
            "entry": self.entry,
            "expandedFrom": self.expanded_from,
            "source": (
                {"file": self.source.file, "line": self.source.line, "column": self.source.column}
                if self.source
                else None
            ),
        }


@dataclass(frozen=True, slots=True)
class LayerTrace:
    stage: int
    name: str
    label: str
    applied: bool
    skip_reason: str | None
    removed: tuple[str, ...]
    scope: str | None
    restrictive: bool

    def to_json(self) -> dict[str, object]:
        return {
            "stage": self.stage,
            "label": self.label,
            "applied": self.applied,
            "skipReason": self.skip_reason,
            "removed": list(self.removed),
        }


@dataclass(frozen=True, slots=True)
class Resolution:
    context: EffectiveContext
    allowed: tuple[str, ...]
    removed: tuple[RemovedTool, ...]
    layers: tuple[LayerTrace, ...]
    warnings: tuple[Diagnostic, ...]
    inventory: Inventory
    inherited_deny: tuple[str, ...] = ()
    _removed_by_tool: dict[str, RemovedTool] = field(
        default_factory=dict, repr=False, compare=False
    )

    def removal(self, tool: str) -> RemovedTool | None:
        if not self._removed_by_tool and self.removed:
            self._removed_by_tool.update((r.tool, r) for r in self.removed)
        return self._removed_by_tool.get(tool)

    def is_allowed(self, tool: str) -> bool:
        return tool in self.allowed

    @property
    def restrictive(self) -> bool:
        return any(layer.restrictive for layer in self.layers)

    def capture(self) -> Capture:
        """What a child run (or a cron job this run creates) inherits (semantics 7.8).

        A restricted parent hands down its allowed tools. An unrestricted one does not cap its
        child's allow list, but hands down, as deny, every tool it lost itself: so a child is
        always a subset of its parent even when the parent was narrowed only by deny rules.
        """
        deny = tuple(dict.fromkeys([*self.inherited_deny, *(r.tool for r in self.removed)]))
        if self.restrictive:
            return Capture(self.allowed, tuple(self.inherited_deny))
        return Capture(None, deny)

    def to_json(self) -> dict[str, object]:
        return {
            "context": self.context.to_json(),
            "allowed": list(self.allowed),
            "removed": [r.to_json() for r in self.removed],
            "layers": [layer.to_json() for layer in self.layers],
            "warnings": [{"code": w.code, "message": w.message} for w in self.warnings],
        }


class NoCallableToolsError(Exception):
    """Explicit allow lists left the run with no tools; the run must stop before the model."""

    def __init__(self, resolution: Resolution, labels: Sequence[str]):
        self.resolution = resolution
        self.labels = tuple(labels)
        super().__init__(
            "No callable tools remain after resolving explicit tool allowlist "
            f"({'; '.join(self.labels)}); no registered tools matched."
        )


def decide(
    name: str, plugin_id: str | None, policy: LayerPolicy, catalog: Catalog
) -> tuple[RuleKind, Hit | None] | None:
    """Semantics 5 for one tool and one policy: None if kept, else why it is removed."""
    deny = policy.deny
    if deny is not None and deny.entries:
        hit = deny.match(name, plugin_id)
        if hit is not None:
            return "deny", hit
        for source in catalog.deny_implies.get(name, ()):
            hit = deny.match(source)
            if hit is not None:
                return "deny", hit
    allow = policy.allow
    if allow is None or allow.empty or allow.match(name, plugin_id) is not None:
        return None
    for grant in catalog.grants.get(name, ()) if policy.grants else ():
        if allow.match(grant.when_allowed) is not None and not (
            grant.unless_denied and deny is not None and deny.match(grant.when_allowed)
        ):
            return None
    return "allow", None


def default_inventory(policy: CompiledPolicy) -> Inventory:
    found = policy.memo.get(("inventory",))
    if found is None:
        found = Inventory.build(policy.default_tools(), policy.catalog)
        policy.memo[("inventory",)] = found
    assert isinstance(found, Inventory)
    return found


def resolve(
    policy: CompiledPolicy,
    context: RunContext | None = None,
    inventory: Inventory | Iterable[Tool] | None = None,
    *,
    require_tools: bool = True,
) -> Resolution:
    """The tools this run may use, and why every other tool of the inventory is gone.

    Raises `NoCallableToolsError` when explicit allow lists leave no tools (unless
    `require_tools=False`, which `explain` uses to show such a run).
    """
    ctx = context or RunContext()
    cat = policy.catalog
    if inventory is None:
        inv = default_inventory(policy)
    elif isinstance(inventory, Inventory):
        inv = inventory
    else:
        inv = Inventory.build(inventory, cat)
    eff, notes = effective_context(policy, ctx)
    plans, more = plan_layers(policy, eff, ctx)
    notes.extend(more)
    applied = [p for p in plans if p.policy is not None]

    removed: list[RemovedTool] = []
    alive: list[Tool] = []
    for tool in inv.tools:
        why = _construction(tool, eff, cat, applied)
        if why is None:
            alive.append(tool)
        else:
            removed.append(why)

    traces: list[LayerTrace] = []
    for plan in plans:
        lp = plan.policy
        name = LAYER_NAMES[plan.stage - 1]
        if lp is None:
            traces.append(
                LayerTrace(plan.stage, name, plan.label, False, plan.skip_reason, (), None, False)
            )
            continue
        survivors: list[Tool] = []
        gone: list[str] = []
        for tool in alive:
            verdict = decide(tool.name, tool.plugin_id, lp, cat)
            if verdict is None:
                survivors.append(tool)
                continue
            kind, hit = verdict
            gone.append(tool.name)
            removed.append(_record(tool.name, plan, lp, kind, hit))
        alive = survivors
        traces.append(
            LayerTrace(
                plan.stage, name, plan.label, True, None, tuple(gone), lp.scope, lp.restrictive
            )
        )

    warnings = [*inv.conflicts, *notes, *_unknown_entry_warnings(applied, inv, cat)]
    inherited = ctx.parent.deny if ctx.parent else ()
    result = Resolution(
        eff,
        tuple(t.name for t in alive),
        tuple(removed),
        tuple(traces),
        tuple(dict.fromkeys(warnings)),
        inv,
        tuple(inherited),
    )
    if require_tools and not alive and inv.tools:
        emptied = [
            t.label
            for t in traces
            if t.applied and any(r.stage == t.stage and r.kind == "allow" for r in removed)
        ]
        if emptied:
            raise NoCallableToolsError(result, emptied)
    return result


def _record(
    tool: str, plan: LayerPlan, lp: LayerPolicy, kind: RuleKind, hit: Hit | None
) -> RemovedTool:
    if hit is None:
        allow = lp.allow
        return RemovedTool(
            tool,
            plan.stage,
            plan.label,
            kind,
            None,
            None,
            allow.source if allow else None,
            allow.key if allow else lp.scope,
        )
    entry = hit.entry
    return RemovedTool(
        tool,
        plan.stage,
        plan.label,
        kind,
        entry.text,
        hit.expanded_from,
        entry.source,
        entry.key,
        entry.raw,
        entry.origin,
    )


def _construction(
    tool: Tool, eff: EffectiveContext, cat: Catalog, applied: list[LayerPlan]
) -> RemovedTool | None:
    # By name, whoever provides it: a plugin tool called "gateway" is as dangerous as the core one.
    if tool.name in cat.owner_only and not eff.is_owner:
        return RemovedTool(
            tool.name, 0, "owner-only tools", "owner-only", None, None, None, "catalog owner_only"
        )
    if tool.optional and tool.plugin_id is not None:
        named = any(
            p.policy is not None
            and p.policy.allow is not None
            and p.policy.allow.names_exactly(tool.name, tool.plugin_id)
            for p in applied
        )
        if not named:
            return RemovedTool(
                tool.name,
                0,
                "optional plugin tools",
                "optional-plugin",
                None,
                None,
                None,
                "an allow list",
            )
    spec = cat.by_id.get(tool.name) if tool.plugin_id is None else None
    if (
        spec is not None
        and spec.providers is not None
        and eff.provider is not None
        and eff.provider not in spec.providers
    ):
        return RemovedTool(
            tool.name,
            0,
            "catalog constraints",
            "catalog",
            None,
            None,
            None,
            f"catalog tool {tool.name} (providers: {', '.join(sorted(spec.providers))})",
        )
    return None


# -- unknown-entry warnings (semantics 9) -------------------------------------------------------

_CORE_UNAVAILABLE = (
    "These entries are shipped core tools but unavailable in the current "
    "runtime/provider/model/config."
)
_PLUGIN_HINT = "These entries won't match any tool unless the plugin is enabled."
_BOTH = (
    "Some entries are shipped core tools but unavailable in the current "
    "runtime/provider/model/config; other entries won't match any tool unless the plugin "
    "is enabled."
)


def _classify(entry: Entry, inv: Inventory, cat: Catalog) -> str:
    """ "plugin", "core", "unavailable" (a catalog tool this run lacks) or "unknown"."""
    text = entry.text
    if text in ("*", "group:plugins", MCP_PLUGIN_ID) or text in inv.plugin_ids:
        return "plugin" if text != "*" else "core"
    if any(text.startswith(prefix) for prefix in inv.mcp_prefixes):
        return "plugin"
    if is_glob(text):
        glob = Glob.compile(text)
        for tool in inv.tools:
            if glob.matches(tool.name):
                return "plugin" if tool.plugin_id else "core"
        return "unavailable" if any(glob.matches(t) for t in cat.tool_ids) else "unknown"
    members = cat.groups.get(text) or cat.covers.get(text) or (text,)
    for member in members:
        if member in inv.names:
            for tool in inv.tools:
                if tool.name == member:
                    return "plugin" if tool.plugin_id else "core"
    if any(m in cat.tool_ids for m in members) or text in cat.groups:
        return "unavailable"
    return "unknown"


def _unknown_entry_warnings(
    applied: list[LayerPlan], inv: Inventory, cat: Catalog
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for plan in applied:
        lp = plan.policy
        assert lp is not None
        for lst, kind, code in ((lp.allow, "allowlist", "PC401"), (lp.deny, "denylist", "PC402")):
            # An allow list with "*" restricts nothing (alsoAllow alone becomes ["*", ...]);
            # its entries are analysed where they do widen, at the profile layer.
            if lst is None or lst.empty or (kind == "allowlist" and lst.wildcard is not None):
                continue
            unavailable, unknown = [], []
            for entry in lst.entries:
                if entry.origin != "config":
                    continue
                verdict = _classify(entry, inv, cat)
                if verdict == "unavailable":
                    unavailable.append(entry.text)
                elif verdict == "unknown":
                    unknown.append(entry.text)
            if not unavailable and not unknown:
                continue
            suffix = (
                _BOTH
                if unavailable and unknown
                else _CORE_UNAVAILABLE
                if unavailable
                else _PLUGIN_HINT
            )
            names = ", ".join([*unavailable, *unknown])
            first = next(e for e in lst.entries if e.text in (unavailable + unknown))
            out.append(
                Diagnostic.make(
                    code,
                    f"tools: {plan.label} {kind} contains unknown entries ({names}). {suffix}",
                    first.source,
                    first.key,
                )
            )
    return out


# -- cron caps (semantics 7.8) ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CronCap:
    """A scheduled job's `toolsAllow` after the creator cap; `()` means no tools at run time."""

    tools_allow: tuple[str, ...]
    dropped: tuple[str, ...]
    warnings: tuple[Diagnostic, ...]

    def capture(self) -> Capture:
        return Capture(self.tools_allow, (), "cron job toolsAllow")


def cap_cron_tools(
    creator: Resolution, requested: Sequence[str] | None, catalog: Catalog
) -> CronCap:
    """Intersect a job's requested tools with its creating run's tools; report what is dropped."""
    have = creator.allowed
    if requested is None:
        return CronCap(have, (), ())
    wanted = [Entry(normalize(r, catalog.aliases), r, "toolsAllow", None) for r in requested]
    wanted = [e for e in wanted if e.text]
    if not wanted or not have:
        dropped = tuple(e.text for e in wanted)
        return CronCap((), dropped, _dropped_warning(dropped))
    lst = build_list("toolsAllow", None, wanted, catalog.groups, catalog.covers)
    kept = tuple(t for t in have if lst.match(t) is not None)
    matched = {
        e.text
        for e in wanted
        if any(build_list("", None, [e], catalog.groups, catalog.covers).match(t) for t in kept)
    }
    dropped = tuple(e.text for e in wanted if e.text not in matched)
    return CronCap(kept, dropped, _dropped_warning(dropped))


def _dropped_warning(dropped: Sequence[str]) -> tuple[Diagnostic, ...]:
    if not dropped:
        return ()
    return (
        Diagnostic.make(
            "PC407",
            "scheduled job asked for tools its creator does not have: " + ", ".join(dropped),
        ),
    )
