"""One walk over the context matrix for the checks that ask every run (PC308, PC432).

A matrix has thousands of contexts but fewer distinct runs: contexts whose eleven layers apply
the same policies, with the same owner flag and the same provider-gated tools (what the
construction filters read), have the same allowed set, the same removals and the same trail.
The walk reads each context's layer plans only (the engine derives its facts and memoises
shapes, so this is mostly lookups), groups the contexts by that key and resolves the first
context of each group; a check then decides once per group and still reports every context
of it (the group's labels).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..compile.compiled import CompiledPolicy
from ..compile.layers import Layer, LayerPlan
from ..pipeline.context import Facts
from ..pipeline.resolve import resolver_for
from ..pipeline.result import Resolution
from .matrix import Matrix

#: what decides a run's answer (see `_key`)
RunKey = tuple[object, ...]


@dataclass
class DistinctRun:
    """The matrix contexts that resolve alike: one resolution of them, and every label."""

    resolution: Resolution
    labels: list[str] = field(default_factory=list)


def distinct_runs(policy: CompiledPolicy, matrix: Matrix) -> list[DistinctRun]:
    """The matrix's contexts grouped by what decides their answer, in matrix order.

    A context's key needs only its layer plans (`Resolver.run_plan`: derived facts and
    memoised shapes, no decision); the first context of each group is resolved, and that
    resolution stands for the group."""
    gated = gated_tools(policy)
    resolver = resolver_for(policy)
    runs: dict[RunKey, DistinctRun] = {}
    # every context's plans stay alive until the walk ends: a policy built for one run (an
    # unconfigured account's deny-everything) must not free an id another key then reuses
    seen: list[tuple[LayerPlan, ...]] = []
    for cell in matrix.contexts:
        facts, plans = resolver.run_plan(cell.context)
        seen.append(plans)
        key = run_key(facts, plans, gated)
        run = runs.get(key)
        if run is None:
            res = resolver.resolve_in(policy, cell.context, None, False)
            run = runs[key] = DistinctRun(res)
        run.labels.append(cell.label)
    return list(runs.values())


_INHERITANCE = Layer.INHERITANCE - 1


def gated_tools(policy: CompiledPolicy) -> list[frozenset[str]]:
    """The provider sets of the catalog's provider-gated tools (what `run_key` reads)."""
    return [t.providers for t in policy.catalog.tools if t.providers is not None]


def run_key(facts: Facts, plans: tuple[LayerPlan, ...], gated: list[frozenset[str]]) -> RunKey:
    """Which policy each layer applies (compiled policies are shared objects, so identity is
    equality; the walk keeps every policy named here alive while the key is used), plus what
    the construction filters read: the owner flag, and which provider-gated tools the
    provider gets (none without a provider, semantics 7.9). The inheritance layer is built
    per run from the parent and the trigger, so it is keyed by those."""
    layers: list[object] = [None if p.policy is None else id(p.policy) for p in plans]
    layers[_INHERITANCE] = (facts.parent, facts.trigger == "memory")
    provider = facts.provider
    gate = tuple(provider is not None and provider in providers for providers in gated)
    return (facts.is_owner, gate, tuple(layers))
