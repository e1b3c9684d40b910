"""Resolve: CompiledPolicy + context + inventory -> Resolution.

The fast path is a handful of lookups: the context's *shape* (everything but the sender) is
planned once and memoised; the sender completes layers 7 and 8 with two dictionary lookups;
each layer's verdict over the inventory is a memoised bitmask (`masks`); the answer is their
AND. A context seen before is answered from a bounded cache. `resolve_reference` is the
straightforward per-tool resolver the fast path is tested against.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .catalog import Catalog
from .compile import CompiledPolicy
from .context import Capture, RunContext
from .contextcheck import unknown_context_values
from .diagnostics import Diagnostic
from .entries import Entry, build_list
from .inventory import Inventory, Tool
from .layers import (
    LAYER_NAMES,
    EffectiveContext,
    LayerPlan,
    Shape,
    build_shape,
    effective_context,
    normalise_sender,
    plan_layers,
    plans_for,
)
from .masks import InventoryIndex
from .names import normalize
from .resolution import (
    LayerTrace,
    NoCallableToolsError,
    RemovedTool,
    Resolution,
    RuleKind,
    construction_record,
    decide,
    record,
    unknown_entry_warnings,
)

__all__ = [
    "CronCap",
    "LayerTrace",
    "NoCallableToolsError",
    "ReferenceResolution",
    "RemovedTool",
    "Resolution",
    "RuleKind",
    "cap_cron_tools",
    "decide",
    "default_inventory",
    "resolve",
    "resolve_reference",
]

_RESULTS_MAX = 4096  # a resolution whose trail was read holds ~10 KB: bound the memory
_SHAPES_MAX = 16_384
_INDEXES_MAX = 64


def default_inventory(policy: CompiledPolicy) -> Inventory:
    found = policy.memo.get(("inventory",))
    if found is None:
        found = Inventory.build(policy.default_tools(), policy.catalog)
        policy.memo[("inventory",)] = found
    assert isinstance(found, Inventory)
    return found


def _index(policy: CompiledPolicy, inv: Inventory) -> InventoryIndex:
    indexes = policy.indexes
    found = indexes.get(inv)
    if found is None:
        if len(indexes) >= _INDEXES_MAX:
            del indexes[next(iter(indexes))]
        found = InventoryIndex.build(inv, policy.catalog)
        indexes[inv] = found
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
    `require_tools=False`, which `explain` uses to show such a run). Pass the same `Inventory`
    object for runs that share tools: its per-layer verdicts are computed once.
    """
    ctx = context if context is not None else _EMPTY_CONTEXT
    if inventory is None:
        inv = default_inventory(policy)
    elif isinstance(inventory, Inventory):
        inv = inventory
    else:
        inv = Inventory.build(inventory, policy.catalog)
    key = (ctx, inv)
    cached = policy.results.get(key)
    if cached is None:
        cached = _resolve(policy, ctx, inv)
        results = policy.results
        if len(results) >= _RESULTS_MAX:
            # Start afresh rather than evict one by one: deleting from the front of a dict
            # makes the next lookup of its first key walk past every deleted slot.
            results.clear()
        results[key] = cached
    res, emptied = cached
    if require_tools and emptied:
        raise NoCallableToolsError(res, emptied)
    return res


_EMPTY_CONTEXT = RunContext()


def _resolve(
    policy: CompiledPolicy, ctx: RunContext, inv: Inventory
) -> tuple[Resolution, list[str]]:
    shape_key = (
        ctx.agent,
        ctx.provider,
        ctx.model,
        ctx.channel,
        ctx.account,
        ctx.group,
        ctx.is_owner,
        ctx.session_key,
        ctx.spawned_by,
        ctx.subagent_depth,
        ctx.parent,
        ctx.trigger,
    )
    shapes = policy.shapes
    shape = shapes.get(shape_key)
    if shape is None:
        if len(shapes) >= _SHAPES_MAX:
            shapes.clear()
        shape = build_shape(policy, ctx)
        shapes[shape_key] = shape
    index = _index(policy, inv)
    base = shape.per_index.get(id(index))
    if base is None or base.index is not index:
        base = _ShapeVerdicts.build(policy, shape, index)
        shape.per_index[id(index)] = base
    if shape.sender_independent:
        sender = normalise_sender(ctx.sender)
        plans, verdicts, alive, optional = base.plans, base.verdicts, base.alive, base.optional
    else:
        sender = normalise_sender(ctx.sender)
        plans = plans_for(shape, sender)
        cat = policy.catalog
        verdicts = list(base.verdicts)
        alive = base.alive
        optional = base.optional
        for i in (6, 7):
            lp = plans[i].policy
            if lp is None:
                verdicts[i] = _KEEP
                continue
            denied, missing = index.verdict(lp, cat)
            verdicts[i] = (denied, missing)
            alive &= ~(denied | missing)
            if optional and lp.allow is not None:
                optional &= ~index.named_mask(lp.allow)
        alive &= ~optional
    inherited = ctx.parent.deny if ctx.parent is not None else ()
    res = Resolution(
        policy,
        index,
        shape,
        sender,
        plans,
        tuple(verdicts),
        (base.owner, optional, base.provider),
        alive,
        inherited,
    )
    emptied = res.emptied_by() if not alive and index.full else []
    return res, emptied


@dataclass(frozen=True, slots=True)
class _ShapeVerdicts:
    """A shape's sender-independent work over one inventory, done once.

    For a shape whose layers 7 and 8 wait for the sender, `alive` leaves those two layers
    (and the optional-plugin filter, which depends on every applied allow list) out.
    """

    index: InventoryIndex
    plans: tuple[LayerPlan, ...]
    verdicts: tuple[tuple[int, int], ...]
    alive: int
    owner: int
    provider: int
    optional: int

    @staticmethod
    def build(policy: CompiledPolicy, shape: Shape, index: InventoryIndex) -> _ShapeVerdicts:
        cat = policy.catalog
        pending = () if shape.sender_independent else (6, 7)
        owner = 0 if shape.eff.is_owner else index.owner_only
        provider = index.provider_mask(shape.eff.provider)
        optional = index.optional
        alive = index.full & ~(owner | provider)
        verdicts: list[tuple[int, int]] = []
        for i, plan in enumerate(shape.plans):
            lp = plan.policy
            if i in pending or lp is None:
                verdicts.append(_KEEP)
                continue
            denied, missing = index.verdict(lp, cat)
            verdicts.append((denied, missing))
            alive &= ~(denied | missing)
            if optional and lp.allow is not None:
                optional &= ~index.named_mask(lp.allow)
        if not pending:
            alive &= ~optional
        return _ShapeVerdicts(index, shape.plans, tuple(verdicts), alive, owner, provider, optional)


_KEEP = (0, 0)


@dataclass(frozen=True, slots=True)
class ReferenceResolution:
    """What `resolve_reference` returns: the same fields as `Resolution`, computed eagerly."""

    context: EffectiveContext
    allowed: tuple[str, ...]
    removed: tuple[RemovedTool, ...]
    layers: tuple[LayerTrace, ...]
    warnings: tuple[Diagnostic, ...]
    inherited_deny: tuple[str, ...]


def resolve_reference(
    policy: CompiledPolicy,
    context: RunContext | None = None,
    inventory: Inventory | Iterable[Tool] | None = None,
    *,
    require_tools: bool = True,
) -> ReferenceResolution:
    """The straightforward resolver: every tool through every layer, one `decide` at a time.

    Kept as the specification the fast path (`resolve`) is tested against; never raises for
    an empty run.
    """
    del require_tools  # the reference path reports; it never stops a run
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
        why = construction_record(tool, eff, cat, applied)
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
            removed.append(record(tool.name, plan, lp, kind, hit))
        alive = survivors
        traces.append(
            LayerTrace(
                plan.stage, name, plan.label, True, None, tuple(gone), lp.scope, lp.restrictive
            )
        )

    warnings = [*inv.conflicts, *notes, *unknown_entry_warnings(applied, inv, cat)]
    warnings.extend(unknown_context_values(policy, eff))
    inherited = ctx.parent.deny if ctx.parent else ()
    return ReferenceResolution(
        eff,
        tuple(t.name for t in alive),
        tuple(removed),
        tuple(traces),
        tuple(dict.fromkeys(warnings)),
        tuple(inherited),
    )


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
