"""The command line: resolve and explain on the shipped examples, errors as diagnostics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES

from policyctl.cli.main import main


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_resolve_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys,
        "resolve",
        str(EXAMPLES / "team.yaml"),
        "--agent",
        "coder",
        "--provider",
        "openai",
        "--format",
        "json",
    )
    data = json.loads(out)
    assert code == 0
    assert set(data) == {"context", "allowed", "removed", "layers", "warnings", "callRules"}
    assert {r["entry"] for r in data["callRules"]["exec"]} >= {"exec(rm *)", "exec(git push *)"}
    assert data["context"]["agent"] == "coder"
    assert [layer["stage"] for layer in data["layers"]] == list(range(1, 12))
    secrets = next(r for r in data["removed"] if r["tool"] == "secrets")
    assert secrets == {
        "tool": "secrets",
        "stage": 5,
        "label": "agents.entries.coder.tools.deny",  # a deny removal names its list
        "kind": "deny",
        "entry": "secrets",
        "expandedFrom": None,
        "source": {"file": str(EXAMPLES / "team.yaml"), "line": 46, "column": 16},
    }
    screen = next(r for r in data["removed"] if r["tool"] == "screen")
    assert screen["entry"] == "group:ui" and screen["expandedFrom"] == "group:ui"
    gateway = next(r for r in data["removed"] if r["tool"] == "gateway")
    assert gateway["stage"] == 0 and gateway["kind"] == "owner-only"


def test_resolve_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys,
        "resolve",
        str(EXAMPLES / "chatbot.yaml"),
        "--agent",
        "support",
        "--session-key",
        "agent:support:slack:acme-enterprise:group:C0SECURE",
    )
    assert code == 0
    assert "allowed (4): read, web_search, session_status, skills_read" in out
    assert "layer  7 group tools.allow:" in out


def test_explain_names_entry_line_and_fix(capsys: pytest.CaptureFixture[str]) -> None:
    team = str(EXAMPLES / "team.yaml")
    code, out, _ = cli(capsys, "explain", team, "--agent", "coder", "--tool", "screen", "--trail")
    assert code == 0  # an explanation is an answer, not a finding
    lines = out.splitlines()
    assert lines[0] == "screen: REMOVED at layer 3 (tools.deny)"
    assert lines[1] == '  rule:  deny entry "group:ui" (expands to screen)'
    assert lines[2] == f"  where: {team}:23:7"
    assert 'remove "group:ui" (it expands to screen) from tools.deny' in out
    assert "  [ 3] tools.deny: applied, removed screen" in lines  # the list that removed it
    assert "  [ 4] tools.byProvider.allow: skipped (no provider in context)" in lines


def test_explain_allowed_tool(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys, "explain", str(EXAMPLES / "team.yaml"), "--agent", "coder", "--tool", "exec"
    )
    assert code == 0 and out.startswith("exec: ALLOWED")


def test_explain_json_decision(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys,
        "explain",
        str(EXAMPLES / "team.yaml"),
        "--agent",
        "reviewer",
        "--tool",
        "write",
        "--format",
        "json",
    )
    data = json.loads(out)
    assert code == 0
    assert data["decision"]["tool"] == "write" and data["decision"]["kind"] == "allow"
    assert data["decision"]["stage"] == 5


def test_explain_sandbox_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys,
        "explain",
        str(EXAMPLES / "chatbot.yaml"),
        "--agent",
        "support",
        "--session-key",
        "agent:support:slack:group:C0ENGINEERING",
        "--tool",
        "sessions",
    )
    assert code == 0
    assert 'Tool "sessions" blocked by sandbox tool policy (mode=non-main).' in out


def test_explain_summary_without_tool(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "explain", str(EXAMPLES / "team.yaml"), "--agent", "docs")
    assert code == 0
    assert "layer 5: agents.docs.tools.allow" in out


def test_explain_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "explain", "PC303")
    assert code == 0 and "allow and alsoAllow" in out
    code, _, err = cli(capsys, "explain", "PC999")
    assert code == 2 and "unknown diagnostic code" in err


def test_invalid_policy_is_a_located_diagnostic(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("tools:\n  denny: [exec]\n", encoding="utf-8")
    code, out, err = cli(capsys, "resolve", str(bad))
    assert code == 2 and out == ""
    assert f'{bad}:2:3: PC201 unknown key "denny" in tools' in err
    assert "     2 |   denny: [exec]" in err
    assert "       |   ^^^^^" in err
    assert 'fix: did you mean "deny"?' in err


def test_context_file_and_inventory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ctx = tmp_path / "ctx.yaml"
    ctx.write_text("agent: reviewer\nprovider: openai\nsender: {id: '1'}\n", encoding="utf-8")
    inv = tmp_path / "inv.json"
    inv.write_text(
        json.dumps(["read", "web_fetch", {"name": "github__x", "pluginId": "bundle-mcp"}])
    )
    code, out, _ = cli(
        capsys,
        "resolve",
        str(EXAMPLES / "team.yaml"),
        "--context",
        str(ctx),
        "--tool-inventory",
        str(inv),
        "--add-tool",
        "extra@plug",
        "--format",
        "json",
    )
    data = json.loads(out)
    # reviewer on openai: web_fetch goes at layer 6; the plugin tool `extra` is outside the
    # coding profile (layer 1); github__x is an MCP tool (coding has bundle-mcp) and matches
    # the reviewer's "github_*".
    assert data["allowed"] == ["read", "github__x"]
    assert {r["tool"]: r["stage"] for r in data["removed"]} == {"web_fetch": 6, "extra": 1}
    bad = tmp_path / "bad.yaml"
    bad.write_text("agnet: x\n", encoding="utf-8")
    code, _, err = cli(capsys, "resolve", str(EXAMPLES / "team.yaml"), "--context", str(bad))
    assert code == 2 and f'{bad}:1:1: PC201 unknown key "agnet"' in err
    assert 'did you mean "agent"?' in err


def test_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "resolve", "no/such/policy.yaml")
    assert code == 2 and "PC101" in err


def test_console_script_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "policyctl", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().startswith("policyctl ")


def test_no_color_and_no_tty_means_plain_text(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "policyctl", "resolve", str(EXAMPLES / "team.yaml")],
        capture_output=True,
        text=True,
        check=True,
        env={"NO_COLOR": "1", "PATH": ""},
    )
    assert "\x1b[" not in out.stdout
