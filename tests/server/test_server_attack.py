"""Requests written by an attacker: each one a way a decision could widen or the server could
be held, found by probing the real application and the real `policyctl serve` process."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from serve_process import serving
from test_server_api import TEAM, TOKEN, client

DUPLICATES = [
    # a front end that keeps the first key runs `rm -rf /`; one that keeps the last asks about `ls`
    b'{"tool": "Bash", "arguments": {"command": "rm -rf /"}, "arguments": {"command": "ls"}}',
    b'{"tool": "Bash", "arguments": {"command": "rm -rf /", "command": "ls"}}',
    b'{"tool": "web_fetch", "context": {"provider": "google", "provider": "openai"}}',
]


@pytest.mark.parametrize("body", DUPLICATES)
def test_a_body_with_a_key_given_twice_is_refused_not_decided(body: bytes) -> None:
    """Parsers disagree on which of two equal keys counts: deciding one of them would answer
    for a call a proxy or PEP in front of the server may read differently."""
    api = client()
    headers = {"content-type": "application/json"}
    for path in ("/v1/decide", "/access/v1/evaluation"):
        r = api.post(path, content=body, headers=headers)
        assert r.status_code == 400, r.text
        assert "twice" in r.text
    hook = b'{"tool_name": "Bash", "tool_input": {"command": "rm -rf /", "command": "ls"}}'
    r = api.post("/v1/hooks/claude-code", content=hook, headers=headers)
    assert r.status_code == 200
    assert r.json()["hookSpecificOutput"]["permissionDecision"] == "deny"


def _slow_body(url: str, path: str) -> tuple[float, bytes]:
    """Send headers announcing 100 bytes, then one byte a second; the seconds to an answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        )
        s.sendall(head.encode())
        started = time.monotonic()
        s.settimeout(1.0)
        while time.monotonic() - started < 15:
            try:
                answer = s.recv(4096)
            except TimeoutError:
                s.sendall(b" ")  # one byte a second: never the whole body
                continue
            return time.monotonic() - started, _rest_of_answer(s, answer)
    return time.monotonic() - started, b""


def _rest_of_answer(s: socket.socket, answer: bytes) -> bytes:
    """The whole response whose first bytes are `answer`: the head and the body may come in
    separate segments."""
    s.settimeout(5.0)
    while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
        more = s.recv(4096)
        if not more:
            break
        answer += more
    return answer


def _length(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def test_a_body_sent_a_byte_at_a_time_is_cut_off_on_every_route(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN + "\n")
    tokens.chmod(0o600)
    with serving(TEAM, "--token-file", str(tokens), "--request-timeout", "1") as url:
        for path in ("/v1/decide", "/v1/hooks/claude-code"):
            seconds, answer = _slow_body(url, path)
            assert answer, f"{path} still reading a trickled body after {seconds:.0f} s"
            assert seconds < 5, (path, seconds)
        # the hook route's answer to it is a refusal with status 200 (Claude Code's contract)
        seconds, answer = _slow_body(url, "/v1/hooks/claude-code")
        assert answer.startswith(b"HTTP/1.1 200") and b'"deny"' in answer, answer


@pytest.mark.parametrize("key", ["agnet", "Agent", "sessionKey", "agent "])
def test_an_authzen_subject_property_policyctl_does_not_know_is_not_a_wider_run(key: str) -> None:
    """`agent: explore` has no Bash; the same request with the field misspelt was decided as
    a run without an agent, which has it."""
    subject = {"type": "agent_run", "id": "", "properties": {key: "explore"}}
    body = {
        "subject": subject,
        "action": {"name": "call_tool"},
        "resource": {"type": "tool", "id": "Bash", "properties": {"arguments": {"command": "ls"}}},
    }
    r = client().post("/access/v1/evaluation", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["decision"] is False
    assert "not a run context field" in r.json()["context"]["error"]["message"]


def test_an_authzen_list_tools_decision_is_logged_or_refused(tmp_path: Path) -> None:
    """`list_tools` answered `true` without a decision log line; like every decision it is
    logged, and a log that cannot take the line turns the `true` into `false`."""
    body = {
        "subject": {"type": "agent_run", "id": "", "properties": {}},
        "action": {"name": "list_tools"},
        "resource": {"type": "tool", "id": "Bash"},
    }
    log = tmp_path / "decisions.jsonl"
    assert client(decision_log=str(log)).post("/access/v1/evaluation", json=body).json()["decision"]
    assert '"kind":"list_tools"' in log.read_text()
    unwritable = tmp_path / "a-directory"
    unwritable.mkdir()
    r = client(decision_log=str(unwritable)).post("/access/v1/evaluation", json=body)
    assert r.json()["decision"] is False and r.json()["context"]["code"] == "PC529"
