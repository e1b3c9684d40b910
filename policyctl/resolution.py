"""Resolution: the answer for one run, and the audit trail behind it, built lazily.

A `Resolution` holds the run's layer plans and the per-layer bitmasks from `masks`; which tools
are allowed is one lookup away, and the audit trail (which entry removed which tool, where it
is written) is worked out the first time someone reads `removed` or `layers`, by `decide`, the
same single-tool rule the reference resolver applies to every tool. `explain` renders this value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from .catalog import Catalog
from .compile import CompiledPolicy, LayerPolicy
from .context import Capture, Sender
from .contextcheck import unknown_context_values
from .diagnostics import Diagnostic, Source
from .entries import Entry, Hit
from .inventory import MCP_PLUGIN_ID, Inventory, Tool
from .layers import LAYER_NAMES, EffectiveContext, LayerPlan, Shape
from .names import Glob, is_glob

if TYPE_CHECKING:
    from .masks import InventoryIndex

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


class Resolution:
    """The tools one run may use (`allowed`) and why each other tool is gone (`removed`,
    `layers`), with the run's `context` and `warnings`. Immutable once built; the trail is
    computed on first use and kept."""

    __slots__ = (
        "_alive",
        "_construction",
        "_context",
        "_index",
        "_inherited_deny",
        "_layers",
        "_plans",
        "_policy",
        "_removed",
        "_removed_by_tool",
        "_sender",
        "_shape",
        "_verdicts",
        "_warnings",
    )

    def __init__(
        self,
        policy: CompiledPolicy,
        index: InventoryIndex,
        shape: Shape,
        sender: Sender,
        plans: tuple[LayerPlan, ...],
        verdicts: tuple[tuple[int, int], ...],
        construction: tuple[int, int, int],
        alive: int,
        inherited_deny: tuple[str, ...],
    ) -> None:
        self._policy = policy
        self._index = index
        self._shape = shape
        self._sender = sender
        self._plans = plans
        self._verdicts = verdicts
        self._construction = construction
        self._alive = alive
        self._inherited_deny = inherited_deny
        self._context: EffectiveContext | None = None
        self._removed: tuple[RemovedTool, ...] | None = None
        self._layers: tuple[LayerTrace, ...] | None = None
        self._warnings: tuple[Diagnostic, ...] | None = None
        self._removed_by_tool: dict[str, RemovedTool] | None = None

    # -- the answer: cheap ------------------------------------------------------------------

    @property
    def allowed(self) -> tuple[str, ...]:
        """Allowed tool names, in inventory order."""
        return self._index.names_of(self._alive)

    def is_allowed(self, tool: str) -> bool:
        pos = self._index.position.get(tool)
        return pos is not None and bool(self._alive >> pos & 1)

    @property
    def plans(self) -> tuple[LayerPlan, ...]:
        """The eleven layer plans of this run (policy or skip reason), in order."""
        return self._plans

    @property
    def inventory(self) -> Inventory:
        return self._index.inventory

    @property
    def inherited_deny(self) -> tuple[str, ...]:
        return self._inherited_deny

    @property
    def context(self) -> EffectiveContext:
        if self._context is None:
            self._context = replace(self._shape.eff, sender=self._sender)
        return self._context

    @property
    def restrictive(self) -> bool:
        """Whether some applied layer has an allow list that restricts (no `*`)."""
        return any(p.policy is not None and p.policy.restrictive for p in self._plans)

    # -- the trail: built on first use ------------------------------------------------------

    @property
    def removed(self) -> tuple[RemovedTool, ...]:
        if self._removed is None:
            self._build_trail()
        assert self._removed is not None
        return self._removed

    @property
    def layers(self) -> tuple[LayerTrace, ...]:
        if self._layers is None:
            self._build_trail()
        assert self._layers is not None
        return self._layers

    def removal(self, tool: str) -> RemovedTool | None:
        if self._removed_by_tool is None:
            self._removed_by_tool = {r.tool: r for r in self.removed}
        return self._removed_by_tool.get(tool)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        if self._warnings is None:
            applied = [p for p in self._plans if p.policy is not None]
            found = [
                *self.inventory.conflicts,
                *self._shape.notes,
                *unknown_entry_warnings(applied, self.inventory, self._policy.catalog),
                *unknown_context_values(self._policy, self.context),
            ]
            self._warnings = tuple(dict.fromkeys(found))
        return self._warnings

    def _build_trail(self) -> None:
        from .masks import iter_bits

        cat = self._policy.catalog
        tools = self.inventory.tools
        applied = [p for p in self._plans if p.policy is not None]
        eff = self.context
        owner, optional, provider = self._construction
        removed: list[RemovedTool] = []
        for pos in iter_bits(owner | optional | provider):
            why = construction_record(tools[pos], eff, cat, applied)
            assert why is not None
            removed.append(why)
        alive = self._index.full & ~(owner | optional | provider)
        traces: list[LayerTrace] = []
        for plan, (denied, missing) in zip(self._plans, self._verdicts, strict=True):
            name = LAYER_NAMES[plan.stage - 1]
            lp = plan.policy
            if lp is None:
                traces.append(
                    LayerTrace(
                        plan.stage, name, plan.label, False, plan.skip_reason, (), None, False
                    )
                )
                continue
            gone = (denied | missing) & alive
            names: list[str] = []
            for pos in iter_bits(gone):
                tool = tools[pos]
                verdict = decide(tool.name, tool.plugin_id, lp, cat)
                assert verdict is not None, (tool, plan.stage)
                removed.append(record(tool.name, plan, lp, verdict[0], verdict[1]))
                names.append(tool.name)
            alive &= ~gone
            traces.append(
                LayerTrace(
                    plan.stage, name, plan.label, True, None, tuple(names), lp.scope, lp.restrictive
                )
            )
        assert alive == self._alive
        self._removed = tuple(removed)
        self._layers = tuple(traces)

    def emptied_by(self) -> list[str]:
        """Labels of the layers whose allow lists removed tools, when nothing is left."""
        if self._alive or not self._index.full:
            return []
        kinds = {(r.stage, r.kind) for r in self.removed}
        return [t.label for t in self.layers if t.applied and (t.stage, "allow") in kinds]

    def capture(self) -> Capture:
        """What a child run (or a cron job this run creates) inherits (semantics 7.8).

        A restricted parent hands down its allowed tools. An unrestricted one does not cap its
        child's allow list, but hands down, as deny, every tool it lost itself: so a child is
        always a subset of its parent even when the parent was narrowed only by deny rules.
        """
        if self.restrictive:
            return Capture(self.allowed, self._inherited_deny)
        lost = self._index.names_of(self._index.full & ~self._alive)
        return Capture(None, tuple(dict.fromkeys([*self._inherited_deny, *lost])))

    def to_json(self) -> dict[str, object]:
        return {
            "context": self.context.to_json(),
            "allowed": list(self.allowed),
            "removed": [r.to_json() for r in self.removed],
            "layers": [layer.to_json() for layer in self.layers],
            "warnings": [{"code": w.code, "message": w.message} for w in self.warnings],
        }

    def __repr__(self) -> str:
        return f"Resolution(allowed={self.allowed!r})"


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


def record(
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


def construction_record(
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


def unknown_entry_warnings(
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
