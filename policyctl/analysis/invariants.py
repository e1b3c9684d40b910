"""Invariants of a policy test file, checked over every context of the matrix.

A matrix of 30,000 contexts has a few thousand distinct runs: contexts whose layers apply the
same policies resolve alike (`matrixwalk.run_key`). Each context costs its layer plans only (a
handful of lookups); each distinct run is resolved once. So the whole matrix is walked up to
`INVARIANT_MAX_CONTEXTS`, far beyond what resolving every context would allow, and a sample is
taken only above it.

What an invariant asks of one context is read from that context's own facts (agent, channel,
group, role, owner, sandboxed: `Facts`), never from the run that stands for its group: two
contexts of one group may differ in fields no layer reads (an agent without an entry and no
agent). An invariant applies to the contexts its scope selects: `agents`, `sandboxed` and
`when` (fields that must all match); `unless` takes contexts out of a `never` invariant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from ..compile.compiled import CompiledPolicy
from ..compile.layers import LayerPlan
from ..context import RunContext
from ..formats.strict import StrictModel as _Strict
from ..pipeline.context import Facts
from ..pipeline.lineage import LeafCannotSpawn, child_context
from ..pipeline.resolve import resolve, resolver_for
from ..pipeline.result import Resolution
from .matrix import Matrix, context_matrix
from .matrixwalk import gated_tools, run_key
from .testnames import names_nothing, normal_name, stands_for

#: contexts `policyctl test` walks in full before sampling: a context costs its layer plans
#: only (see bench/bench_invariants.py for the time of a 41,184-context matrix)
INVARIANT_MAX_CONTEXTS = 250_000


class Condition(_Strict):
    """Matrix contexts by their fields, as the run sees them after its session keys are read
    (every given field must match): `when` selects contexts, `unless` takes them out."""

    owner: bool | None = None
    agent: str | None = None
    channel: str | None = None
    account: str | None = None
    group: str | None = None
    role: Literal["main", "orchestrator", "leaf"] | None = None
    provider: str | None = None
    sandboxed: bool | None = None
    trigger: Literal["user", "cron", "memory", "skill", "spawn", "gateway"] | None = None


class InvariantScope(_Strict):
    """Which contexts of the matrix an invariant is checked in (all of them by default)."""

    agents: list[str] | None = Field(
        None, description="Only the runs of these agents (agent ids as in agents.entries)."
    )
    sandboxed: bool | None = Field(None, description="Only sandboxed (or unsandboxed) runs.")
    when: Condition | None = Field(None, description="Only runs whose fields all match.")


class NeverRule(InvariantScope):
    tools: list[str]
    unless: Condition | None = None


class NeverInvariant(_Strict):
    never: NeverRule


class SubsetInvariant(InvariantScope):
    subagent_subset_of_parent: bool = Field(alias="subagentSubsetOfParent")


@dataclass(frozen=True, slots=True)
class Walked:
    """One context of the matrix: its label, facts, and the resolution of its group."""

    label: str
    context: RunContext
    facts: Facts
    resolution: Resolution


@dataclass
class Walk:
    matrix: Matrix
    contexts: list[Walked]
    resolve: Callable[[RunContext], Resolution]


def walk(policy: CompiledPolicy, max_contexts: int) -> Walk:
    """Every context of the matrix (a sample beyond `max_contexts`), each with the resolution
    that stands for its group; `resolve` answers further contexts (children) the same way."""
    matrix = context_matrix(policy, max_contexts)
    resolver = resolver_for(policy)
    gated = gated_tools(policy)
    runs: dict[object, Resolution] = {}
    # every plan stays alive during the walk: the key holds their ids (see matrixwalk)
    alive: list[tuple[LayerPlan, ...]] = []

    def resolve(context: RunContext) -> Resolution:
        return _resolve(context)[1]

    def _resolve(context: RunContext) -> tuple[Facts, Resolution]:
        facts, plans = resolver.run_plan(context)
        alive.append(plans)
        key = run_key(facts, plans, gated)
        found = runs.get(key)
        if found is None:
            found = runs[key] = resolver.resolve_in(policy, context, None, False)
        return facts, found

    contexts = []
    for cell in matrix.contexts:
        facts, res = _resolve(cell.context)
        contexts.append(Walked(cell.label, cell.context, facts, res))
    return Walk(matrix, contexts, resolve)


def in_scope(scope: InvariantScope, facts: Facts) -> bool:
    if scope.agents is not None and facts.agent not in {normal_agent(a) for a in scope.agents}:
        return False
    if scope.sandboxed is not None and facts.sandboxed != scope.sandboxed:
        return False
    return scope.when is None or matches(scope.when, facts)


def normal_agent(agent: str) -> str:
    return agent.strip().lower()


def matches(condition: Condition, facts: Facts) -> bool:
    """Whether every field the condition gives is the context's (an empty one matches none)."""
    given = condition.model_dump(exclude_none=True)
    values: dict[str, Any] = {
        "owner": facts.is_owner,
        "agent": facts.agent,
        "channel": facts.channel,
        "account": facts.account,
        "group": facts.group,
        "role": facts.role,
        "provider": facts.provider,
        "sandboxed": facts.sandboxed,
        "trigger": facts.trigger,
    }
    return bool(given) and all(values[k] == v for k, v in given.items())


def check_never(
    inv: NeverInvariant, policy: CompiledPolicy, walked: Walk, trail: Callable[..., list[str]]
) -> list[str]:
    """A failure line (and the tool's trail) for each context in scope that allows a tool."""
    failures: list[str] = []
    names = [normal_name(t, policy) for t in inv.never.tools]
    named: set[str] = set()
    tools_of: dict[tuple[int, str], tuple[str, ...]] = {}
    trails: dict[tuple[int, str], list[str]] = {}
    last: Resolution | None = None
    for one in walked.contexts:
        res = last = one.resolution
        for name in names:
            key = (id(res), name)
            tools = tools_of.get(key)
            if tools is None:
                tools = tools_of[key] = stands_for(name, res, policy)
            if tools:
                named.add(name)
        if not in_scope(inv.never, one.facts):
            continue
        if inv.never.unless is not None and matches(inv.never.unless, one.facts):
            continue
        for name in names:
            for tool in tools_of[(id(res), name)]:
                if res.is_allowed(tool):
                    failures.append(f"{one.label}: {tool} is allowed")
                    lines = trails.get((id(res), tool))
                    if lines is None:
                        lines = trails[(id(res), tool)] = ["  " + x for x in trail(res, tool)]
                    failures.extend(lines)
    # a name no context's inventory has would pass in every context: a typo, or a tool the
    # test cannot see (declare it in the policy's `inventory`)
    if last is not None:
        failures.extend(names_nothing(n, last) for n in names if n not in named)
    return failures


def check_subset(scope: InvariantScope, walked: Walk) -> list[str]:
    """A child of every top-level run in scope holds no tool its parent lacks."""
    failures: list[str] = []
    for one, parent in _parents(scope, walked):
        try:
            child = walked.resolve(child_context(one.context, parent, "invariant"))
        except LeafCannotSpawn:
            continue
        extra = sorted(set(child.allowed) - set(parent.allowed))
        if extra:
            failures.append(f"{one.label}: a child gets {', '.join(extra)}")
    return failures


def _parents(scope: InvariantScope, walked: Walk) -> Iterator[tuple[Walked, Resolution]]:
    """The top-level contexts in scope, each with a resolution whose own context says what
    its child inherits (agent, role, depth): the group's, when those agree with it."""
    for one in walked.contexts:
        if one.facts.subagent_depth or not in_scope(scope, one.facts):
            continue
        res = one.resolution
        ctx = res.context
        if (ctx.agent, ctx.role, ctx.subagent_depth) != (
            one.facts.agent,
            one.facts.role,
            one.facts.subagent_depth,
        ):
            # a run of its own: the group's resolution would hand down another agent's key
            res = resolve(res.policy, one.context, require_tools=False)
        yield one, res
