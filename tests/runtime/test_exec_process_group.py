"""exec: its own process group, killed as a group; stderr apart; a configurable output cap."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import time
from pathlib import Path

import pytest

from policyctl import load_policy_text, resolve
from policyctl.runtime import CallGate, ToolRegistry, make_builtin_tools


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead but not yet reaped by its (init) parent
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def _wait_gone(pid: int, seconds: float = 2.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def exec_tool(tmp_path: Path, **kw: object):  # type: ignore[no-untyped-def]
    return {t.name: t for t in make_builtin_tools(tmp_path, **kw)}["exec"]  # type: ignore[arg-type]


def test_grandchild_spawning_command_returns_at_its_timeout_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "child.pid"
    command = f"sleep 30 & echo $! > {pidfile}; wait"
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        asyncio.run(exec_tool(tmp_path).execute(command=command, timeout=1))
    took = time.monotonic() - started
    assert took < 3, f"took {took:.1f} s"  # about the timeout, not the child's 30 s
    child = int(pidfile.read_text())
    assert _wait_gone(child), "the background child survived the timeout"


def test_background_child_is_killed_when_the_command_exits(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    started = time.monotonic()
    out = asyncio.run(
        exec_tool(tmp_path).execute(
            command=f"sleep 30 & echo $! > {pidfile}; echo done", timeout=10
        )
    )
    assert time.monotonic() - started < 3  # the child holding the pipe does not hold the call
    assert out["exit_code"] == 0 and out["stdout"] == "done\n"
    assert _wait_gone(int(pidfile.read_text()))


def test_stderr_is_kept_apart(tmp_path: Path) -> None:
    out = asyncio.run(exec_tool(tmp_path).execute(command="echo out; echo err >&2; exit 3"))
    assert out == {"exit_code": 3, "stdout": "out\n", "stderr": "err\n"}


def test_output_cap_is_configurable_and_keeps_head_and_tail(tmp_path: Path) -> None:
    tool = exec_tool(tmp_path, output_limit=200)
    script = "import sys; print('HEAD' + 'x' * 100000 + 'TAIL'); print('E' * 5000, file=sys.stderr)"
    out = asyncio.run(tool.execute(command=shlex.join(["python3", "-c", script])))
    assert out["stdout"].startswith("HEAD") and out["stdout"].rstrip().endswith("TAIL")
    assert "bytes cut" in out["stdout"] and len(out["stdout"]) < 300
    assert len(out["stderr"]) < 300 and "bytes cut" in out["stderr"]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0, 10_000])
def test_exec_limits_are_checked(tmp_path: Path, bad: float) -> None:
    with pytest.raises(ValueError, match="exec_timeout"):
        make_builtin_tools(tmp_path, exec_timeout=bad)
    with pytest.raises(ValueError, match="timeout"):
        asyncio.run(exec_tool(tmp_path).execute(command="true", timeout=bad))


def test_nan_timeout_from_a_model_is_refused_by_the_gate(tmp_path: Path) -> None:
    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry(make_builtin_tools(tmp_path))
    gate = CallGate(resolve(policy, None, registry.inventory(policy.catalog)), registry)
    for raw in (
        '{"command": "sleep 5", "timeout": NaN}',
        {"command": "sleep 5", "timeout": float("nan")},
    ):
        started = time.monotonic()
        out = asyncio.run(gate.call("exec", raw))
        assert not out.ok and time.monotonic() - started < 1
        assert "timeout" in out.content() or "NaN" in out.content()


def test_empty_command_is_refused_by_the_schema(tmp_path: Path) -> None:
    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry(make_builtin_tools(tmp_path))
    gate = CallGate(resolve(policy, None, registry.inventory(policy.catalog)), registry)
    out = asyncio.run(gate.call("exec", {"command": ""}))
    assert not out.ok and "command: must have at least 1 characters" in out.content()


def test_a_process_escaping_the_group_does_not_hold_the_call(tmp_path: Path) -> None:
    pidfile = tmp_path / "escaped.pid"
    script = (
        f"import os, time; os.setsid(); open({str(pidfile)!r}, 'w').write(str(os.getpid())); "
        "time.sleep(30)"
    )
    started = time.monotonic()
    out = asyncio.run(
        exec_tool(tmp_path).execute(
            command=f"python3 -c {script!r} & sleep 0.3; echo done", timeout=10
        )
    )
    pid = int(pidfile.read_text())
    try:
        assert time.monotonic() - started < 5
        assert out["stdout"].startswith("done")
        assert not _alive(pid)  # it carried exec's mark: killed when the command ended
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead
    except OSError:
        return False


ESCAPES = {
    "setsid": "setsid sh -c 'echo $$ > {pid}; sleep 30' & sleep 30",
    "double fork": "(setsid sh -c 'echo $$ > {pid}; sleep 30' &); sleep 30",
}


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the mark is read from /proc")
@pytest.mark.parametrize("shape", sorted(ESCAPES))
def test_a_process_that_left_the_group_dies_at_the_timeout(tmp_path: Path, shape: str) -> None:
    pidfile = tmp_path / "escaped.pid"
    script = ESCAPES[shape].format(pid=pidfile)
    with pytest.raises(TimeoutError):
        asyncio.run(exec_tool(tmp_path).execute(command=script, timeout=1))
    pid = int(pidfile.read_text())
    try:
        assert not _alive(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the mark is read from /proc")
def test_a_process_started_with_a_fresh_environment_survives_as_documented(
    tmp_path: Path,
) -> None:
    # the README's stated limit: `env -i` drops the mark; only an OS sandbox confines it
    pidfile = tmp_path / "escaped.pid"
    script = f"setsid env -i sh -c 'echo $$ > {pidfile}; exec sleep 30' & sleep 0.5"
    asyncio.run(exec_tool(tmp_path).execute(command=script, timeout=10))
    pid = int(pidfile.read_text())
    try:
        assert _alive(pid)
    finally:
        os.kill(pid, 9)


def test_exec_output_is_held_in_bounded_memory() -> None:
    from policyctl.runtime.builtin_tools import _Capped

    capped = _Capped(1_000)
    for _ in range(1_000):
        capped.add(b"y" * 10_000)  # 10 MB through it
    assert len(capped.head) + len(capped.tail) == 1_000
    assert "9999000 bytes cut" in capped.text()
