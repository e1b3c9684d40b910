"""The values a call is decided on: a `Part` of a call, the run's `Roots`, a `ResolvedPath`,
a `CallURL`. Matchers (`model`, `paths`, `urls`) are typed against them and `subject` builds
them; this module imports nothing else of the call-rule core."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

Anchor = Literal["anywhere", "workspace", "home", "root"]


class ResolvedPath(NamedTuple):
    """`normal`: absolute, `..` removed; `real`: symlinks resolved too.

    `relative` holds, per anchor, the normal and the real path relative to it (None: not under
    it), computed once per call rather than once per rule.
    """

    # per-call value on the hot path: a NamedTuple (immutable too) is built 5x faster

    normal: str
    real: str
    is_dir: bool
    relative: Mapping[Anchor, tuple[str | None, str | None]]


@dataclass(frozen=True, slots=True)
class Roots:
    """The run's workspace and home, absolute. `resolved()` resolves their symlinks once per
    run, so a call's path is resolved from the root down only below them."""

    workspace: str | None
    home: str | None

    def resolved(self) -> Roots:
        def real(path: str | None) -> str | None:
            return None if path is None else os.path.realpath(os.path.abspath(path))

        return Roots(real(self.workspace), real(self.home))


def _show_ip(ip: IP | None) -> str:
    return f"[{ip}]" if isinstance(ip, ipaddress.IPv6Address) else str(ip)


class CallURL(NamedTuple):
    # per-call value on the hot path: a NamedTuple (immutable too) is built 5x faster
    scheme: str
    #: the IDNA host, or None when the host is an IP address
    host: str | None
    ip: IP | None
    port: int | None
    path: str  # path and `?query`

    def render(self) -> str:
        where = self.host if self.host is not None else _show_ip(self.ip)
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{where}{port}{self.path}"

    @property
    def default_port(self) -> bool:
        return self.port is None or DEFAULT_PORTS.get(self.scheme) == self.port


class Part(NamedTuple):
    """One thing to decide. Exactly one of words / path / url / unanalysable is set for kinds
    that have a subject; a keyed-only call has none of them."""

    # per-call value on the hot path: a NamedTuple (immutable too) is built 5x faster

    args: Mapping[str, Any]
    text: str
    roots: Roots
    words: tuple[str | None, ...] | None = None
    open_tail: bool = False
    path: ResolvedPath | None = None
    url: CallURL | None = None
    unanalysable: str | None = None
    #: decided against deny and ask rules only (a `sudo` or `setsid` payload)
    screen: bool = False
    #: a command's words as written when `words` is its canonical form (`git -C . push` is
    #: decided as `git push`): deny and ask rules meet both, an allow rule either
    written: tuple[str | None, ...] | None = None
