"""The gateway's stdio served on event-loop pipes, driven the way a client drives it: a real
process on pipes or a socket, with clients that go away, share one socket both ways, or end
without a final newline."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import time
from typing import IO, Any

from .conftest import Setup

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _call(id_: int, name: str, arguments: dict[str, Any]) -> bytes:
    params = {"name": name, "arguments": arguments}
    return _line({"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params})


def _start(setup: Setup, stdin: Any, stdout: Any) -> subprocess.Popen[bytes]:
    return setup.start(stdin, stdout, subprocess.PIPE)


def _reply(out: IO[bytes], timeout: float = 20) -> dict[str, Any]:
    ready, _, _ = select.select([out], [], [], timeout)
    assert ready, "no answer from the gateway"
    line = out.readline()
    assert line, "the gateway closed its stdout"
    got: dict[str, Any] = json.loads(line)
    return got


def _finish(proc: subprocess.Popen[bytes], timeout: float = 20) -> tuple[int, str]:
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("the gateway did not exit") from None
    assert proc.stderr is not None
    return code, proc.stderr.read().decode(errors="replace")


def test_a_client_gone_with_answers_pending_is_a_clean_exit(setup: Setup) -> None:
    """A client that dies (both its ends closed) while large answers wait in the pipe: the
    gateway exits 0 without a traceback, and its upstream servers with it."""
    proc = _start(setup, subprocess.PIPE, subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_line(INIT))
    proc.stdin.flush()
    assert _reply(proc.stdout)["id"] == 1
    proc.stdin.write(_line(INITIALIZED))
    for n in range(5):  # about 2 MB each: far more than a pipe holds
        proc.stdin.write(_call(10 + n, "rec__huge", {"size": 1_000_000}))
    proc.stdin.flush()
    deadline = time.monotonic() + 20
    while len(setup.records()) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the answers are made and wait for the client to read them
    proc.stdout.close()
    proc.stdin.close()
    code, err = _finish(proc)
    assert code == 0 and "Traceback" not in err, err


def test_one_socket_for_stdin_and_stdout_keeps_answering(setup: Setup) -> None:
    """socat, inetd and systemd's socket activation give the server one socket as both stdin
    and stdout: every message the client sends must be answered, not only the first."""
    ours, theirs = socket.socketpair()
    proc = _start(setup, theirs, theirs)
    theirs.close()
    ours.settimeout(20)
    wire = ours.makefile("rb")
    try:
        ours.sendall(_line(INIT))
        assert json.loads(wire.readline())["id"] == 1
        ours.sendall(_line(INITIALIZED))
        for n in (2, 3):
            ours.sendall(_call(n, "rec__exec", {"command": f"ls {n}"}))
            answer = json.loads(wire.readline())
            assert answer["id"] == n and not answer["result"]["isError"], answer
        ours.shutdown(socket.SHUT_WR)  # the client is done: the gateway ends
        code, err = _finish(proc)
        assert code == 0 and "Traceback" not in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        wire.close()
        ours.close()


def test_a_last_message_without_a_newline_is_still_read(setup: Setup) -> None:
    """A client that writes its last message and closes stdin without a final newline (as
    `printf ... | policyctl gateway` does) gets that message answered, as it would be with
    the newline (and as the SDK's own stdio reads it), not dropped without a word."""
    proc = _start(setup, subprocess.PIPE, subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    last = _call(2, "rec__exec", {"command": "ls"}).rstrip(b"\n")
    proc.stdin.write(_line(INIT) + _line(INITIALIZED) + last)
    proc.stdin.close()
    answered = {_reply(proc.stdout)["id"] for _ in range(2)}
    assert answered == {1, 2}
    code, err = _finish(proc)
    assert code == 0 and "Traceback" not in err, err


def test_a_client_that_hangs_up_on_stdout_ends_the_gateway(setup: Setup) -> None:
    """A client that closes the gateway's stdout and keeps stdin open: nothing it sends after
    can be answered, so the gateway stops reading and exits rather than run calls unseen."""
    proc = _start(setup, subprocess.PIPE, subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(_line(INIT))
        proc.stdin.flush()
        assert _reply(proc.stdout)["id"] == 1
        proc.stdout.close()
        code, err = _finish(proc)
        assert code == 0 and "Traceback" not in err, err
    finally:
        proc.stdin.close()


def test_a_gateway_started_with_stderr_closed_still_serves(setup: Setup) -> None:
    """A client may start it with fd 2 closed: upstream servers get stderr as their error
    log, so without an open fd 2 the first upstream start failed and the gateway died."""
    proc = setup.start(
        subprocess.PIPE,
        subprocess.PIPE,
        subprocess.DEVNULL,
        preexec_fn=lambda: os.close(2),  # in the child, before exec
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(
            _line(INIT) + _line(INITIALIZED) + _call(2, "rec__exec", {"command": "ls"})
        )
        proc.stdin.flush()
        answers = {_reply(proc.stdout)["id"] for _ in range(2)}
        assert answers == {1, 2}
        assert len(setup.records()) == 1  # the call reached the upstream server
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)
