"""A policy test can never pass vacuously on a name: a group, a glob, a plugin id or
`bundle-mcp` stands for every tool of the run it matches, and a name that stands for no tool
(a typo) is a failure with a did-you-mean, in `denied`, `allowed`, `only`, `removedBy` and
`never` alike."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from policyctl.testing import run_test_file

POLICY = """\
catalog: openclaw
tools:
  profile: coding
inventory:
  mcp:
    github: {tools: [merge_pr]}
"""


def _run(tmp_path: Path, test: str) -> list[tuple[str, bool, list[str]]]:
    (tmp_path / "p.yaml").write_text(POLICY, encoding="utf-8")
    path = tmp_path / "p.test.yaml"
    path.write_text("policy: p.yaml\n" + textwrap.dedent(test), encoding="utf-8")
    return [(r.name, r.passed, r.failures) for r in run_test_file(path).results]


@pytest.mark.parametrize("name", ["group:runtime", "github__*", "bundle-mcp", "Exec ", "exe*"])
def test_never_on_an_entry_checks_every_tool_it_stands_for(tmp_path: Path, name: str) -> None:
    ((_, passed, failures),) = _run(tmp_path, f'invariants:\n  - never: {{tools: ["{name}"]}}\n')
    assert not passed and any("is allowed" in f for f in failures), failures


@pytest.mark.parametrize("name", ["group:runtime", "github__*", "bundle-mcp", "exec"])
def test_denied_on_an_entry_checks_every_tool_it_stands_for(tmp_path: Path, name: str) -> None:
    case = f'cases:\n  - name: c\n    context: {{provider: openai}}\n    expect: {{denied: ["{name}"]}}\n'
    ((_, passed, failures),) = _run(tmp_path, case)
    assert not passed and any("but it is allowed" in f for f in failures), failures


@pytest.mark.parametrize("key", ["denied", "allowed", "only"])
def test_a_misspelt_name_fails_with_a_did_you_mean(tmp_path: Path, key: str) -> None:
    case = f"cases:\n  - name: c\n    context: {{provider: openai}}\n    expect: {{{key}: [exce]}}\n"
    ((_, passed, failures),) = _run(tmp_path, case)
    assert not passed
    assert any('"exce" names no tool' in f and 'did you mean "exec"' in f for f in failures)


def test_a_misspelt_name_in_never_and_removed_by_fails(tmp_path: Path) -> None:
    results = _run(
        tmp_path,
        """\
        cases:
          - name: c
            context: {provider: openai}
            expect: {removedBy: {exce: 3}}
        invariants:
          - never: {tools: [exce]}
        """,
    )
    assert [passed for _, passed, _ in results] == [False, False]
    assert all(any("names no tool" in f for f in failures) for _, _, failures in results)


def test_a_group_whose_tools_are_all_denied_passes(tmp_path: Path) -> None:
    # the expansion is not a blanket failure: it passes when the policy does deny them
    denying = POLICY.replace("profile: coding", "profile: coding\n  deny: [group:runtime]")
    (tmp_path / "d.yaml").write_text(denying, encoding="utf-8")
    path = tmp_path / "d.test.yaml"
    path.write_text(
        "policy: d.yaml\ninvariants:\n  - never: {tools: [group:runtime]}\n"
        "cases:\n  - name: c\n    context: {provider: openai}\n"
        "    expect: {denied: [group:runtime], allowed: [github__*]}\n",
        encoding="utf-8",
    )
    assert [r.passed for r in run_test_file(path).results] == [True, True]
