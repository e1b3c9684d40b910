"""Policy tests, the context matrix and the impact diff (issue: review a change before it ships)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, ROOT

from policyctl import load_policy
from policyctl.analysis.diff import diff_policies
from policyctl.analysis.matrix import context_matrix
from policyctl.analysis.revision import load_revision
from policyctl.analysis.testing import run_test_file
from policyctl.cli.main import main

BASE: dict[str, Any] = {
    "catalog": "openclaw",
    "tools": {
        "profile": "coding",
        "deny": ["x_search"],
        "byProvider": {"openai": {"profile": "messaging", "deny": ["personal_instructions"]}},
        "toolsBySender": {"id:42": {"deny": ["memory_search"]}},
        "sandbox": {"tools": {"deny": ["exec", "browser"]}},
        "subagents": {"tools": {"deny": ["write"]}},
    },
    "agents": {
        "defaults": {"sandbox": {"mode": "non-main"}},
        "entries": {
            "coder": {
                "tools": {
                    "deny": ["edit"],
                    "byProvider": {"openai": {"deny": ["decision_evaluate"]}},
                }
            }
        },
    },
    "channels": {"slack": {"groups": {"C1": {"tools": {"deny": ["sessions_list"]}}}}},
}


def _set(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


# layer -> (the change that widens it, a tool it gives back, the rule the diff must name)
WIDENINGS = {
    1: (("tools", "alsoAllow"), ["canvas"], "canvas", "tools.profile"),
    2: (
        ("tools", "byProvider", "openai", "profile"),
        "coding",
        "exec",
        "byProvider.openai.profile",
    ),
    3: (("tools", "deny"), [], "x_search", "tools.deny"),
    4: (
        ("tools", "byProvider", "openai", "deny"),
        [],
        "personal_instructions",
        "tools.byProvider.openai.deny",
    ),
    5: (
        ("agents", "entries", "coder", "tools", "deny"),
        [],
        "edit",
        "agents.entries.coder.tools.deny",
    ),
    6: (
        ("agents", "entries", "coder", "tools", "byProvider", "openai", "deny"),
        [],
        "decision_evaluate",
        "agents.entries.coder.tools.byProvider.openai.deny",
    ),
    7: (
        ("channels", "slack", "groups", "C1", "tools", "deny"),
        [],
        "sessions_list",
        "channels.slack.groups.C1.tools.deny",
    ),
    8: (
        ("tools", "toolsBySender", "id:42", "deny"),
        [],
        "memory_search",
        'tools.toolsBySender["id:42"].deny',
    ),
    9: (("tools", "sandbox", "tools", "deny"), ["browser"], "exec", "tools.sandbox.tools.deny"),
    10: (("tools", "subagents", "tools", "deny"), [], "write", "tools.subagents.tools.deny"),
}


def _write(tmp: Path, name: str, doc: dict[str, Any]) -> Path:
    path = tmp / name
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


@pytest.mark.parametrize("layer", sorted(WIDENINGS))
def test_diff_catches_a_widening_through_each_layer(
    tmp_path: Path, layer: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path, value, tool, rule = WIDENINGS[layer]
    old = _write(tmp_path, "old.json", BASE)
    new = _write(tmp_path, "new.json", _set(BASE, path, value))
    result = diff_policies(load_policy(old), load_policy(new), old_name="old", new_name="new")
    gains = [c for c in result.changes if c.direction == "gain" and tool in c.tools]
    assert gains, result.changes
    assert any(rule in c.rule for c in gains), [c.rule for c in gains]
    assert all(
        c.where and c.where.startswith(str(old)) for c in gains if "allow list" not in c.rule
    )
    assert main(["diff", str(old), str(new), "--fail-on-widen"]) == 1
    assert main(["diff", str(old), str(old), "--fail-on-widen"]) == 0
    capsys.readouterr()


def test_diff_catches_a_widening_through_extends(tmp_path: Path) -> None:
    (tmp_path / "strict.yaml").write_text("tools:\n  deny: [exec, process]\n", encoding="utf-8")
    (tmp_path / "loose.yaml").write_text("tools:\n  deny: [process]\n", encoding="utf-8")
    old = tmp_path / "old.yaml"
    old.write_text("extends: strict.yaml\ntools: {profile: coding}\n", encoding="utf-8")
    new = tmp_path / "new.yaml"
    new.write_text("extends: loose.yaml\ntools: {profile: coding}\n", encoding="utf-8")
    result = diff_policies(load_policy(old), load_policy(new), old_name="old", new_name="new")
    assert result.widened
    gain = next(c for c in result.changes if c.direction == "gain")
    assert gain.tools == ("exec",) and gain.where == f"{tmp_path / 'strict.yaml'}:2:10"


def test_diff_reports_narrowing_with_the_new_rule(tmp_path: Path) -> None:
    old = _write(tmp_path, "old.json", BASE)
    new = _write(tmp_path, "new.json", _set(BASE, ("tools", "deny"), ["x_search", "exec"]))
    result = diff_policies(load_policy(old), load_policy(new), old_name="old", new_name="new")
    assert not result.widened
    lose = [c for c in result.changes if c.direction == "lose"]
    assert any(
        "exec" in c.tools and c.rule.startswith("tools.deny") and str(new) in (c.where or "")
        for c in lose
    )


def test_diff_against_a_git_revision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def git(*args: str) -> None:
        subprocess.run(
            ["git", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            env={
                "GIT_AUTHOR_NAME": "t",
                "GIT_AUTHOR_EMAIL": "t@e",
                "PATH": "/usr/bin:/bin",
                "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@e",
                "HOME": str(tmp_path),
            },
        )

    git("init", "-q")
    (tmp_path / "base.yaml").write_text("tools:\n  deny: [exec]\n", encoding="utf-8")
    (tmp_path / "policy.yaml").write_text("extends: base.yaml\n", encoding="utf-8")
    git("add", ".")
    git("commit", "-qm", "strict")
    (tmp_path / "base.yaml").write_text("tools:\n  deny: []\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    old = load_revision("HEAD:policy.yaml")
    result = diff_policies(
        old, load_policy("policy.yaml"), old_name="HEAD:policy.yaml", new_name="policy.yaml"
    )
    assert result.widened and any("exec" in c.tools for c in result.changes)


def test_matrix_is_a_product_of_what_the_file_mentions() -> None:
    policy = load_policy(EXAMPLES / "chatbot.yaml")
    matrix = context_matrix(policy, max_contexts=100_000)
    labels = [c.label for c in matrix.contexts]
    assert len(labels) == len(set(labels)) == matrix.total
    assert not matrix.sampled
    assert any("group=slack/acme-enterprise/C0SECURE" in label for label in labels)
    assert any("sender=username:ada" in label for label in labels)
    sampled = context_matrix(policy, max_contexts=10)
    assert sampled.sampled and len(sampled.contexts) == 10
    assert [c.label for c in context_matrix(policy, 10).contexts] == [
        c.label for c in sampled.contexts
    ]


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.test.*")))
def test_shipped_examples_pass_their_policy_tests(name: str) -> None:
    result = run_test_file(EXAMPLES / name)
    assert result.results and result.failed == 0, [r.failures for r in result.results]


def test_failing_case_shows_the_trail(tmp_path: Path) -> None:
    # the policy a test file names is confined to its directory tree (or repository)
    shutil.copy(EXAMPLES / "team.yaml", tmp_path / "team.yaml")
    test = tmp_path / "t.yaml"
    test.write_text(
        "policy: team.yaml\n"
        "cases:\n"
        "  - name: reviewer may write\n"
        "    context: {agent: reviewer}\n"
        "    expect: {allowed: [write], removedBy: {exec: 3}}\n"
        "invariants:\n"
        "  - never: {tools: [read]}\n",
        encoding="utf-8",
    )
    result = run_test_file(test)
    case, invariant = result.results
    assert not case.passed and case.source is not None and case.source.line == 3
    assert case.failures[0] == "expected write allowed, but it is not"
    assert case.failures[1].startswith("  write: removed at layer 5 (agents.reviewer.tools.allow)")
    assert any(
        "expected exec removed by layer 3, but it is removed at stage 5" in f for f in case.failures
    )
    assert not invariant.passed and "read is allowed" in invariant.failures[0]


def test_coverage_reports_entries_no_case_exercises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the policy a test file names is confined to its directory tree (or repository)
    shutil.copy(EXAMPLES / "team.yaml", tmp_path / "team.yaml")
    test = tmp_path / "t.yaml"
    test.write_text(
        "policy: team.yaml\ncases:\n  - name: coder\n"
        "    context: {agent: coder}\n    expect: {denied: [secrets]}\n",
        encoding="utf-8",
    )
    result = run_test_file(test, coverage=True)
    uncovered = {e.key for e in result.uncovered()}
    assert "agents.entries.coder.tools.deny[0]" not in uncovered  # decided the case
    assert "agents.entries.reviewer.tools.byProvider.openai.deny[0]" in uncovered
    assert main(["test", str(test), "--min-coverage", "90"]) == 1
    assert main(["test", str(test), "--min-coverage", "10"]) == 0
    out = capsys.readouterr().out
    assert (
        'never decided: "web_fetch" agents.entries.reviewer.tools.byProvider.openai.deny[0]' in out
    )


def test_invalid_test_file_is_a_located_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test = tmp_path / "t.yaml"
    test.write_text(
        "policy: x.yaml\ncases:\n  - name: a\n    expect: {denyed: [exec]}\n", encoding="utf-8"
    )
    assert main(["test", str(test)]) == 2
    err = capsys.readouterr().err
    assert f'{test}:4:14: PC201 unknown key "denyed"' in err and 'did you mean "denied"?' in err


def test_policy_test_sarif_is_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema_path = ROOT.parent / "shared" / "vendor" / "sarif-schema-2.1.0.json"
    if not schema_path.exists():
        pytest.skip(f"SARIF schema not found at {schema_path}")
    import jsonschema

    # the policy a test file names is confined to its directory tree (or repository)
    shutil.copy(EXAMPLES / "team.yaml", tmp_path / "team.yaml")
    test = tmp_path / "t.yaml"
    test.write_text(
        "policy: team.yaml\ncases:\n  - name: bad\n"
        "    context: {agent: reviewer}\n    expect: {allowed: [exec]}\n",
        encoding="utf-8",
    )
    assert main(["test", "--format", "sarif", str(test)]) == 1
    log = json.loads(capsys.readouterr().out)
    jsonschema.validate(log, json.loads(schema_path.read_text(encoding="utf-8")))
    assert log["runs"][0]["results"][0]["ruleId"] == "PT001"


@pytest.mark.parametrize("spec", ["--output={out}:x.yaml", "-p:x.yaml", "HEAD:-x.yaml"])
def test_diff_revision_is_never_a_git_option(
    tmp_path: Path, spec: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # F28: an OLD argument starting with "-" reached `git show` as an option (`--output=FILE`
    # made git write FILE); it is refused before git runs
    out = tmp_path / "written"
    spec = spec.format(out=out)
    assert main(["diff", "--", spec, str(EXAMPLES / "team.yaml")]) == 2
    assert "may not start with '-'" in capsys.readouterr().err
    assert not out.exists() and not Path(f"{out}:x.yaml").exists()


@pytest.mark.parametrize("value", ["0", "-1"])
def test_max_contexts_below_one_is_refused_by_diff_and_test(
    tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # F27: `--max-contexts 0` compared zero contexts, so every widening and invariant passed
    wide = tmp_path / "wide.yaml"
    team = (EXAMPLES / "team.yaml").read_text(encoding="utf-8")
    wide.write_text(team.replace("deny: [secrets, ", "deny: ["), encoding="utf-8")
    test = tmp_path / "wide.test.yaml"
    test.write_text(
        f"policy: {wide}\ninvariants:\n  - never: {{tools: [secrets]}}\n", encoding="utf-8"
    )
    team_path = str(EXAMPLES / "team.yaml")
    assert main(["diff", team_path, str(wide), "--fail-on-widen"]) == 1
    assert main(["diff", "--max-contexts", value, team_path, str(wide), "--fail-on-widen"]) == 2
    assert main(["test", "--max-contexts", value, str(test)]) == 2
    assert main(["matrix", "--max-contexts", value, team_path]) == 2
    assert capsys.readouterr().err.count("--max-contexts must be >= 1") == 3
    with pytest.raises(ValueError):
        run_test_file(test, max_contexts=int(value))
    with pytest.raises(ValueError):
        policy = load_policy(team_path)
        diff_policies(policy, policy, old_name="a", new_name="b", max_contexts=int(value))


def _hidden_widening(tmp: Path) -> tuple[Path, Path, Path]:
    """F22's policies: sender u7 of agent z gains exec, a cell a small sample misses."""
    s = "tools:\n  profile: coding\nagents:\n  defaults:\n    tools: {deny: [exec]}\n  entries:\n"
    s += "".join(f"    a{i}: {{tools: {{deny: [exec, x{i}]}}}}\n" for i in range(40))
    s += "    z:\n      tools:\n        toolsBySender:\n          '*': {deny: [exec]}\n"
    s += "".join(
        f"          'id:u{i}': {{deny: [{'exec, ' if i != 7 else ''}y{i}]}}\n" for i in range(40)
    )
    s += "channels:\n  slack:\n    groups:\n"
    s += "".join(f"      C{i}: {{tools: {{deny: [exec, g{i}]}}}}\n" for i in range(40))
    s += "      '*': {tools: {deny: [exec]}}\n"
    new, old, test = tmp / "pol2.yaml", tmp / "pol.yaml", tmp / "pol2.test.yaml"
    new.write_text(s, encoding="utf-8")
    old.write_text(s.replace("'id:u7': {deny: [y7]}", "'id:u7': {deny: [exec, y7]}"), "utf-8")
    test.write_text("policy: pol2.yaml\ninvariants:\n  - never: {tools: [exec]}\n", "utf-8")
    return old, new, test


def test_a_sampled_check_is_inconclusive_not_a_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # F22: on a sampled matrix `test` printed PASS and `diff --fail-on-widen` exited 0 while
    # one cell the sample missed allows exec
    old, new, test = _hidden_widening(tmp_path)
    assert main(["test", "--max-contexts", "200", str(test)]) == 1
    out = capsys.readouterr().out
    assert "INCONCLUSIVE invariant never: exec" in out and "PASS" not in out
    assert "0 passed, 0 failed, 1 inconclusive (sampled)" in out
    assert main(["test", "--max-contexts", "200", "--format", "junit", str(test)]) == 1
    assert 'failures="1"' in capsys.readouterr().out
    assert main(["test", "--max-contexts", "200", "--allow-sampled", str(test)]) == 0
    assert "accepted by --allow-sampled" in capsys.readouterr().out

    diff = ["diff", "--max-contexts", "200", str(old), str(new), "--fail-on-widen"]
    assert main(diff) == 1
    out = capsys.readouterr().out
    assert "INCONCLUSIVE (sampled)" in out and "\nnot widened" not in out
    assert main([*diff, "--allow-sampled"]) == 0
    capsys.readouterr()
    assert main([*diff[:-1], "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["conclusive"] is False
    # a widening found in a sample is conclusive, and a full matrix is unaffected
    team, wide = str(EXAMPLES / "team.yaml"), tmp_path / "wide.yaml"
    wide.write_text(
        (EXAMPLES / "team.yaml").read_text("utf-8").replace("deny: [secrets, ", "deny: ["), "utf-8"
    )
    assert main(["diff", team, team, "--fail-on-widen"]) == 0
    assert main(["diff", "--max-contexts", "100", team, str(wide), "--fail-on-widen"]) == 1
    assert "WIDENED" in capsys.readouterr().out


@pytest.mark.parametrize("session", ["{mainKey: work}", "{scope: global}"])
def test_diff_sees_a_change_of_which_session_is_main(
    tmp_path: Path, session: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # F9: the matrix had only the keys `main` and a non-main one, so a change of
    # session.mainKey / session.scope (which sessions escape the non-main sandbox) was
    # "not widened"
    body = "tools:\n  profile: coding\nagents:\n  defaults:\n    sandbox: {mode: non-main}\n"
    old = tmp_path / "old.yaml"
    old.write_text("session: {mainKey: main}\n" + body, encoding="utf-8")
    new = tmp_path / "new.yaml"
    new.write_text(f"session: {session}\n" + body, encoding="utf-8")
    key = "work" if "work" in session else "global"
    result = diff_policies(load_policy(old), load_policy(new), old_name="o", new_name="n")
    gains = [c for c in result.changes if c.direction == "gain"]
    assert any("secrets" in c.tools for c in gains)
    assert all(f"session={key}" in label for c in gains for label in c.contexts)
    assert main(["diff", str(old), str(new), "--fail-on-widen"]) == 1
    assert main(["diff", str(new), str(old), "--fail-on-widen"]) == 0  # narrowing
    assert main(["diff", str(new), str(new), "--fail-on-widen"]) == 0
    capsys.readouterr()
