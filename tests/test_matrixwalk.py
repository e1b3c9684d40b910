"""validate's matrix walk (PC308, PC432) decides once per group of contexts that resolve alike:
the grouping must never put together two contexts whose answers differ."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES, MakePolicy

from policyctl import CompiledPolicy, load_policy, resolve
from policyctl.analysis.matrix import context_matrix
from policyctl.analysis.matrixwalk import distinct_runs

# owner-only tools, a provider-gated tool (apply_patch), sender rules, groups, a sandbox
# under non-main, subagents and a memory-flush trigger: every input the key must hold
MIXED = """
catalog: openclaw
tools:
  profile: coding
  toolsBySender:
    "id:42": {deny: [exec]}
agents:
  defaults: {sandbox: {mode: non-main}, subagents: {maxSpawnDepth: 2}}
  entries:
    coder: {tools: {allow: [read, write, apply_patch, exec, gateway, sessions_spawn]}}
    bot: {tools: {allow: [message]}}
channels:
  slack:
    groups:
      C1: {tools: {deny: [write]}, toolsBySender: {"id:7": {allow: [read]}}}
      "*": {tools: {allow: [read, message]}}
"""


def _answer(policy: CompiledPolicy, context: object) -> tuple[object, ...]:
    res = resolve(policy, context, require_tools=False)  # type: ignore[arg-type]
    removed = [(r.tool, r.stage, r.kind, r.label, str(r.source)) for r in res.removed]
    pc409 = any(w.code == "PC409" for w in res.warnings)
    # validate reads PC409 from the selection notes alone (no unknown-name checks)
    assert pc409 == any(w.code == "PC409" for w in res.selection_notes)
    return res.allowed, removed, tuple(res.emptied_by()), pc409


def _assert_groups_resolve_alike(policy: CompiledPolicy) -> int:
    matrix = context_matrix(policy, 4000)
    runs = distinct_runs(policy, matrix)
    labels = [c.label for c in matrix.contexts]
    assert len(set(labels)) == len(labels)
    assert sorted(label for run in runs for label in run.labels) == sorted(labels)
    context_of = {c.label: c.context for c in matrix.contexts}
    for run in runs:
        expected = _answer(policy, context_of[run.labels[0]])
        for label in run.labels:
            assert _answer(policy, context_of[label]) == expected, label
    return len(runs)


POLICIES = [EXAMPLES / "chatbot.yaml", EXAMPLES / "team.yaml", EXAMPLES / "platform.toml"]


@pytest.mark.parametrize("path", POLICIES, ids=lambda p: p.name)
def test_example_contexts_grouped_together_resolve_alike(path: Path) -> None:
    policy = load_policy(path)
    assert _assert_groups_resolve_alike(policy) <= len(context_matrix(policy, 4000).contexts)


def test_mixed_policy_contexts_grouped_together_resolve_alike(make_policy: MakePolicy) -> None:
    policy = make_policy(MIXED)
    runs = _assert_groups_resolve_alike(policy)
    # the point of the walk: far fewer runs to decide than contexts
    assert runs < len(context_matrix(policy, 4000).contexts) / 2


@pytest.mark.parametrize("source", ["mixed", *(p.name for p in POLICIES)])
def test_emptied_by_agrees_with_the_trail(source: str, make_policy: MakePolicy) -> None:
    """`emptied_by` reads the verdict masks; the trail says the same thing rule by rule."""
    policy = make_policy(MIXED) if source == "mixed" else load_policy(EXAMPLES / source)
    emptied = 0
    for cell in context_matrix(policy, 4000).contexts:
        res = resolve(policy, cell.context, require_tools=False)
        kinds = {(r.stage, r.kind) for r in res.removed}
        from_trail = [t.label for t in res.layers if t.applied and (t.stage, "allow") in kinds]
        # the layer that removed the last tools decides: an allow list left some out, or a
        # deny took them all (a ban is not an allowlist mistake)
        last = max((r.stage for r in res.removed), default=0)
        by_allow = (last, "allow") in kinds
        expected = from_trail if not res.allowed and res.inventory.tools and by_allow else []
        assert res.emptied_by() == expected, cell.label
        cause = res.emptied()
        if res.allowed or not res.inventory.tools or last == 0:
            assert cause is None, cell.label
        else:
            assert cause is not None and int(cause.plan.stage) == last, cell.label
            assert cause.kind == ("allow" if by_allow else "deny"), cell.label
        emptied += cause is not None
    # team.yaml has empty runs: cron runs of an unconfigured account, which its deny empties
    assert emptied or source != "team.yaml"


@pytest.mark.parametrize("source", ["mixed", *(p.name for p in POLICIES)])
def test_run_plan_is_what_resolve_plans(source: str, make_policy: MakePolicy) -> None:
    """The walk keys contexts by `Resolver.run_plan`, which decides nothing: it must name the
    plans and the facts the resolution of the same context has."""
    from policyctl.pipeline.resolve import resolver_for

    policy = make_policy(MIXED) if source == "mixed" else load_policy(EXAMPLES / source)
    resolver = resolver_for(policy)
    for cell in context_matrix(policy, 4000).contexts:
        facts, plans = resolver.run_plan(cell.context)
        res = resolve(policy, cell.context, require_tools=False)
        assert plans == res.plans, cell.label
        eff = res.context
        assert (facts.is_owner, facts.provider, facts.trigger) == (
            eff.is_owner,
            eff.provider,
            eff.trigger,
        ), cell.label
        assert facts.parent == cell.context.parent
