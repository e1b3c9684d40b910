"""A policy test can never pass vacuously on a name: a group, a glob, a plugin id or
`bundle-mcp` stands for every tool of the run it matches, and a name that stands for no tool
(a typo) is a failure with a did-you-mean, in `denied`, `allowed`, `only`, `removedBy` and
`never` alike."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from policyctl.analysis.testing import run_test_file

POLICY = """\
catalog: openclaw
tools:
  profile: coding
inventory:
  mcp:
    github: {tools: [merge_pr]}
"""

CASE = "cases:\n  - name: c\n    context: {provider: openai}\n"


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
    case = CASE + f'    expect: {{denied: ["{name}"]}}\n'
    ((_, passed, failures),) = _run(tmp_path, case)
    assert not passed and any("but it is allowed" in f for f in failures), failures


@pytest.mark.parametrize("key", ["denied", "allowed", "only"])
def test_a_misspelt_name_fails_with_a_did_you_mean(tmp_path: Path, key: str) -> None:
    case = (
        f"cases:\n  - name: c\n    context: {{provider: openai}}\n    expect: {{{key}: [exce]}}\n"
    )
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


# -- the policy a test file names ------------------------------------------------------------

SECRET = "AWS_SECRET_ACCESS_KEY=AKIA_SUPERSECRET"


@pytest.mark.parametrize(
    "named",
    ["../.env", "../.git-credentials", "../outside/policy.yaml", "{abs}/.env"],
)
def test_a_test_file_cannot_name_a_file_outside_its_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], named: str
) -> None:
    from policyctl.cli.main import main

    (tmp_path / ".env").write_text(SECRET + "\n", encoding="utf-8")
    (tmp_path / ".git-credentials").write_text(SECRET + "\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "policy.yaml").write_text(SECRET + "\n", encoding="utf-8")
    tests = tmp_path / "tests"
    tests.mkdir()
    test = tests / "a.test.yaml"
    test.write_text(f"policy: {named.format(abs=tmp_path)}\ncases: []\n", encoding="utf-8")
    for command in (["test", str(test)], ["validate", str(test)]):
        assert main(command) != 0
        out = capsys.readouterr()
        assert "PC113" in out.out + out.err
        assert "SUPERSECRET" not in out.out + out.err


def test_in_a_repository_a_named_file_is_never_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # inside the repository (a CI step may have written a credentials file there) the file
    # may be named, but a test run never quotes its lines
    from policyctl.cli.main import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "gha-creds.json").write_text(
        '{"type": "service_account",\n "private_key": "SUPERSECRET"}\n', encoding="utf-8"
    )
    tests = tmp_path / "tests"
    tests.mkdir()
    test = tests / "a.test.yaml"
    test.write_text("policy: ../gha-creds.json\ncases: []\n", encoding="utf-8")
    assert main(["test", str(test)]) == 2
    out = capsys.readouterr()
    assert "PC201" in out.err and "SUPERSECRET" not in out.out + out.err


def test_a_policy_up_the_repository_tree_is_still_found(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.yaml").write_text(POLICY, encoding="utf-8")
    tests = tmp_path / "tests"
    tests.mkdir()
    test = tests / "p.test.yaml"
    test.write_text(
        "policy: ../policies/p.yaml\ncases:\n  - name: c\n    context: {provider: openai}\n"
        "    expect: {allowed: [exec]}\n",
        encoding="utf-8",
    )
    assert [r.passed for r in run_test_file(test).results] == [True]
