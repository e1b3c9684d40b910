"""Decision logs: one JSON line per decision, arguments hashed unless asked, and a decision
that cannot be logged is refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from test_server_api import client

CALL = {"tool": "Bash", "arguments": {"command": "ls -la"}, "context": {"agent": "coder"}}


def test_every_decision_is_one_line_with_its_id_and_revision(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    api = client(decision_log=str(log))
    answer = api.post("/v1/decide", json=CALL).json()
    api.post("/v1/decide/batch", json={"items": [CALL, {**CALL, "tool": "nope"}]})
    hook = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    api.post("/v1/hooks/claude-code", json=hook)
    api.post("/v1/resolve", json={"context": {"agent": "coder"}})
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["kind"] for r in records] == ["decide", "decide", "decide", "hook", "resolve"]
    first = records[0]
    assert first["decisionId"] == answer["decisionId"] and first["revision"] == answer["revision"]
    assert first["context"] == {"agent": "coder"} and first["tool"] == "Bash"
    assert (first["verdict"], first["layer"]) == ("allow", "tools.allow")
    canonical = json.dumps(CALL["arguments"], sort_keys=True, separators=(",", ":"))
    assert first["argumentsSha256"] == hashlib.sha256(canonical.encode()).hexdigest()
    assert "arguments" not in first and "ls -la" not in log.read_text()
    assert records[2]["code"] == "PC181" and records[2]["verdict"] == "deny"
    assert len({r["decisionId"] for r in records}) == len(records)


def test_arguments_are_logged_only_when_asked(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    client(decision_log=str(log), log_arguments=True).post("/v1/decide", json=CALL)
    assert json.loads(log.read_text())["arguments"] == CALL["arguments"]


def test_the_log_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    client(decision_log="-").post("/v1/decide", json=CALL)
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["verdict"] == "allow" and line["kind"] == "decide"


def test_a_decision_that_cannot_be_logged_is_refused(tmp_path: Path) -> None:
    api = client(decision_log=str(tmp_path / "missing-dir" / "log.jsonl"))
    answer = api.post("/v1/decide", json=CALL).json()
    assert answer["verdict"] == "deny" and answer["code"] == "PC529"
    hook = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    reply = api.post("/v1/hooks/claude-code", json=hook).json()
    assert reply["hookSpecificOutput"]["permissionDecision"] == "deny"
    evaluation = {
        "subject": {"type": "agent_run", "id": ""},
        "action": {"name": "call_tool"},
        "resource": {"type": "tool", "id": "Bash", "properties": {"arguments": {"command": "ls"}}},
    }
    assert api.post("/access/v1/evaluation", json=evaluation).json()["decision"] is False


def test_a_fifo_with_no_reader_is_refused_at_start_not_waited_on(tmp_path: Path) -> None:
    """Opening a FIFO for writing blocks until a reader comes: `serve --decision-log FIFO`
    hung before its first line, and a reader that left later held each decision's `open`.
    The log is opened without blocking: no reader is an unwritable log, said at once."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    root = Path(__file__).resolve().parents[2]
    argv = [sys.executable, "-m", "policyctl", "serve", "--policy", "examples/hosts-team.yaml"]
    argv += ["--listen", "127.0.0.1:1", "--decision-log", str(fifo)]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "cannot be written" in proc.stderr, proc.stderr
    api = client(decision_log=str(fifo))  # a reader gone after start: refused, not waited on
    answer = api.post("/v1/decide", json=CALL).json()
    assert answer["verdict"] == "deny" and answer["code"] == "PC529"
