"""`policyctl hook HOST ... --warm`: decisions from a warm helper process.

A host starts the hook for every tool call, and a fresh Python process that imports the
engine costs many times the interpreter's own start-up. With `--warm`, the hook process is
a small client: it hands its flags, working directory and payload to a helper over a Unix
socket in the (private) cache directory and prints the helper's reply. The helper is started
by the first call that finds none (that call decides in-process, as without `--warm`),
keeps compiled policies and the resolver's caches in memory, checks on every request that
the policy's files are unchanged (the compiled cache's digests), and exits after
`IDLE_SECONDS` without a request.

It fails closed like the hook: a helper that does not answer within `--timeout` is a
refusal (PC184), never a pass. Only the user who owns the cache directory can reach the
socket (the directory is 0700, and the helper checks the peer's uid). One helper serves
one environment: the socket's name is a hash of policyctl's version, the interpreter, the
import path, `$HOME` and the `POLICYCTL_*` settings, so a call never gets an answer computed
under other settings.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import signal
import socket
import sys
import threading
from typing import Any

IDLE_SECONDS = 300.0
#: what a request may hold besides the payload (flags, working directory)
_ENVELOPE_BYTES = 1024 * 1024
_PAYLOAD_BYTES = 16 * 1024 * 1024
HOSTS = ("claude-code", "gemini-cli", "codex")
_DIRECTORY_LOCK = threading.Lock()


def _flag(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _cache_dir(argv: list[str]) -> str:
    given = _flag(argv, "--cache-dir")
    if given is not None:
        return os.path.abspath(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "policyctl", "hooks")


def socket_path(cache_dir: str) -> str | None:
    """The helper's socket for this environment, or None when it cannot be used here."""
    from .. import __version__

    if not hasattr(socket, "AF_UNIX") or not hasattr(os, "getuid"):
        return None
    digest = hashlib.sha256()
    parts = [__version__, sys.executable, os.environ.get("PYTHONPATH", ""), str(os.getuid())]
    parts.append(os.path.expanduser("~"))
    parts += sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("POLICYCTL_"))
    for part in parts:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    path = os.path.join(cache_dir, f"warm-{digest.hexdigest()[:24]}.sock")
    return path if len(path.encode()) < 100 else None  # sun_path holds 108 bytes


class _Late(Exception):
    pass


def _late(_signum: int, _frame: object) -> None:
    raise _Late


def _read_payload(timeout: float) -> bytes | None:
    """The payload on stdin, or None when it does not end within `timeout` seconds (a host
    that holds stdin open must not hold the hook past its own deadline)."""
    if not hasattr(signal, "setitimer"):
        return sys.stdin.buffer.read(_PAYLOAD_BYTES + 1)
    previous = signal.signal(signal.SIGALRM, _late)
    signal.setitimer(signal.ITIMER_REAL, max(timeout, 0.001))
    try:
        return sys.stdin.buffer.read(_PAYLOAD_BYTES + 1)
    except _Late:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def answer_warm(argv: list[str]) -> int | None:
    """The client: print the helper's reply and return the exit code, or return None to let
    the command decide in-process (no helper yet: one is started for the next call)."""
    if not argv or argv[0] not in HOSTS or "--no-cache" in argv:
        return None
    cache_dir = _cache_dir(argv)
    path = socket_path(cache_dir)
    if path is None:
        return None
    try:
        timeout = float(_flag(argv, "--timeout") or 10.0)
    except ValueError:
        return None  # argparse reports the flag
    raw = _read_payload(timeout)
    if raw is None:  # the host never finished its payload: refuse before it gives up on us
        return _refuse(argv[0], "PC184", f"no payload within {timeout:g} s (--timeout)")
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw))  # what the in-process path reads instead
    with contextlib.suppress(OSError):
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
    if not _ours(cache_dir, directory=True):
        return None  # a directory others can reach: its socket could answer anything
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(min(timeout, 1.0))
        conn.connect(path)
    except OSError:
        conn.close()
        _start_helper(cache_dir, path)
        return None
    if not (_ours(path, directory=False) and _peer_is_us(conn)):
        conn.close()
        return None  # not our helper: decide in-process
    request = {"argv": argv, "cwd": os.getcwd(), "stdin": raw.decode("latin-1")}
    try:
        conn.settimeout(timeout)
        conn.sendall(json.dumps(request).encode() + b"\n")
        reply = _read_line(conn, _PAYLOAD_BYTES * 2)
        answer = json.loads(reply)
        stdout, stderr, code = answer["stdout"], answer["stderr"], answer["exit"]
        if not (isinstance(stdout, str) and isinstance(stderr, str) and isinstance(code, int)):
            raise ValueError("a reply of the wrong shape")
    except TimeoutError:
        return _refuse(argv[0], "PC184", f"the warm helper gave no decision within {timeout:g} s")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return _refuse(argv[0], "PC185", f"the warm helper failed ({type(exc).__name__}: {exc})")
    finally:
        conn.close()
    sys.stdout.write(stdout)
    sys.stdout.flush()
    sys.stderr.write(stderr)
    return code


def _ours(path: str, *, directory: bool) -> bool:
    """Whether `path` is this user's own: a private directory, or a socket it made."""
    import stat

    try:
        info = os.lstat(path)
    except OSError:
        return False
    if info.st_uid != os.getuid():
        return False
    if directory:
        return stat.S_ISDIR(info.st_mode) and not info.st_mode & 0o077
    return stat.S_ISSOCK(info.st_mode)


def _refuse(host: str, code: str, problem: str) -> int:
    from ..integrations.hosts.handler import failure
    from ..integrations.hosts.protocols import HOSTS as TABLE

    reply = failure(TABLE[host], code, problem)
    sys.stdout.write(reply.stdout)
    sys.stderr.write(reply.stderr)
    return reply.exit_code


def _read_line(conn: socket.socket, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            raise ValueError("the connection closed before a whole line")
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or b"\n" in chunk:
            return b"".join(chunks).split(b"\n", 1)[0]
        if size > limit:
            raise ValueError("a line over the size limit")


def _start_helper(cache_dir: str, path: str) -> None:
    """Start the helper in its own session (the host may end the hook's process group)."""
    import subprocess

    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        subprocess.Popen(
            [sys.executable, "-m", "policyctl.cli.hook_warm", path, str(IDLE_SECONDS)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass  # no helper: every call decides in-process


# -- the helper ------------------------------------------------------------------------------


def serve(path: str, idle: float) -> int:
    """Serve requests on `path` until `idle` seconds pass without one. One helper per socket:
    a second one finds the lock taken and exits."""
    import fcntl
    import time
    from pathlib import Path

    from ..integrations.hosts.policyfile import private_dir

    directory = os.path.dirname(path)
    if not private_dir(Path(directory)):
        return 1
    lock = open(path + ".lock", "a")  # noqa: SIM115 - held for the helper's lifetime
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another helper serves this socket
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        server.bind(path)
    finally:
        os.umask(old)
    server.listen(64)
    server.settimeout(1.0)
    import signal

    def _stop(_signum: int, _frame: Any) -> None:
        raise SystemExit(0)  # the `finally` below removes the socket

    signal.signal(signal.SIGTERM, _stop)
    with open(path + ".pid", "w", encoding="ascii") as pid:
        pid.write(str(os.getpid()))
    last = [time.monotonic()]
    memo: dict[tuple[str, str], Any] = {}
    try:
        while time.monotonic() - last[0] < idle:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            last[0] = time.monotonic()
            threading.Thread(target=_serve_one, args=(conn, memo, last), daemon=True).start()
    finally:
        for leftover in (path, path + ".pid"):
            with contextlib.suppress(OSError):
                os.unlink(leftover)
        server.close()
    return 0


def _peer_is_us(conn: socket.socket) -> bool:
    """Whether the process at the other end runs as this user (both sides ask)."""
    import struct

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True  # the private directory is the guard where the kernel cannot tell
    creds = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return bool(uid == os.getuid())


def _serve_one(conn: socket.socket, memo: dict[tuple[str, str], Any], last: list[float]) -> None:
    import time

    with conn:
        try:
            if not _peer_is_us(conn):
                return
            conn.settimeout(30)
            request = json.loads(_read_line(conn, _PAYLOAD_BYTES * 2 + _ENVELOPE_BYTES))
            stdout, stderr, code = _answer(request, memo)
            reply = {"stdout": stdout, "stderr": stderr, "exit": code}
            conn.sendall(json.dumps(reply).encode() + b"\n")
        except Exception:  # the client refuses the call when it gets no reply
            return
        finally:
            last[0] = time.monotonic()


def _answer(request: dict[str, Any], memo: dict[tuple[str, str], Any]) -> tuple[str, str, int]:
    from pathlib import Path

    from ..integrations.hosts.handler import failure
    from ..integrations.hosts.policyfile import load_for_hook
    from ..integrations.hosts.protocols import HOSTS as TABLE
    from .hook import decide_payload
    from .main import build_parser

    argv, cwd = list(request["argv"]), str(request["cwd"])
    raw = str(request["stdin"]).encode("latin-1")
    host = TABLE[argv[0]]
    try:
        args = build_parser("hook").parse_args(["hook", *argv])
    except SystemExit:
        reply = failure(host, "PC185", "the warm helper could not read the hook's flags")
        return reply.stdout, reply.stderr, reply.exit_code

    def load(path: str, cache: Path | None) -> Any:
        return _memoised(path, cache, memo, load_for_hook)

    # Relative paths (the policy, --log, --cache-dir) mean what they mean in the hook's own
    # directory, and reasons quote the policy as it was named: each request is decided in
    # the client's working directory, one at a time (a decision takes a few milliseconds).
    with _DIRECTORY_LOCK:
        before = os.getcwd()
        try:
            os.chdir(cwd)
            reply = decide_payload(args, host, raw, load)
        except BaseException as exc:  # a crash refuses the call, as in-process
            reply = failure(host, "PC185", f"{type(exc).__name__}: {exc}")
        finally:
            os.chdir(before)
    return reply.stdout, reply.stderr, reply.exit_code


def _memoised(path: str, cache: Any, memo: dict[tuple[str, str], Any], load: Any) -> Any:
    """The loaded policy of `path`, kept while its bytes and every file its compile read
    are unchanged (their digests are checked on each request, as the compiled cache does)."""
    from ..integrations.hosts.policyfile import file_digest

    try:
        with open(path, "rb") as source:
            key = (os.path.abspath(path), hashlib.sha256(source.read()).hexdigest())
    except OSError:
        return load(path, cache)  # the loader reports it
    found = memo.get(key)
    if found is not None and all(file_digest(f) == d for f, d in found.files.items()):
        return found
    loaded = load(path, cache)
    memo.clear()  # one policy at a time is the common case: keep memory flat
    memo[key] = loaded
    return loaded


if __name__ == "__main__":
    raise SystemExit(serve(sys.argv[1], float(sys.argv[2])))
