"""Fail closed: every way `policyctl hook` can fail is a refusal the host obeys.

Claude Code, Gemini CLI and Codex let a call proceed when a hook exits with any code but 2
(or times out): so each failure below must print a refusal in the host's format and exit 2
with the reason on stderr. Each case runs the real command as a new process, as the hosts do.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hook_helpers import ROOT, HookRun, run_hook

HOSTS = ("claude-code", "gemini-cli", "codex")
POLICY = "examples/hosts-team.yaml"
EVENT = {"claude-code": "PreToolUse", "gemini-cli": "BeforeTool", "codex": "PreToolUse"}


def _call(host: str, **changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": "s1",
        "cwd": "/srv/repo",
        "hook_event_name": EVENT[host],
        "tool_name": "run_shell_command" if host == "gemini-cli" else "Bash",
        "tool_input": {"command": "ls"},
    }
    payload.update(changes)
    return payload


def assert_refused(run: HookRun, host: str, code: str) -> None:
    assert run.exit_code == 2, run
    assert code in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    reply = run.reply
    if host == "gemini-cli":
        assert reply["decision"] == "deny" and code in reply["reason"]
    else:
        out = reply["hookSpecificOutput"]
        assert out["permissionDecision"] == "deny" and code in out["permissionDecisionReason"]


def _bad_policy(tmp: Path) -> str:
    path = tmp / "broken.yaml"
    path.write_text("catalog: claude-code\ntools:\n  denny: [Bash]\n", encoding="utf-8")
    return str(path)


# (case id, stdin, extra flags, policy, expected code); the policy None means a broken one
FAILURES: list[tuple[str, Any, list[str], str | None, str]] = [
    ("payload-not-json", b"{not json", [], POLICY, "PC180"),
    ("payload-not-utf8", b"\xff\xfe{}", [], POLICY, "PC180"),
    ("payload-empty", b"", [], POLICY, "PC180"),
    ("payload-a-list", b"[1, 2]", [], POLICY, "PC180"),
    ("payload-deeply-nested", b"[" * 200_000 + b"]" * 200_000, [], POLICY, "PC18"),
    ("no-event", {"tool_name": "Bash", "tool_input": {}}, [], POLICY, "PC180"),
    ("tool-input-not-object", "TOOL_INPUT_STRING", [], POLICY, "PC180"),
    ("no-tool-name", "NO_TOOL_NAME", [], POLICY, "PC180"),
    ("unknown-tool", "UNKNOWN_TOOL", [], POLICY, "PC181"),
    ("unknown-event", "UNKNOWN_EVENT", [], POLICY, "PC182"),
    ("policy-invalid", "CALL", [], None, "PC183"),
    ("policy-missing", "CALL", [], "no/such/policy.yaml", "PC183"),
    ("timeout", "CALL", ["--timeout", "0.001", "--no-cache"], POLICY, "PC184"),
    ("log-unwritable", "CALL", ["--log", "/"], POLICY, "PC186"),
]


def _stdin(host: str, spec: Any) -> Any:
    if spec == "CALL":
        return _call(host)
    if spec == "TOOL_INPUT_STRING":
        return _call(host, tool_input="ls")
    if spec == "NO_TOOL_NAME":
        payload = _call(host)
        del payload["tool_name"]
        return payload
    if spec == "UNKNOWN_TOOL":
        return _call(host, tool_name="Frobnicate")
    if spec == "UNKNOWN_EVENT":
        return _call(host, hook_event_name="PostToolUse")
    return spec


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(
    ("spec", "flags", "policy", "code"),
    [case[1:] for case in FAILURES],
    ids=[case[0] for case in FAILURES],
)
def test_a_failure_is_a_refusal_in_the_hosts_format(
    host: str, spec: Any, flags: list[str], policy: str | None, code: str, tmp_path: Path
) -> None:
    policy_path = policy if policy is not None else _bad_policy(tmp_path)
    argv = [host, "--policy", policy_path, "--cache-dir", str(tmp_path / "cache"), *flags]
    assert_refused(run_hook(argv, _stdin(host, spec)), host, code)


def test_the_control_the_same_call_is_decided_when_nothing_fails(tmp_path: Path) -> None:
    """The failure cases above differ from this one call in one thing each."""
    for host in HOSTS:
        run = run_hook([host, "--policy", POLICY, "--cache-dir", str(tmp_path)], _call(host))
        assert run.exit_code == 0 and run.stderr == "", run


def test_a_policy_error_names_the_file_line_and_column(tmp_path: Path) -> None:
    run = run_hook(["claude-code", "--policy", _bad_policy(tmp_path)], _call("claude-code"))
    assert "broken.yaml:3:3: PC201" in run.stderr, run.stderr


def test_a_payload_that_is_not_json_is_located(tmp_path: Path) -> None:
    run = run_hook(["codex", "--policy", POLICY], b'{"a": 1,\n  oops}')
    assert "<stdin>:2:3" in run.stderr, run.stderr


def test_bad_flags_exit_with_the_blocking_code() -> None:
    """argparse's usage error is exit 2: every host reads that as "block"."""
    run = run_hook(["claude-code"], _call("claude-code"))
    assert run.exit_code == 2 and "--policy" in run.stderr


def test_gemini_tool_selection_fails_to_no_tools(tmp_path: Path) -> None:
    payload = {"hook_event_name": "BeforeToolSelection", "llm_request": {"model": "m"}}
    run = run_hook(["gemini-cli", "--policy", _bad_policy(tmp_path)], payload)
    config = run.reply["hookSpecificOutput"]["toolConfig"]
    assert run.exit_code == 2 and config == {"mode": "NONE", "allowedFunctionNames": []}


def test_a_log_failure_never_turns_a_deny_into_an_allow(tmp_path: Path) -> None:
    payload = _call("claude-code", tool_input={"command": "rm -rf /"})
    run = run_hook(["claude-code", "--policy", POLICY, "--log", "/"], payload)
    assert run.reply["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_decision_log_holds_a_hash_of_the_arguments_unless_asked(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    payload = _call("claude-code", tool_input={"command": "git push origin main"})
    payload["permission_mode"] = "bypassPermissions"
    run_hook(["claude-code", "--policy", POLICY, "--log", str(log)], payload)
    run_hook(["claude-code", "--policy", POLICY, "--log", str(log), "--log-arguments"], payload)
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert first["verdict"] == "ask" and first["entry"] == "Bash(git push *)"
    assert first["layer"] == "tools.ask" and first["source"] == f"{POLICY}:37:7"
    assert first["revision"].startswith("sha256:") and first["session"] == "s1"
    assert first["permissionMode"] == "bypassPermissions"  # logged; it loosens nothing
    assert "arguments" not in first and "origin main" not in json.dumps(first)
    assert first["argumentsSha256"] == second["argumentsSha256"]
    assert second["arguments"] == {"command": "git push origin main"}
    assert oct(os.stat(log).st_mode & 0o777) == "0o600"


def test_the_hook_runs_from_any_directory(tmp_path: Path) -> None:
    run = run_hook(
        ["claude-code", "--policy", str(ROOT / POLICY)], _call("claude-code"), cwd=tmp_path
    )
    assert run.exit_code == 0 and run.reply["hookSpecificOutput"]["permissionDecision"] == "allow"
