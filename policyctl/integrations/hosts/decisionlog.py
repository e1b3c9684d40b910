"""The decision log: one JSON line per hook decision, appended to a file.

A record holds the time, host, event, session, tool, verdict, deciding layer and entry, the
policy's revision and the SHA-256 of the call's arguments (the arguments themselves only
when the operator asks, `--log-arguments`: they may hold secrets). Each record is written
with one `write` on a file opened for appending, so hooks of calls running side by side do
not interleave their lines.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from typing import Any


def append_record(path: str, record: Mapping[str, Any]) -> str | None:
    """Append one record; the problem as text when it could not be written, else None."""
    stamped = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **record}
    line = json.dumps(stamped, ensure_ascii=True, separators=(",", ":"), default=str) + "\n"
    try:
        fd = _open_for_append(path)
        try:
            os.write(fd, line.encode("ascii"))
        finally:
            os.close(fd)
    except OSError as exc:
        return f"the decision log {path} cannot be written ({exc.strerror})"
    return None


def _open_for_append(path: str) -> int:
    """`path` opened for appending (created 0600). Opened without blocking: a FIFO with no
    reader would otherwise hold `open` for ever (a server that never starts, a gateway whose
    event loop stops at its next call); it fails with ENXIO instead, as an unwritable log.
    Writes then block again, as they would on stdout."""
    nonblock = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | nonblock, 0o600)
    if nonblock:
        os.set_blocking(fd, True)
    return fd


def log_unwritable(path: str) -> str | None:
    """Why the log at `path` cannot take a line, or None: checked before serving (a server
    whose every record is lost should not start) and before a call whose record is written
    after it."""
    try:
        os.close(_open_for_append(path))
    except OSError as exc:
        return f"the decision log {path} cannot be written ({exc.strerror})"
    return None


def arguments_sha256(arguments: Any) -> str:
    """The digest a record carries instead of the arguments: of their canonical JSON (sorted
    keys), so the same call always logs the same digest."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8", "replace")).hexdigest()
