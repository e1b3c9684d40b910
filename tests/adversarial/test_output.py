"""Output that a policy or a caller cannot take over (issue 11, items 14 and 15): no terminal
escape reaches the terminal, no id breaks a Markdown table or hides a PR comment."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyctl.cli.main import main

ESC = "\x1b"
# erase the line above, then print a fake green summary
FAKE = f"{ESC}[1A{ESC}[2K{ESC}[32m0 errors{ESC}[0m\r\x9b2K\u202e"


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out + out.err


def _raw_controls(text: str) -> list[str]:
    return re.findall("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text)


def test_validate_escapes_source_lines_and_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # raw in the source line that the syntax error quotes
    raw = tmp_path / "raw.json"
    raw.write_text('{"tools": {"deny": ["exec"]}} ' + FAKE + "\n", encoding="utf-8")
    # and escaped inside strings, so the value itself holds them
    escaped = tmp_path / "escaped.json"
    escaped.write_text(json.dumps({"tools": {"deny": [f"ex{FAKE}"], f"k{FAKE}": 1}}))
    for path, code in ((raw, "PC103"), (escaped, "PC201")):
        exit_code, out = _run(["validate", str(path)], capsys)
        assert exit_code == 1
        assert _raw_controls(out) == [], path.name
        assert "\\u001b[2K" in out  # shown, visibly
        assert code in out  # and the real error is still there


@pytest.mark.parametrize("command", ["matrix", "resolve", "explain"])
def test_ids_with_escapes_never_reach_the_terminal(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = f"ev{ESC}]0;owned{ESC}\\il"
    doc = {
        "agents": {"entries": {agent: {"tools": {"deny": ["exec"]}}}},
        "channels": {"slack": {"groups": {f"C{FAKE}": {"tools": {"deny": ["write"]}}}}},
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    args = {
        "matrix": ["matrix", str(path)],
        "resolve": ["resolve", str(path), "--agent", agent, "--group", f"C{FAKE}"],
        "explain": ["explain", str(path), "--agent", agent, "--tool", "exec"],
    }[command]
    _, out = _run(args, capsys)
    assert _raw_controls(out) == []


def test_diff_escapes_ids_in_text_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an id with control characters is refused where it is written (PC301: scope ids are
    # printable ASCII), and the refusal itself shows them escaped, in every format
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    agent = f"a{FAKE}"
    old.write_text(json.dumps({"agents": {"entries": {agent: {"tools": {"deny": ["exec"]}}}}}))
    new.write_text(json.dumps({"agents": {"entries": {agent: {}}}}))
    for fmt in ("text", "json", "markdown"):
        code, out = _run(["diff", str(old), str(new), "--format", fmt], capsys)
        assert code == 2 and "PC301" in out, fmt
        assert _raw_controls(out) == [], fmt
        assert "\\u001b" in out, fmt


HOSTILE_IDS = ["a`b", "x|y", "<!-- hide the rest", "`|`<!-- | a | b |", "[l](j.x)"]


@pytest.mark.parametrize("agent", ["two\nlines", "`|`<!--\n| a | b |"])
def test_an_id_with_a_newline_never_reaches_a_markdown_table(
    tmp_path: Path, agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"agents": {"entries": {agent: {"tools": {"deny": ["exec"]}}}}}))
    new.write_text(json.dumps({"agents": {"entries": {agent: {}}}}))
    code, out = _run(["diff", str(old), str(new), "--format", "markdown"], capsys)
    assert code == 2 and "PC301" in out
    assert "<!--\n" not in out and "| a | b |\n" not in out


@pytest.mark.parametrize("agent", HOSTILE_IDS)
def test_diff_markdown_cannot_be_broken_by_an_id(
    tmp_path: Path, agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"agents": {"entries": {agent: {"tools": {"deny": ["exec"]}}}}}))
    new.write_text(json.dumps({"agents": {"entries": {agent: {}}}}))
    code, out = _run(["diff", str(old), str(new), "--format", "markdown"], capsys)
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    header, *body = rows
    assert body, out
    for row in body:  # every row has exactly the header's cells
        assert row.count("|") == header.count("|"), row
    assert "<!--" not in out and "`" not in out and "[l]" not in out


@given(st.text())
def test_md_literal_leaves_no_markdown_syntax(text: str) -> None:
    from policyctl.escape import md_literal

    out = re.sub("&#[0-9]+;", "", md_literal(text))  # character references are inert
    assert not set(out) & set("`|<>*_[]!#&\\\n\r~")
    assert _raw_controls(out) == []


@given(st.text())
def test_printable_leaves_no_control_characters(text: str) -> None:
    from policyctl.escape import printable

    out = printable(text)
    assert _raw_controls(out) == []
    assert not re.search("[\ud800-\udfff]", out)
    out.encode("utf-8")  # every output format can write it


def test_argument_errors_do_not_echo_escapes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["resolve", "p.yaml", f"--x{FAKE}"])  # "unrecognized arguments: ..." as given
    assert _raw_controls(capsys.readouterr().err) == []


def test_commands_that_print_a_file_print_it_as_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a bidi override in an id is refused where it is written (PC301), and the refusal shows it
    # escaped; text that is data (a bundle) is only ever written from a policy that loaded
    agent = "evil\u202eli"
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"agents": {"entries": {agent: {}}}}), encoding="utf-8")
    code, out = _run(["compile", str(path)], capsys)
    assert code == 2 and "PC301" in out
    assert "\\u202e" in out and agent not in out


def test_explain_call_prints_what_it_decided_on_as_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the model writes the arguments: a newline in them must not start a line of its own in
    # the explanation (it could forge "decided by" or "ALLOW" lines)
    policy = tmp_path / "p.yaml"
    policy.write_text(
        'catalog: openclaw\ntools:\n  profile: coding\n  deny: ["exec(rm *)"]\n', encoding="utf-8"
    )
    call = json.dumps({"command": "echo 'x\n  decided by: nothing'"})
    code, out = _run(
        ["explain", str(policy), "--provider", "openai", "--tool", "exec", "--call", call],
        capsys,
    )
    assert code == 0, out
    shown = [line for line in out.splitlines() if line.lstrip().startswith("decided on:")]
    assert shown and all("\\u000a" in line for line in shown), out
    assert not [line for line in out.splitlines() if line.strip() == "decided by: nothing"]
