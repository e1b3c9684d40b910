"""One walk over the context matrix for the checks that ask every run (PC308, PC432).

A matrix has thousands of contexts but fewer distinct runs: contexts whose eleven layers apply
the same policies, with the same owner flag and the same provider-gated tools (what the
construction filters read), have the same allowed set, the same removals and the same trail.
The walk resolves each context once (the engine memoises shapes and verdicts, so this is
lookups) and groups the contexts by that key; a check then decides once per group and still
reports every context of it (the group's labels).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .compiled import CompiledPolicy
from .context import RunContext
from .matrix import Matrix
from .pipeline.layers import Layer
from .resolve import Resolution, resolve

#: what decides a run's answer (see `_key`)
RunKey = tuple[object, ...]


@dataclass
class DistinctRun:
    """The matrix contexts that resolve alike: one resolution of them, and every label."""

    resolution: Resolution
    labels: list[str] = field(default_factory=list)


def distinct_runs(policy: CompiledPolicy, matrix: Matrix) -> list[DistinctRun]:
    """The matrix's contexts grouped by what decides their answer, in matrix order."""
    gated = [t.providers for t in policy.catalog.tools if t.providers is not None]
    runs: dict[RunKey, DistinctRun] = {}
    for cell in matrix.contexts:
        res = resolve(policy, cell.context, require_tools=False)
        key = _key(res, cell.context, gated)
        run = runs.get(key)
        if run is None:
            run = runs[key] = DistinctRun(res)
        run.labels.append(cell.label)
    return list(runs.values())


def _key(res: Resolution, ctx: RunContext, gated: list[frozenset[str]]) -> RunKey:
    """Which policy each layer applies (compiled policies are shared objects, so identity is
    equality; the runs keep every policy named here alive while the key is used), plus what
    the construction filters read: the owner flag, and which provider-gated tools the
    provider gets (none without a provider, semantics 7.9). The inheritance layer is built
    per run from the parent and the trigger, so it is keyed by those."""
    eff = res.context
    layers = tuple(
        (ctx.parent, eff.trigger == "memory")
        if plan.stage == Layer.INHERITANCE
        else id(plan.policy)
        if plan.policy is not None
        else None
        for plan in res.plans
    )
    provider = eff.provider
    gate = tuple(provider is not None and provider in providers for providers in gated)
    return (eff.is_owner, gate, layers)
