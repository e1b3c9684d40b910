"""The policy a decision server answers from: one immutable snapshot, swapped whole.

A request reads `source.snapshot` once and answers everything from that object, so an answer
is never made of two revisions even while a reload swaps a new one in. A source that has
never loaded a valid policy has no snapshot: the server is not ready and every decision is
refused (503), never allowed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...compile.compiled import CompiledPolicy
    from ...diagnostics import Diagnostic


@dataclass(frozen=True, slots=True)
class Snapshot:
    policy: CompiledPolicy
    #: "sha256:" + the digest of the policy file's or bundle's bytes
    revision: str
    #: where it came from (a path or a URL)
    source: str
    #: when it went into service (seconds since the epoch)
    loaded_at: float


@dataclass(frozen=True, slots=True)
class ReloadEvent:
    """What a source reports after each attempt, for the metrics and /v1/status."""

    ok: bool
    revision: str | None
    error: str | None
    at: float


class PolicySource(Protocol):
    @property
    def snapshot(self) -> Snapshot | None: ...

    @property
    def last_event(self) -> ReloadEvent | None: ...

    def describe(self) -> str: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


Listener = Callable[[ReloadEvent], None]


def first_problem(diagnostics: tuple[Diagnostic, ...]) -> str:
    if not diagnostics:
        return "the policy could not be loaded"
    return "; ".join(str(d) for d in diagnostics[:3])


class Store(Protocol):
    """What a file source needs of `runtime.store.PolicyStore` (the caller hands the class
    in: integrations sit beside the runtime and do not import it)."""

    @property
    def current(self) -> CompiledPolicy | None: ...

    @property
    def revision(self) -> str | None: ...

    @property
    def errors(self) -> tuple[Diagnostic, ...]: ...

    def start(self) -> Any: ...

    def stop(self) -> None: ...


class FileSource:
    """A policy file or a `*.bundle.json` on disk, hot reloaded by `PolicyStore` (it waits
    for quiet files and keeps the last good version when a new one fails to load)."""

    def __init__(
        self,
        path: str,
        store: Callable[..., Store],
        *,
        interval: float = 1.0,
        listener: Listener | None = None,
    ):
        self.path = path
        self._listener = listener
        self._snapshot: Snapshot | None = None
        self._last: ReloadEvent | None = None
        self._store: Store | None = None
        self._pending: CompiledPolicy | None = None
        self._store = store(
            path,
            on_error=self._on_error,
            on_reload=self._on_reload,
            interval=interval,
            settle=min(0.2, interval),
        )
        if self._pending is not None:  # the first load ran inside the store's constructor
            self._on_reload(self._pending)
        elif self._store.current is None and self._last is None:
            # the first load gave up waiting for a file still being written
            self._emit(ReloadEvent(False, None, first_problem(self._store.errors), time.time()))

    @property
    def snapshot(self) -> Snapshot | None:
        return self._snapshot

    @property
    def last_event(self) -> ReloadEvent | None:
        return self._last

    def describe(self) -> str:
        return self.path

    def _on_reload(self, policy: CompiledPolicy) -> None:
        # the store's reloads run one after another (its first load, then its one watcher
        # thread), so the revision read here is the one of `policy`
        if self._store is None:
            self._pending = policy
            return
        revision = self._store.revision or "sha256:unknown"
        now = time.time()
        self._snapshot = Snapshot(policy, revision, self.path, now)
        self._emit(ReloadEvent(True, revision, None, now))

    def _on_error(self, diagnostics: tuple[Diagnostic, ...]) -> None:
        self._emit(ReloadEvent(False, None, first_problem(diagnostics), time.time()))

    def _emit(self, event: ReloadEvent) -> None:
        self._last = event
        if self._listener is not None:
            self._listener(event)

    def set_listener(self, listener: Listener) -> None:
        self._listener = listener

    def start(self) -> None:
        if self._store is not None:
            self._store.start()

    def stop(self) -> None:
        if self._store is not None:
            self._store.stop()


def status_of(source: Any) -> dict[str, Any]:
    """What /v1/status and /health say about the source."""
    snap: Snapshot | None = source.snapshot
    last: ReloadEvent | None = source.last_event
    out: dict[str, Any] = {
        "source": source.describe(),
        "revision": snap.revision if snap else None,
        "loadedAt": _iso(snap.loaded_at) if snap else None,
        "lastReload": None,
    }
    if last is not None:
        out["lastReload"] = {"ok": last.ok, "at": _iso(last.at), "error": last.error}
    return out


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
