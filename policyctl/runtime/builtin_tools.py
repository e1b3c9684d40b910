"""Reference tools for demos and tests, kept small and safe (nanobot's names).

Files are confined to a workspace: a path that resolves outside it, through `..` or through a
symlink, is refused, and each file tool decides the run's call rules again on the file it
really opens (`file_tools`). `exec` takes a shell command line, a timeout, a minimal
environment, and keeps the head and tail of long output, stdout and stderr apart.

`exec` starts the command in a process group of its own. On timeout the whole group is killed
(SIGKILL), so a command that started children (`sh -c "sleep 30 & wait"`) returns at its
timeout and leaves nothing running; when the command itself exits, whatever it left running in
its group is killed too. A child that calls setsid() leaves the group: on Linux exec also marks
the command's environment with a token of its own and kills every process that still carries it
(read from /proc), so a setsid'd or double-forked child dies too. A process that starts a
program with a fresh environment (`env -i`) drops the mark and survives; only an OS sandbox
(cgroup, PID namespace) confines that. Output is read as it comes, keeping at most
`output_limit` characters of each stream in memory: the head, and the tail in a ring.

exec takes what its call rules decide: the catalog's `command` argument, a shell command line
(nanobot's exec, `argument_kind = "shell"`), run by `/bin/bash -c` exactly as decided, in the
workspace or in `working_dir` (the catalog's `cwd_key`, confined to the workspace); exec
decides that line again just before it starts it. Its environment's HOME is the run's home
(`RunContext.home`, what `~` means in the call rules), so `~/.ssh` in a rule and `~` in the
command name the same directory; a run without a known home gets the workspace as HOME, and its
rules on `~` fail closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import secrets
import shlex
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .callcheck import recheck, run_home
from .file_tools import WorkspaceError, inside, make_file_tools
from .text import truncate as _cut
from .tools import RuntimeTool, tool

__all__ = ["OUTPUT_LIMIT", "WorkspaceError", "command_line", "inside", "make_builtin_tools"]

OUTPUT_LIMIT = 10_000
PIPE_GRACE = 2.0  # seconds to finish reading once the command's group is gone
_CHUNK = 65_536
_MARK_NAME = "POLICYCTL_EXEC_RUN"


def command_line(argv: Sequence[str]) -> str:
    """The command line whose words are exactly `argv` (the program name always quoted): how
    a caller that holds an argument vector writes it for exec."""
    if not argv:
        return ""
    first = "'" + argv[0].replace("'", "'\"'\"'") + "'"
    return " ".join([first, *(shlex.quote(word) for word in argv[1:])])


#: the shell exec runs a command line with: the one the call rules' parser reads (bash)
SHELL = "/bin/bash"


def _exec_home(workspace: Path) -> str:
    """HOME for exec: the run's home, the directory `~` means in its call rules."""
    home = run_home()
    return home if home is not None else str(workspace)


def truncate(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """Keep the head and the tail of long output; say how much was cut."""
    return _cut(text, limit)


class _Capped:
    """A stream's bytes in bounded memory: the first half of `limit`, the last half (a ring),
    and how many fell between."""

    def __init__(self, limit: int) -> None:
        self.head_room = limit // 2
        self.tail_room = limit - self.head_room
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_room - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: max(0, len(self.tail) - self.tail_room)]

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        dropped = self.total - len(self.head) - len(self.tail)
        if dropped > 0:
            return f"{head}\n... [{dropped} bytes cut] ...\n{tail}"
        return head + tail


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Until the command's own process has exited. (`proc.wait()` also waits for its pipes to
    close on some Python versions, and a background child may hold them open.)"""
    while proc.returncode is None:
        await asyncio.sleep(0.02)


async def _drain(stream: asyncio.StreamReader | None, into: _Capped) -> None:
    if stream is None:
        return
    while chunk := await stream.read(_CHUNK):
        into.add(chunk)


async def _settle(
    proc: asyncio.subprocess.Process, readers: asyncio.Future[Any], err: _Capped
) -> None:
    """The group is dead, so the pipes close at once, unless a process escaped the group
    (setsid) and holds them: then stop reading and close our ends instead of waiting."""
    try:
        await asyncio.wait_for(readers, PIPE_GRACE)
    except asyncio.TimeoutError:
        err.add(b"\n[output still open after the command ended: a process left its group]")
        transport = getattr(proc, "_transport", None)  # asyncio keeps the pipes there
        if transport is not None:
            transport.close()


def _kill_group(pid: int, mark: bytes) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(pid, signal.SIGKILL)
    _kill_marked(mark)


def _kill_marked(mark: bytes, rounds: int = 3) -> None:
    """Kill every process whose environment carries `mark`: what left the group (setsid, a
    double fork) still inherited it. Repeated while any is found, for one forking meanwhile.
    Without /proc (not Linux) there is nothing to read and only the group is killed."""
    for _ in range(rounds):
        try:
            pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        except OSError:
            return
        found = False
        for pid in pids:
            if pid == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    environ = fh.read()
            except OSError:  # gone, or not ours to read
                continue
            if mark in environ.split(b"\0"):
                found = True
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        if not found:
            return


def _check_limits(exec_timeout: float, output_limit: int) -> None:
    if not (
        isinstance(exec_timeout, int | float)
        and not isinstance(exec_timeout, bool)
        and math.isfinite(exec_timeout)
        and 0.1 <= exec_timeout <= 600
    ):
        raise ValueError(
            f"exec_timeout must be a number of seconds in [0.1, 600], got {exec_timeout!r}"
        )
    if isinstance(output_limit, bool) or not isinstance(output_limit, int) or output_limit < 100:
        raise ValueError(f"output_limit must be a whole number >= 100, got {output_limit!r}")


def make_builtin_tools(
    workspace: str | Path, *, exec_timeout: float = 30.0, output_limit: int = OUTPUT_LIMIT
) -> list[RuntimeTool]:
    """The reference tools over `workspace`. `exec_timeout` is exec's default timeout in
    seconds (a call may ask for 0.1 to 600); `output_limit` caps each of exec's streams and
    read_file's text, in characters."""
    _check_limits(exec_timeout, output_limit)
    ws = Path(workspace)

    @tool(
        exclusive=True,
        parameters={
            "type": "object",
            "properties": {
                "command": {"type": "string", "minLength": 1},
                "working_dir": {"type": "string", "minLength": 1},
                "timeout": {"type": "number", "minimum": 0.1, "maximum": 600},
            },
            "required": ["command"],
            "additionalProperties": False,
        },
    )
    async def exec(
        command: str, working_dir: str | None = None, timeout: float = exec_timeout
    ) -> dict[str, object]:
        """Run a shell command line (bash) in the workspace, or in working_dir inside it."""
        if not command.strip():
            raise ValueError("command is empty")
        if not math.isfinite(timeout) or not 0.1 <= timeout <= 600:
            raise ValueError("timeout must be a number of seconds between 0.1 and 600")
        cwd = ws.resolve() if working_dir is None else inside(ws, working_dir)
        if not cwd.is_dir():
            raise WorkspaceError(f"working_dir {working_dir!r} is not a directory")
        # what starts is what is decided: this line, in this directory, now
        decided: dict[str, object] = {"command": command, "timeout": timeout}
        if working_dir is not None:
            decided["working_dir"] = working_dir
        await recheck("exec", decided, same_call=True)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": _exec_home(ws), "LANG": "C.UTF-8"}
        run_id = secrets.token_hex(12)  # inherited by all it starts, setsid or not
        env[_MARK_NAME] = run_id
        mark = f"{_MARK_NAME}={run_id}".encode()
        proc = await asyncio.create_subprocess_exec(
            SHELL,
            "-c",
            command,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group: killed as one
        )
        out, err = _Capped(output_limit), _Capped(output_limit)
        readers = asyncio.gather(_drain(proc.stdout, out), _drain(proc.stderr, err))
        try:
            await asyncio.wait_for(_exited(proc), timeout)
        except asyncio.TimeoutError:
            _kill_group(proc.pid, mark)
            await _settle(proc, readers, err)
            await proc.wait()
            raise TimeoutError(f"timed out after {timeout} s") from None
        except BaseException:  # cancelled: leave nothing running
            _kill_group(proc.pid, mark)
            readers.cancel()
            raise
        _kill_group(proc.pid, mark)  # what the command left running, in its group or not
        await _settle(proc, readers, err)
        await proc.wait()
        return {"exit_code": proc.returncode, "stdout": out.text(), "stderr": err.text()}

    return [*make_file_tools(ws, output_limit), exec]
