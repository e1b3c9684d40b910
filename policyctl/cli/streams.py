"""Standard streams for a process started with some of them closed.

Called once by `policyctl.cli.run`, the entry of every `policyctl` process, before the warm
hook client (`hook_warm.answer_warm`, which runs before `main` and imports nothing of the
engine) reads and writes them.
"""

from __future__ import annotations

import os
import sys


def open_closed_streams() -> None:
    """A process started with stdin, stdout or stderr closed gets None for it from Python.
    Reading or writing it would fail (a hook that crashes exits 1, which the hosts read as
    "proceed"), and a descriptor the next `open` took (a policy file, a socket) would be
    read as 0 or receive what children write to 1 or 2 (the gateway's upstream servers log
    to stderr). So a closed one is opened on /dev/null, at its own number: stdin then reads
    as empty (a hook refuses an empty payload), and what is written there is dropped."""
    for fd, name, flags, mode in (
        (0, "stdin", os.O_RDONLY, "r"),
        (1, "stdout", os.O_WRONLY, "w"),
        (2, "stderr", os.O_WRONLY, "w"),
    ):
        if getattr(sys, name) is not None:
            continue
        null = os.open(os.devnull, flags)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        setattr(sys, name, open(fd, mode, encoding="utf-8", errors="backslashreplace"))  # noqa: SIM115
