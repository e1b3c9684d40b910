"""Reading policy files from disk: regular files only, a hard byte cap, and `extends` confined.

`stat()` cannot be trusted for the size (`/dev/zero` says 0 bytes and never ends) and opening a
FIFO blocks until a writer appears, so a file is opened without blocking, checked with
`fstat` on the open descriptor (no window between the check and the read), and read up to the
cap plus one byte. Everything that reads an operator-named file goes through `read_capped`:
the loader, operator catalogs, the hot-reload store's fingerprints, the source lines that
diagnostics quote.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..diagnostics import Diagnostic, PolicyError, Source

#: The file name endings `extends` accepts: a policy file is YAML, JSON or TOML.
POLICY_SUFFIXES = (".yaml", ".yml", ".json", ".toml")


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a socket or a directory."""


class TooLarge(OSError):
    """The file holds more bytes than the cap."""


def read_capped(path: Path, cap: int) -> bytes:
    """At most `cap` bytes of a regular file; `TooLarge` beyond, `NotRegularFile` for others."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(f"{path} is not a regular file")
        if info.st_size > cap:  # a regular file's size is known: refuse before reading
            raise TooLarge(f"{path} is larger than {cap} bytes")
        raw = bytearray()
        while len(raw) <= cap:  # and it may grow while being read: the cap still holds
            chunk = os.read(fd, min(cap + 1 - len(raw), 1 << 20))
            if not chunk:
                break
            raw += chunk
    finally:
        os.close(fd)
    if len(raw) > cap:
        raise TooLarge(f"{path} is larger than {cap} bytes")
    return bytes(raw)


def confinement_problem(target: Path, roots: tuple[Path, ...]) -> str | None:
    """Why `target` may not be extended, or None. `roots` are resolved directories."""
    if not target.name.lower().endswith(POLICY_SUFFIXES):
        return f"{target.name} is not a policy file (.yaml, .yml, .json or .toml)"
    real = target.resolve()
    if any(real == root or root in real.parents for root in roots):
        return None
    return f"{target} is outside the policy's directory {roots[0]}"


def policy_roots(root: Path, extends_roots: tuple[str, ...]) -> tuple[Path, ...]:
    """The resolved directories a policy may read other files from: the root policy's own,
    then those of `POLICYCTL_EXTENDS_ROOTS`. `extends` and operator catalogs share them."""
    return (root.parent.resolve(), *(Path(r).resolve() for r in extends_roots))


def extends_error(message: str, named_at: Source | None, path: str = "extends") -> PolicyError:
    return PolicyError(
        [
            Diagnostic.make(
                "PC113",
                message,
                named_at,
                path=path,
                fix="move the file under the policy's directory, or allow its directory with "
                "POLICYCTL_EXTENDS_ROOTS",
            )
        ]
    )
