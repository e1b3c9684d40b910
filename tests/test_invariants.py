"""Invariants of `policyctl test`: a definite answer for large matrices at the default
settings, and scoping by agents, by sandboxing and by `when:` (context field conditions)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

from policyctl.analysis.testing import run_test_file

POLICY = """\
agents:
  defaults:
    sandbox: {mode: non-main}
  entries:
    coder:
      tools: {profile: coding}
    reviewer:
      tools: {profile: coding, deny: [exec, write]}
tools:
  sandbox:
    tools: {deny: [browser, process]}
channels:
  slack:
    groups:
      C1: {tools: {deny: [edit]}}
"""


def results(tmp_path: Path, invariants: str, policy: str = POLICY) -> list[tuple[bool, str]]:
    (tmp_path / "p.yaml").write_text(policy, encoding="utf-8")
    test = tmp_path / "p.test.yaml"
    body = textwrap.indent(textwrap.dedent(invariants), "  ")
    test.write_text(f"policy: p.yaml\ninvariants:\n{body}", encoding="utf-8")
    out = run_test_file(test)
    return [(r.passed, "\n".join(r.failures)) for r in out.results]


@pytest.mark.parametrize(
    ("invariant", "holds"),
    [
        # agents: the reviewer never gets exec; everyone else may
        ("- never: {tools: [exec], agents: [reviewer]}", True),
        ("- never: {tools: [exec], agents: [reviewer, coder]}", False),
        ("- never: {tools: [exec]}", False),
        # sandboxing: a sandboxed run never gets process (the sandbox denies it)
        ("- never: {tools: [process], sandboxed: true}", True),
        ("- never: {tools: [process], sandboxed: false}", False),
        # when: context field conditions, all of which must match
        ("- never: {tools: [edit], when: {channel: slack, group: C1}}", True),
        ("- never: {tools: [edit], when: {channel: slack}}", False),
        ("- never: {tools: [write], when: {agent: reviewer, role: main}}", True),
        # unless still takes contexts out of the scope
        ("- never: {tools: [edit], when: {channel: slack}, unless: {group: null}}", False),
        ("- never: {tools: [exec], agents: [coder], unless: {agent: coder}}", True),
        # the subset law, scoped
        ("- {subagentSubsetOfParent: true, agents: [reviewer]}", True),
        ("- {subagentSubsetOfParent: true, sandboxed: true}", True),
    ],
)
def test_an_invariant_is_checked_in_the_contexts_its_scope_selects(
    tmp_path: Path, invariant: str, holds: bool
) -> None:
    [(passed, failures)] = results(tmp_path, invariant)
    assert passed is holds, failures


def test_a_scoped_failure_names_only_contexts_in_scope(tmp_path: Path) -> None:
    [(passed, failures)] = results(tmp_path, "- never: {tools: [exec], agents: [coder]}")
    assert not passed
    named = [line for line in failures.splitlines() if line.endswith("exec is allowed")]
    assert named and all("coder" in line for line in named), named


def test_an_agent_without_an_entry_is_not_taken_for_another(tmp_path: Path) -> None:
    """Contexts of one distinct run may differ in the agent (an agent without an entry and no
    agent resolve alike): scope and `unless` read each context's own facts."""
    policy = POLICY.replace("    reviewer:", "    other: {}\n    reviewer:")
    [(passed, failures)] = results(tmp_path, "- never: {tools: [exec], agents: [other]}", policy)
    assert not passed
    named = [line for line in failures.splitlines() if line.endswith("exec is allowed")]
    assert named and all("other" in line for line in named), named


def test_a_matrix_of_more_than_ten_thousand_contexts_gets_a_definite_answer(
    tmp_path: Path,
) -> None:
    """13,824 contexts: at the default settings every one is checked, none sampled."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_scale import generate

    (tmp_path / "big.json").write_text(json.dumps(generate(5)), encoding="utf-8")
    test = tmp_path / "big.test.yaml"
    test.write_text(
        "policy: big.json\ninvariants:\n"
        "  - never: {tools: [gateway]}\n"
        "  - never: {tools: [exec], when: {agent: agent0}}\n",
        encoding="utf-8",
    )
    out = run_test_file(test)
    assert out.contexts_total > 10_000
    assert out.contexts_checked == out.contexts_total
    first, second = out.results
    assert first.passed and first.sample is None
    assert not second.passed and second.sample is None  # agent0 has exec outside its senders
