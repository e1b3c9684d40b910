"""Paths that name a process's own view: `/proc/self/cwd`, `/proc/self/root`, `/dev/fd/3`.

The kernel resolves them against the process that opens them. The process that opens a call's
path is the run's (its command, its file tool), not the one deciding the call, so resolving
them here, with `os.path.realpath`, would decide the decider's working directory and open
files. `real_path` walks a path as realpath does, but a step into one of these links is
resolved against the run instead: `/proc/self/cwd` is the run's working directory (the call's,
else the workspace), `/proc/self/root` is `/`, and a link whose target only the running
process knows (an open file, its executable, another process's directory) makes the path
unknown, which the caller refuses to analyse (fail closed).

`/dev/stdin`, `/dev/stdout` and `/dev/stderr` are the run's own streams: kept as written.
"""

from __future__ import annotations

import os
import re
import stat
from collections import deque

#: what each link of a process directory (`/proc/self/<name>`) names for the run: "cwd" (the
#: run's working directory), "root" (`/`), or None (only the running process knows: unknown)
PROCESS_LINKS: dict[str, str | None] = {
    "cwd": "cwd",
    "root": "root",
    "exe": None,
    "fd": None,
    "map_files": None,
    "ns": None,
}

#: `/proc/self`, `/proc/thread-self`, `/proc/<pid>`, each optionally `/task/<tid>`: a process
#: directory. `self` is the run's; a number is some process the decision cannot place
_PROCESS_DIR = re.compile(r"/proc/(self|thread-self|[0-9]+)(?:/task/[0-9]+)?")
#: the run's standard streams: not files the rules protect, and not the decider's
STREAMS = frozenset({"/dev/stdin", "/dev/stdout", "/dev/stderr"})
_MAX_LINKS = 40  # what Linux follows before ELOOP


class UnknownPath(ValueError):
    """The path goes through a link only the running process can resolve."""


def _special(candidate: str, run_cwd: str | None) -> str | None:
    """For a path prefix under /proc or /dev: the path it stands for in the run ("" when it
    is to be kept as written, unresolved), None when it is an ordinary path."""
    if candidate in STREAMS:
        return ""
    if candidate == "/dev/fd":
        raise UnknownPath(f"{candidate} holds the running process's open files")
    found = _PROCESS_DIR.fullmatch(candidate)
    if found is not None:
        return ""  # the process directory itself: not the decider's, so not resolved
    head, _, name = candidate.rpartition("/")
    found = _PROCESS_DIR.fullmatch(head)
    if found is None or name not in PROCESS_LINKS:
        return None
    meaning = PROCESS_LINKS[name]
    own = found.group(1) in ("self", "thread-self")
    if meaning is None or not own:
        raise UnknownPath(f"{candidate} is a link only the running process can resolve")
    if meaning == "root":
        return "/"
    if run_cwd is None:
        raise UnknownPath(f"{candidate} is the run's working directory, which is not known")
    return run_cwd


def real_path(joined: str, run_cwd: str | None) -> str:
    """`os.path.realpath(joined)` (not strict: a missing component is taken as written), with
    process-relative links resolved against the run. Raises UnknownPath (or OSError)."""
    parts = deque(joined.split("/"))
    path = ""
    links = 0
    while parts:
        name = parts.popleft()
        if name in ("", "."):
            continue
        if name == "..":
            path = path.rpartition("/")[0]
            continue
        candidate = path + "/" + name
        if candidate.startswith(("/proc/", "/dev/")):
            meaning = _special(candidate, run_cwd)
            if meaning == "":
                path = candidate
                continue
            if meaning is not None:
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(f"too many levels of symbolic links in {joined}")
                parts.extendleft(reversed(meaning.split("/")))
                path = ""
                continue
        try:
            st = os.lstat(candidate)
        except OSError:
            path = candidate  # missing (or unreadable): taken as written, as realpath does
            continue
        if not stat.S_ISLNK(st.st_mode):
            path = candidate
            continue
        links += 1
        if links > _MAX_LINKS:  # a loop: resolved as far as it goes, as realpath does
            return os.path.normpath("/".join([candidate, *parts]))
        target = os.readlink(candidate)
        if target.startswith("/"):
            path = ""
        parts.extendleft(reversed(target.split("/")))
    return path or "/"
