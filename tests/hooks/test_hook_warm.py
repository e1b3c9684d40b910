"""`--warm`: the hook as a small client of a helper that keeps the policy in memory.

The helper answers exactly as the hook does in-process; a helper that does not answer is a
refusal; an edited policy is read again. Helpers a test starts are ended by their process id.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hook_helpers import ROOT, SAMPLES, hook_env, run_hook

from policyctl.cli.hook_warm import _answer, socket_path

CALL = {
    "hook_event_name": "PreToolUse",
    "cwd": "/srv/repo",
    "tool_name": "Bash",
    "tool_input": {"command": "git push origin main"},
}


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "c"
    yield directory
    for pid_file in directory.glob("warm-*.sock.pid"):  # end the helpers this test started
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


def _wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_the_helper_answers_every_sample_as_the_hook_does(path: Path, tmp_path: Path) -> None:
    sample = json.loads(path.read_text(encoding="utf-8"))
    argv = [sample["host"], "--policy", sample["policy"], "--cache-dir", str(tmp_path)]
    request = {
        "argv": [*argv, *sample["args"]],
        "cwd": str(ROOT),
        "stdin": json.dumps(sample["stdin"]),
    }
    stdout, _, code = _answer(request, {})
    expect = sample["expect"]
    assert (json.loads(stdout) if stdout.strip() else None, code) == (
        expect["stdout"],
        expect["exit"],
    )


def test_the_helper_reads_an_edited_policy_again(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("catalog: claude-code\ntools:\n  ask: ['Bash(git push *)']\n", "utf-8")
    memo: dict[Any, Any] = {}
    request = {"argv": ["claude-code", "--policy", str(policy), "--no-cache"], "cwd": "/",
               "stdin": json.dumps(CALL)}  # fmt: skip
    assert '"ask"' in _answer(request, memo)[0]
    assert '"ask"' in _answer(request, memo)[0] and len(memo) == 1
    policy.write_text("catalog: claude-code\ntools:\n  deny: ['Bash(git *)']\n", "utf-8")
    assert '"deny"' in _answer(request, memo)[0]


def test_a_real_helper_serves_the_second_call(cache: Path) -> None:
    argv = ["claude-code", "--policy", "examples/hosts-team.yaml", "--cache-dir", str(cache)]
    first = run_hook([*argv, "--warm"], CALL)  # decides in-process, starts the helper
    env = hook_env()
    path = _socket_in(cache, env)
    _wait_for(Path(path + ".pid"))
    second = run_hook([*argv, "--warm"], CALL)
    plain = run_hook(argv, CALL)
    assert first.reply == second.reply == plain.reply
    assert second.reply["hookSpecificOutput"]["permissionDecision"] == "ask"


def _socket_in(cache: Path, env: dict[str, str]) -> str:
    """The socket a hook process started with `env` uses (its name hashes the environment)."""
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(env)
        path = socket_path(str(cache))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert path is not None
    return path


def test_a_helper_that_does_not_answer_is_a_refusal(cache: Path) -> None:
    cache.mkdir(mode=0o700)
    path = _socket_in(cache, hook_env())
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(path)
    mute.listen(4)
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(mute.accept()[0]), daemon=True).start()
    try:
        argv = ["codex", "--policy", "examples/hosts-team.yaml", "--cache-dir", str(cache)]
        run = run_hook([*argv, "--warm", "--timeout", "1"], CALL)
    finally:
        mute.close()
    assert run.exit_code == 2 and "PC184" in run.stderr
    assert run.reply["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_socket_in_a_directory_others_can_reach_is_never_asked(cache: Path) -> None:
    """Anyone who can write there could plant a socket that answers "allow"."""
    cache.mkdir(mode=0o755)
    os.chmod(cache, 0o755)
    path = _socket_in(cache, hook_env())
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(path)
    mute.listen(4)
    try:
        argv = ["claude-code", "--policy", "examples/hosts-team.yaml", "--cache-dir", str(cache)]
        run = run_hook([*argv, "--warm", "--timeout", "5"], CALL)
    finally:
        mute.close()
    assert run.exit_code == 0, run
    assert run.reply["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_a_payload_that_never_ends_is_refused_within_the_timeout(
    tmp_path: Path, cache: Path
) -> None:
    """A host that holds stdin open must not hold the warm client past --timeout: the call is
    refused (PC184) before the host gives up on the hook and lets the call run."""
    import subprocess
    import sys

    policy = tmp_path / "p.yaml"
    policy.write_text('catalog: claude-code\ntools:\n  deny: ["Bash(rm *)"]\n')
    argv = ["claude-code", "--policy", str(policy), "--timeout", "2", "--warm"]
    argv += ["--cache-dir", str(cache)]
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "policyctl", "hook", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=hook_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.wait(timeout=30)  # stdin stays open: nothing is written, nothing is closed
        elapsed = time.monotonic() - started
        out = proc.stdout.read()
    finally:
        proc.stdin.close()
        proc.kill()
    assert elapsed < 15
    assert proc.returncode == 2
    reply = json.loads(out)["hookSpecificOutput"]
    assert reply["permissionDecision"] == "deny" and "PC184" in reply["permissionDecisionReason"]
