"""The hook routes answer what `policyctl hook` prints; a policy file is hot reloaded with
the last good revision kept; `policyctl serve` refuses unsafe settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_server_api import TEAM, TOKEN, client

from policyctl.integrations.server.app import build_app
from policyctl.integrations.server.state import FileSource
from policyctl.runtime.store import PolicyStore

ROOT = Path(__file__).resolve().parents[2]
PRE = {"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Bash"}


def hook_cli(payload: dict[str, object], *flags: str) -> str:
    """What `policyctl hook claude-code` prints for the payload."""
    command = [sys.executable, "-m", "policyctl", "hook", "claude-code", "--policy", TEAM]
    done = subprocess.run(
        [*command, "--no-cache", *flags],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    return done.stdout.decode()


@pytest.mark.parametrize(
    "command", ["sudo rm x", "git push origin", "ls -la"], ids=["deny", "ask", "allow"]
)
def test_the_hook_route_answers_what_the_hook_command_prints(command: str) -> None:
    payload = {**PRE, "tool_input": {"command": command}}
    r = client().post("/v1/hooks/claude-code?agent=coder", json=payload)
    assert r.status_code == 200 and r.headers["x-policyctl-exit-code"] == "0"
    assert r.text == hook_cli(payload, "--agent", "coder")


def test_hook_failures_are_refusals_with_status_200() -> None:
    """Claude Code proceeds on a non-2xx answer: every failure must be a deny in its format."""
    api = client(tokens=(TOKEN,), max_body_bytes=2048)
    payload = {**PRE, "tool_input": {"command": "ls"}}
    cases = [
        api.post("/v1/hooks/claude-code", json=payload),  # no token
        api.post(
            "/v1/hooks/claude-code",
            content=b"{not json",
            headers={"authorization": f"Bearer {TOKEN}"},
        ),
        api.post(
            "/v1/hooks/claude-code",
            json={**PRE, "tool_input": {"command": "x" * 5000}},
            headers={"authorization": f"Bearer {TOKEN}"},
        ),
        api.post(
            "/v1/hooks/claude-code?owner=maybe",
            json=payload,
            headers={"authorization": f"Bearer {TOKEN}"},
        ),
    ]
    for r in cases:
        assert r.status_code == 200
        out = r.json()["hookSpecificOutput"]
        assert out["permissionDecision"] == "deny", out
        assert r.headers["x-policyctl-exit-code"] == "2"


def test_gemini_and_codex_routes() -> None:
    api = client()
    gemini = {
        "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "sudo ls"},
    }
    assert api.post("/v1/hooks/gemini-cli", json=gemini).json()["decision"] == "deny"
    codex = {**PRE, "tool_name": "Bash", "tool_input": {"command": "ls"}}
    r = api.post("/v1/hooks/codex", json=codex)
    assert r.status_code == 200 and r.text == ""  # Codex reads silence as "proceed"
    assert api.post("/v1/hooks/cursor", json=codex).status_code == 404


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def wait_for(predicate, seconds: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_policy_file_is_hot_reloaded_and_a_broken_one_keeps_the_last_good(
    tmp_path: Path,
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("tools:\n  profile: full\n  deny: [exec]\n")
    source = FileSource(str(policy), PolicyStore, interval=0.1)
    api = TestClient(build_app(source))
    source.start()
    try:
        first = api.post("/v1/decide", json={"tool": "exec"}).json()
        assert first["verdict"] == "deny"
        write_atomically(policy, "tools:\n  profile: full\n  deny: [read]\n")
        wait_for(lambda: api.get("/v1/status").json()["revision"] != first["revision"])
        second = api.post("/v1/decide", json={"tool": "exec"}).json()
        assert second["verdict"] == "allow" and second["revision"] != first["revision"]
        write_atomically(policy, "tools:\n  profile: full\n  deny: [read\n")  # broken
        wait_for(lambda: api.get("/health").json()["status"] == "degraded")
        health = api.get("/health")
        assert health.status_code == 200 and health.json()["revision"] == second["revision"]
        assert "policy.yaml" in health.json()["lastReload"]["error"]
        still = api.post("/v1/decide", json={"tool": "read"}).json()
        assert still["verdict"] == "deny" and still["revision"] == second["revision"]
    finally:
        source.stop()


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "policyctl", "serve", "--policy", TEAM, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )


def test_serve_refuses_a_public_address_without_tokens(tmp_path: Path) -> None:
    done = serve("--listen", "0.0.0.0:8181")
    assert done.returncode == 2 and "PC530" in done.stderr and "--token-file" in done.stderr
    loose = tmp_path / "tokens"
    loose.write_text(TOKEN + "\n")
    loose.chmod(0o644)
    done = serve("--listen", "0.0.0.0:8181", "--token-file", str(loose))
    assert done.returncode == 2 and "chmod 600" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("log", ["missing-dir/decisions.jsonl", "."])
def test_serve_refuses_a_decision_log_it_cannot_write(log: str) -> None:
    # docs/server.md: a log that cannot be written at start stops the start (every decision
    # would otherwise be refused by a server that looks healthy)
    done = serve("--decision-log", log)
    assert done.returncode == 2, done
    assert f"the decision log {log} cannot be written" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_pulls_no_bundle_from_a_url_without_a_key() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "policyctl", "serve", "--policy", "http://127.0.0.1:9/b.json"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "POLICYCTL_BUNDLE_KEY_FILE"}
        | {"PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert done.returncode == 2 and "PC530" in done.stderr and "--bundle-key" in done.stderr


def test_serve_without_the_extra_names_it(tmp_path: Path) -> None:
    # a directory early on the path whose starlette cannot be imported
    blocker = tmp_path / "starlette"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('blocked', name='starlette')\n")
    done = subprocess.run(
        [sys.executable, "-m", "policyctl", "serve", "--policy", TEAM],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"},
        timeout=60,
    )
    assert done.returncode == 2
    assert "pip install 'policyctl[server]'" in done.stderr and "Traceback" not in done.stderr
