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
