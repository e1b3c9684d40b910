"""The tools around call rules: policy tests' `calls:`, simulate, diff (rule changes and
decision changes, `--fail-on-widen`) and matrix, on policies that carry call rules."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from policyctl.cli.main import main

POLICY = """\
catalog: openclaw
tools:
  profile: coding
  deny: ["exec(rm *)", "exec(sudo *)", "read(**/.env)"]
  ask: ["exec(git push *)"]
agents:
  entries:
    coder:
      tools:
        allow: ["exec(git *)", "exec(npm test *)", read, write, edit]
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- policy tests: calls --------------------------------------------------------------------


def test_call_cases_pass_and_name_the_deciding_layer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "p.yaml", POLICY)
    test = write(
        tmp_path,
        "p.test.yaml",
        """\
        policy: p.yaml
        cases:
          - name: coder calls
            context: {agent: coder}
            calls:
              - {tool: exec, args: {command: git status}, expect: allow, decidedBy: 5}
              - {tool: exec, args: {command: git push origin main}, expect: ask, decidedBy: global}
              - tool: exec
                args: {command: "git log && rm -rf /"}
                expect: deny
                decidedBy: tools.allow
              - {tool: exec, args: {command: make}, expect: deny, decidedBy: agent}
              - {tool: read, args: {path: app/.env}, expect: deny, decidedBy: 3}
              - {tool: browser, args: {}, expect: deny}
        """,
    )
    code, out, err = run(capsys, "test", str(test))
    assert code == 0, out + err
    assert "1 passed, 0 failed" in out


def test_a_failing_call_case_says_which_layer_and_entry_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "p.yaml", POLICY)
    test = write(
        tmp_path,
        "p.test.yaml",
        """\
        policy: p.yaml
        cases:
          - name: wrong expectations
            context: {agent: coder}
            calls:
              - {tool: exec, args: {command: rm -rf build}, expect: allow}
              - {tool: exec, args: {command: git push}, expect: ask, decidedBy: agent}
        """,
    )
    code, out, _ = run(capsys, "test", str(test))
    assert code == 1
    assert 'expected exec {"command": "rm -rf build"} to be allow, but it is deny' in out
    assert 'by "exec(rm *)" (deny rule) at tools.deny' in out  # the list it is written in
    assert "p.yaml:4:" in out  # where the deny entry is written
    assert "to be decided by layer agent, but layer 3 (tools.ask) decided it" in out


def test_call_case_schema_errors_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "p.yaml", POLICY)
    test = write(
        tmp_path,
        "p.test.yaml",
        """\
        policy: p.yaml
        cases:
          - name: typo
            calls:
              - {tool: exec, args: {command: ls}, expect: maybe}
        """,
    )
    code, _, err = run(capsys, "test", str(test))
    assert code == 2
    assert "p.test.yaml:5:" in err and "PC2" in err


# -- simulate -------------------------------------------------------------------------------


def test_simulate_reports_calls_that_call_rules_deny_or_ask(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write(tmp_path, "p.yaml", POLICY)
    calls = write(
        tmp_path,
        "calls.jsonl",
        '{"tool": "exec", "args": {"command": "git status"}}\n'
        '{"tool": "exec", "args": {"command": "git push origin main"}}\n'
        '{"tool": "exec", "params": {"command": "sudo rm -rf /"}}\n'
        '{"tool": "exec", "args": {"command": "make"}, "context": {"agent": "coder"}}\n'
        '{"tool": "exec", "args": {"command": "make"}}\n',
    )
    code, out, _ = run(capsys, "simulate", str(policy), "--calls", str(calls))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].endswith("allowed")
    assert "NEEDS APPROVAL" in lines[1] and "exec(git push *)" in lines[1]
    assert "DENIED by call rules" in lines[2] and "exec(sudo *)" in lines[2]
    assert "DENIED by call rules" in lines[3] and "callDefault" in lines[3]
    assert lines[4].endswith("allowed")  # no agent: the coder's allow list does not apply
    assert "2 denied by call rules, 1 need approval" in lines[-1]
    code, out, _ = run(capsys, "simulate", str(policy), "--calls", str(calls), "--format", "json")
    rows = json.loads(out)["calls"]
    assert [r["verdict"] for r in rows] == ["allowed", "ask", "denied", "denied", "allowed"]
    assert rows[2]["decidedBy"]["entry"] == "exec(sudo *)"
    assert rows[2]["decidedBy"]["source"].endswith("p.yaml:4:24")
    assert rows[3]["context"]["agent"] == "coder" and "context" not in rows[4]


def test_simulate_refuses_a_bad_corpus_with_its_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write(tmp_path, "p.yaml", POLICY)
    calls = write(tmp_path, "calls.jsonl", '{"tool": "exec"}\n{"tool": "exec", "arg": {}}\n')
    code, out, err = run(capsys, "simulate", str(policy), "--calls", str(calls))
    assert code == 2 and out == ""
    assert "calls.jsonl:2:18" in err and "PC365" in err


# -- diff -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("new_tools", "change", "before", "after"),
    [
        # deny -> allow: the deny rule is removed
        (
            'deny: ["exec(sudo *)", "read(**/.env)"]\n  ask: ["exec(git push *)"]',
            'deny rule "exec(rm *)" removed',
            "deny",
            "allow",
        ),
        # deny -> ask: moved from deny to ask
        (
            'deny: ["exec(sudo *)", "read(**/.env)"]\n  ask: ["exec(git push *)", "exec(rm *)"]',
            'deny rule "exec(rm *)" removed',
            "deny",
            "ask",
        ),
    ],
)
def test_diff_call_rule_widening_fails_the_gate(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    new_tools: str,
    change: str,
    before: str,
    after: str,
) -> None:
    old = write(tmp_path, "old.yaml", POLICY)
    new_text = POLICY.replace(
        'deny: ["exec(rm *)", "exec(sudo *)", "read(**/.env)"]\n  ask: ["exec(git push *)"]',
        new_tools,
    )
    assert new_text != POLICY
    new = write(tmp_path, "new.yaml", new_text)
    calls = write(tmp_path, "calls.jsonl", '{"tool": "exec", "args": {"command": "rm -rf x"}}\n')
    code, out, _ = run(capsys, "diff", str(old), str(new), "--fail-on-widen")
    assert code == 1
    assert change in out and "widen: exec at tools.allow" in out
    code, out, _ = run(
        capsys, "diff", str(old), str(new), "--calls", str(calls), "--format", "json"
    )
    data = json.loads(out)
    assert data["widened"] is True
    moved = data["callChanges"]
    assert moved and all(c["before"] == before and c["after"] == after for c in moved)
    assert moved[0]["kind"] == "widen" and "exec(rm *)" in moved[0]["why"]


def test_diff_ask_to_allow_is_widening_and_a_narrowing_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write(tmp_path, "old.yaml", POLICY)
    looser = write(tmp_path, "looser.yaml", POLICY.replace('ask: ["exec(git push *)"]', "ask: []"))
    calls = write(tmp_path, "calls.jsonl", '{"tool": "exec", "args": {"command": "git push"}}\n')
    code, out, _ = run(capsys, "diff", str(old), str(looser), "--calls", str(calls))
    assert "ask -> allow" in out and "(widen)" in out
    code, _, _ = run(capsys, "diff", str(old), str(looser), "--fail-on-widen")
    assert code == 1
    # the other way round narrows: the gate passes, and the decisions say why
    code, out, _ = run(
        capsys, "diff", str(looser), str(old), "--calls", str(calls), "--fail-on-widen"
    )
    assert code == 0, out
    assert "allow -> ask" in out and "(narrow)" in out and "now ask" in out


def test_diff_without_call_rule_changes_reports_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write(tmp_path, "old.yaml", POLICY)
    calls = write(tmp_path, "calls.jsonl", '{"tool": "exec", "args": {"command": "rm x"}}\n')
    code, out, _ = run(capsys, "diff", str(old), str(old), "--calls", str(calls), "--fail-on-widen")
    assert code == 0
    assert "no recorded call is decided differently" in out
    assert "call rules:" not in out


# -- matrix ---------------------------------------------------------------------------------


def test_matrix_marks_the_tools_whose_calls_call_rules_decide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write(tmp_path, "p.yaml", POLICY)
    code, out, _ = run(capsys, "matrix", str(policy), "--tool", "exec", "--tool", "ls")
    assert code == 0
    assert "ok+ = allowed, its calls decided by call rules" in out
    code, out, _ = run(capsys, "matrix", str(policy), "--format", "json", "--agent", "coder")
    rows = json.loads(out)["rows"]
    main_row = next(r for r in rows if r["context"] == "agent=coder sender=(anonymous)")
    assert main_row["cells"]["exec"] == "ok+" and main_row["cells"]["write"] == "ok"
    assert main_row["callRules"]["exec"] == ["tools.allow", "agents.coder.tools.allow"]
    assert "write" not in main_row["callRules"]


def test_groups_that_differ_only_in_call_rules_are_different_places(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = """\
    catalog: openclaw
    tools: {profile: coding}
    channels:
      slack:
        groups:
          G1: {tools: {deny: [theme, "exec(rm *)"]}}
          G2: {tools: {deny: [theme]}}
    """
    old = write(tmp_path, "old.yaml", text)
    new = write(
        tmp_path, "new.yaml", text.replace("deny: [theme]}}", 'deny: [theme, "exec(rm *)"]}}')
    )
    _, out, _ = run(capsys, "diff", str(new), str(old), "--format", "json")
    changes = json.loads(out)["callRuleChanges"]
    assert changes and all("group=slack/G2" in c for ch in changes for c in ch["contexts"])
    assert (
        changes[0]["kind"] == "widen" and changes[0]["change"] == 'deny rule "exec(rm *)" removed'
    )


def test_coverage_counts_the_call_rules_that_decided_a_call(tmp_path: Path) -> None:
    from policyctl.analysis.testing import run_test_file

    write(tmp_path, "p.yaml", POLICY)
    test = write(
        tmp_path,
        "p.test.yaml",
        """\
        policy: p.yaml
        cases:
          - name: one call
            context: {agent: coder}
            calls:
              - {tool: exec, args: {command: sudo ls}, expect: deny}
              - {tool: exec, args: {command: git push}, expect: ask}
        """,
    )
    result = run_test_file(test, coverage=True)
    never = {e.raw for e in result.uncovered()}
    assert {"exec(rm *)", "read(**/.env)"} <= never
    assert not never & {"exec(sudo *)", "exec(git push *)", "exec(git *)"}


def test_a_misspelt_tool_or_layer_fails_instead_of_passing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "p.yaml", POLICY)
    test = write(
        tmp_path,
        "p.test.yaml",
        """\
        policy: p.yaml
        cases:
          - name: typos
            context: {agent: coder}
            calls:
              - {tool: exce, args: {command: rm -rf x}, expect: deny}
              - {tool: exec, args: {command: rm -rf x}, expect: deny, decidedBy: globl}
              - {tool: exec, args: {command: rm -rf x}, expect: deny, decidedBy: 12}
        """,
    )
    code, out, _ = run(capsys, "test", str(test))
    assert code == 1
    assert 'no tool "exce" in this run\'s inventory; did you mean "exec"?' in out
    assert 'decidedBy "globl" names no layer: did you mean "global"?' in out
    assert "decidedBy 12: layers are numbered 1 to 11" in out
