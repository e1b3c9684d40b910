"""Run one shell line in real bash and record what really happened.

Every line runs as `/bin/bash -c LINE` under `strace -f`, inside `unshare` namespaces: a user
namespace (root inside, nobody's privileges outside), no network (only a loopback that is down),
its own PIDs (a `kill -1` reaches only the line's processes), and its own mounts, where every
file system is remounted read-only except the run's temporary directory. So real programs run
(git pushes to a local bare remote, `rm` deletes files, `xargs` and `find -exec` start their
payloads) and none of them can touch anything outside the throwaway copy of the workspace.
Stand-in programs were the other option; they record what a stand-in is told, not what the
kernel ran, and they miss a program reached by an absolute path (`/bin/rm`).

The recording is the kernel's word: each successful `execve` (the argv a program really got),
each successful `open`/`openat`/`creat` (with the real path strace reads back from the new
descriptor) and the program image that made it, and git's own trace of which built-in command
it ran after reading its global options and aliases (`GIT_TRACE`, `trace: built-in: git push`).
"""

from __future__ import annotations

import atexit
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

BASH = "/bin/bash"
SECONDS_PER_LINE = 10
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# a run makes and removes a few hundred small files: in memory when the machine has a tmpfs
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
TRACED = "execve,execveat,clone,clone3,fork,vfork,open,openat,creat"

# Inside the namespaces: keep the run's directory writable, make every other mount read-only,
# then hand over to the line. /proc is the namespace's own; /sys and /dev are not written here.
SETUP = (
    r"""
base=$1; line=$2; limit=$3; strace=$4
mount --bind "$base" "$base" || exit 97
awk '{print $5}' /proc/self/mountinfo | while read -r m; do
  case $m in "$base"|/proc|/proc/*|/sys|/sys/*|/dev|/dev/pts|/dev/mqueue) continue;; esac
  mount -o remount,bind,ro "$m" 2>/dev/null
done
touch /oracle-probe 2>/dev/null && exit 98
cd "$base/ws" || exit 97
exec env -i PATH="$PATH" HOME="$base/home" TMPDIR="$base/tmp" LC_ALL=C \
  GIT_TRACE="$base/git-trace" GIT_CONFIG_NOSYSTEM=1 \
  timeout -k 1 "$limit" "$strace" -f -ff -qq -xx -y -s 65535 -e signal=none \
  -e trace="""
    + TRACED
    + r""" -o "$base/trace/t" /bin/bash -c "$line"
"""
)


class OracleUnavailable(RuntimeError):
    """The real components (bash, strace, unshare) are missing or do not work here."""


@dataclass(frozen=True, slots=True)
class Access:
    """A file a program opened: `path` relative to the workspace when inside the run's directory."""

    path: str
    absolute: str
    read: bool
    write: bool
    program: str


@dataclass(frozen=True, slots=True)
class Recording:
    line: str
    workspace: str
    home: str
    executed: tuple[tuple[str, ...], ...]
    git_builtins: tuple[tuple[str, ...], ...]
    accesses: tuple[Access, ...]
    status: int
    timed_out: bool

    def summary(self) -> str:
        execs = "; ".join(shlex.join(a) for a in self.executed[1:])  # [0] is bash -c LINE
        gits = "; ".join(shlex.join(a) for a in self.git_builtins)
        files = ", ".join(  # git's own files are many and never decide anything here
            f"{a.program}:{'rw' if a.read and a.write else 'w' if a.write else 'r'}:{a.path}"
            for a in self.accesses
            if not a.path.startswith(("..", ".git"))
        )
        return f"executed [{execs}] git built-ins [{gits}] files [{files}]"


def _install_strace() -> None:
    """On a Debian machine where the tests run as root (CI, a fresh container), install the
    real component the oracle needs, as the README's test command promises; elsewhere the
    tests fail with the command to run."""
    if shutil.which("strace") or not shutil.which("apt-get") or os.geteuid() != 0:
        return
    for argv in (["update", "-qq"], ["install", "-y", "-qq", "--no-install-recommends", "strace"]):
        subprocess.run(["apt-get", *argv], capture_output=True, check=False)


def require_tools() -> str:
    """The strace binary; a missing real component fails the oracle tests (they never skip)."""
    _install_strace()
    strace = shutil.which("strace")
    missing = [n for n in ("unshare", "timeout") if not shutil.which(n)]
    if strace is None or missing or not os.path.exists(BASH):
        raise OracleUnavailable(
            f"the bash oracle needs /bin/bash, strace, unshare and timeout (missing: "
            f"{', '.join(missing + ([] if strace else ['strace']))}); on Debian: "
            "apt-get install -y --no-install-recommends strace util-linux coreutils"
        )
    return strace


def _git(cwd: Path, *args: str) -> None:
    env = {"PATH": PATH, "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    subprocess.run(("git", *args), cwd=cwd, env=env, check=True, capture_output=True)


@cache
def template() -> Path:
    """One prepared run directory per test session, copied for every line: ws/ is a git
    repository on `main` whose `origin` is the bare ../remote.git, home/ holds git's identity."""
    root = Path(tempfile.mkdtemp(prefix="policyctl-oracle-template-", dir=SCRATCH))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    ws, home = root / "ws", root / "home"
    for d in (ws / "src", ws / "build", home, root / "tmp", root / "trace"):
        d.mkdir(parents=True)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Oracle\n\temail = oracle@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n",
        encoding="utf-8",
    )
    for name, text in {
        ".env": "SECRET=1\n",
        "README.md": "readme\n",
        "x": "x\n",
        "src/a.py": "print(1)\n",
        "build/out.o": "o\n",
        ".gitignore": ".env\nbuild/\n",
    }.items():
        (ws / name).write_text(text, encoding="utf-8")
    # no template: no sample hooks to copy for every line
    _git(root, "init", "-q", "--template=", "--bare", "-b", "main", str(root / "remote.git"))
    gitenv = ("-c", f"include.path={home / '.gitconfig'}")
    _git(ws, "init", "-q", "--template=", "-b", "main")
    _git(ws, *gitenv, "add", "-A")
    _git(ws, *gitenv, "commit", "-q", "-m", "start")
    _git(ws, "remote", "add", "origin", "../remote.git")
    _git(ws, *gitenv, "push", "-q", "origin", "main")
    (ws / "x").write_text("changed\n", encoding="utf-8")
    _git(ws, *gitenv, "commit", "-q", "-am", "unpushed")
    return root


def run_line(line: str, seconds: int = SECONDS_PER_LINE) -> Recording:
    """Run `line` in a fresh copy of the template and return what it executed and opened."""
    strace = require_tools()
    base = Path(tempfile.mkdtemp(prefix="policyctl-oracle-", dir=SCRATCH))
    try:
        subprocess.run(("cp", "-a", f"{template()}/.", str(base)), check=True)
        argv = ["unshare", "-rnm", "--pid", "--fork", "--mount-proc", "/bin/sh", "-c", SETUP]
        argv += ["oracle", str(base), line, str(seconds), strace]
        try:
            done = subprocess.run(
                argv, capture_output=True, timeout=seconds + 10, env={"PATH": PATH}
            )
            status, timed_out = done.returncode, done.returncode == 124
        except subprocess.TimeoutExpired:
            status, timed_out = 124, True
        if status in (97, 98):
            raise OracleUnavailable(
                f"the namespaces could not be set up (exit {status}): "
                f"{done.stderr.decode(errors='replace')[-500:]}"
            )
        return _recording(line, base, status, timed_out)
    finally:
        shutil.rmtree(base, ignore_errors=True)


_STRING = re.compile(r'"((?:\\x[0-9a-f]{2})*)"')
_CALL = re.compile(r"^(\w+)\((.*)\) = (-?\d+)(?:<((?:\\x[0-9a-f]{2})*)>)?")
_WRITING = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")


def _text(hexed: str) -> str:
    return bytes.fromhex(hexed.replace("\\x", "")).decode("utf-8", "surrogateescape")


def _recording(line: str, base: Path, status: int, timed_out: bool) -> Recording:
    ws = str(base / "ws")
    events: dict[int, list[tuple[str, str, int, str | None]]] = {}
    for trace in (base / "trace").glob("t.*"):
        pid = int(trace.name.split(".", 1)[1])
        calls = events.setdefault(pid, [])
        for raw in trace.read_text(encoding="ascii", errors="replace").splitlines():
            found = _CALL.match(raw)
            if found:
                name, args, result, decorated = found.groups()
                calls.append((name, args, int(result), decorated))
    # which program each process ran when it was created: its parent's at the clone
    parent_image: dict[int, str] = {}
    order: list[tuple[int, int]] = []  # (pid, index) of each exec, for a stable argv order
    executed: dict[tuple[int, int], tuple[str, ...]] = {}
    accesses: list[Access] = []

    def walk(pid: int, image: str) -> None:
        for index, (name, args, result, decorated) in enumerate(events.get(pid, ())):
            if name in ("execve", "execveat") and result == 0:
                strings = [_text(s) for s in _STRING.findall(args.split("], ", 1)[0] + "]")]
                image = os.path.basename(strings[0])
                executed[(pid, index)] = tuple(strings[1:])
                order.append((pid, index))
            elif name in ("clone", "clone3", "fork", "vfork") and result > 0:
                parent_image[result] = image
            elif name in ("open", "openat", "creat") and result >= 0 and decorated:
                absolute = _text(decorated)
                if absolute != ws and not absolute.startswith(str(base) + "/"):
                    continue  # system files (libraries, locales) are read-only here anyway
                if absolute.startswith(str(base / "trace")) or absolute == str(base / "git-trace"):
                    continue
                write = name == "creat" or any(flag in args for flag in _WRITING)
                read = name != "creat" and ("O_RDONLY" in args or "O_RDWR" in args)
                accesses.append(Access(os.path.relpath(absolute, ws), absolute, read, write, image))

    pending = sorted(events)
    done: set[int] = set()
    while pending:  # a child is walked after the parent that named its image
        progressed = False
        for pid in list(pending):
            if (pid == pending[0] and not done) or pid in parent_image:
                walk(pid, parent_image.get(pid, "strace"))
                done.add(pid)
                pending.remove(pid)
                progressed = True
        if not progressed:  # a process whose parent's trace was cut off (a timeout)
            walk(pending.pop(0), "unknown")
    git_trace = base / "git-trace"
    builtins: list[tuple[str, ...]] = []
    if git_trace.exists():
        for raw in git_trace.read_text(encoding="utf-8", errors="replace").splitlines():
            _, found, command = raw.partition("trace: built-in: ")
            if found:
                try:
                    builtins.append(tuple(shlex.split(command)))
                except ValueError:
                    builtins.append(tuple(command.split()))
    return Recording(
        line,
        ws,
        str(base / "home"),
        tuple(executed[key] for key in sorted(order)),
        tuple(builtins),
        tuple(accesses),
        status,
        timed_out,
    )
