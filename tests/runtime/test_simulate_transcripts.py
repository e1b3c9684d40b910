"""`policyctl simulate` reads a transcript of model output: any line is a diagnostic, never a
traceback, and tool names reach the terminal escaped."""

from __future__ import annotations

from pathlib import Path

import pytest

from policyctl.cli.main import main


def simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str) -> tuple[int, str, str]:
    policy = tmp_path / "p.yaml"
    policy.write_text("tools: {profile: coding}\n")
    calls = tmp_path / "calls.jsonl"
    calls.write_text('{"tool": "read"}\n' + line + "\n", encoding="utf-8")
    code = main(["simulate", str(policy), "--calls", str(calls), "--provider", "openai"])
    out, err = capsys.readouterr()
    return code, out, err


DEEP = "[" * 3000 + "]" * 3000


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"tool": "read", "params": {"a": ' + DEEP + "}}", "PC107 nesting deeper than"),
        ('{"tool": "read", "params": "' + "[" * 3000 + '"}', "params is a string that is not"),
        ('{"tool": "\\ud800"}', "lone UTF-16 surrogate"),
        ('{"tool": "x\\udfffy"}', "lone UTF-16 surrogate"),
    ],
)
def test_a_line_no_report_can_show_is_a_located_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, problem: str
) -> None:
    code, out, err = simulate(tmp_path, capsys, line)
    assert code == 2 and "calls.jsonl:2:" in err and problem in err
    assert "Traceback" not in err and out == ""


def test_tool_names_are_printed_with_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = simulate(tmp_path, capsys, '{"tool": "x\\u001b[2J\\u0007y\\\\z"}')
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    assert "x\\x1b[2J\\x07y\\\\z  REFUSED" in out
