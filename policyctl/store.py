"""PolicyStore: hot reload that never serves a broken policy.

The store watches a policy file and everything it extends (and an operator catalog file).
When one changes (and has been quiet for a moment: see `check`), the new version is loaded
and compiled off the hot path and swapped in with a single reference assignment, so a resolve
sees one whole version, never a mix, and a resolve in flight finishes on the version it
started with. An invalid, truncated or deleted file leaves the last good version in service
and is reported (log and callback). A store whose policy was never valid fails closed:
`resolve` raises and grants nothing.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .api import compile_loaded
from .compile import CompiledPolicy
from .context import RunContext
from .diagnostics import Diagnostic, PolicyError
from .inventory import Inventory, Tool
from .loader import load_document
from .pipeline.engine import Resolver
from .pipeline.result import Resolution

log = logging.getLogger("policyctl.store")


class PolicyUnavailable(RuntimeError):
    """No valid version of the policy has ever been loaded: no tools are granted."""

    def __init__(self, path: str, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = tuple(diagnostics)
        first = f": {self.diagnostics[0]}" if self.diagnostics else ""
        super().__init__(f"policy {path} is not available (never loaded a valid version){first}")


class PolicyStore:
    def __init__(
        self,
        path: str | Path,
        *,
        on_error: Callable[[tuple[Diagnostic, ...]], None] | None = None,
        on_reload: Callable[[CompiledPolicy], None] | None = None,
        interval: float = 1.0,
        settle: float = 0.2,
    ) -> None:
        self.path = Path(path)
        self.settle = settle
        self.on_error = on_error
        self.on_reload = on_reload
        self.interval = interval
        self._current: CompiledPolicy | None = None
        #: the policy in service and its resolver, swapped together in one assignment
        self._serving: tuple[CompiledPolicy, Resolver] | None = None
        self._version = 0
        self._errors: tuple[Diagnostic, ...] = ()
        self._watched: tuple[Path, ...] = (self.path,)
        self._fingerprint: tuple[tuple[str, str], ...] | None = None
        self._lock = threading.Lock()  # one reload at a time; readers never take it
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reload()

    # -- reading: lock-free -----------------------------------------------------------------

    @property
    def current(self) -> CompiledPolicy | None:
        return self._current

    @property
    def version(self) -> int:
        """How many valid versions have been swapped in (0: none yet)."""
        return self._version

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """The diagnostics of the last failed load (empty after a good one)."""
        return self._errors

    def resolve(
        self,
        context: RunContext | None = None,
        inventory: Inventory | Iterable[Tool] | None = None,
        **kw: Any,
    ) -> Resolution:
        serving = self._serving  # one read: this resolve stays on this version
        if serving is None:
            raise PolicyUnavailable(str(self.path), self._errors)
        return serving[1].resolve(context, inventory, **kw)

    # -- loading ------------------------------------------------------------------------------

    def _fingerprint_of(self, paths: Iterable[Path]) -> tuple[tuple[str, str], ...]:
        out = []
        for p in paths:
            try:
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
            except OSError:
                digest = "missing"
            out.append((str(p), digest))
        return tuple(out)

    def reload(self) -> bool:
        """Load and compile now; swap in if valid. True when a new version went in."""
        return self._reload(verify_quiet=False)

    def _quiet(self, paths: Iterable[Path]) -> bool:
        """No file modified within the last `settle` seconds."""
        now = time.time()
        for p in paths:
            try:
                if now - p.stat().st_mtime < self.settle:
                    return False
            except OSError:
                continue
        return True

    def _reload(self, verify_quiet: bool) -> bool:
        with self._lock:
            before = self._fingerprint_of(self._watched)
            try:
                loaded = load_document(self.path)
                policy = compile_loaded(loaded)
            except PolicyError as exc:
                self._fingerprint = before
                self._report(exc.diagnostics)
                return False
            except Exception as exc:  # never let a reload take the service down
                self._fingerprint = before
                self._report(
                    (Diagnostic.make("PC120", f"reload failed: {type(exc).__name__}: {exc}"),)
                )
                return False
            watched = [Path(f) for f in loaded.files]
            catalog = loaded.data.get("catalog")
            if isinstance(catalog, str) and catalog.endswith((".toml", ".yaml", ".yml", ".json")):
                watched.append(self.path.parent / catalog)
            watched_now = tuple(dict.fromkeys(watched))
            after = self._fingerprint_of(watched_now)
            if verify_quiet and (after[0] != before[0] or not self._quiet(watched_now)):
                # A writer touched the files while they were read: what was read may be a
                # truncated state. Serve nothing from it; look again at the next tick.
                self._fingerprint = None
                return False
            self._watched = watched_now
            # A write that raced this load changes the root's digest between `before` and
            # `after`: forget the fingerprint so the next check loads again.
            self._fingerprint = after if after[0] == before[0] else None
            self._serving = (policy, Resolver(policy))
            self._current = policy
            self._version += 1
            self._errors = ()
        log.info("policy %s: version %d in service", self.path, self._version)
        if self.on_reload is not None:
            self.on_reload(policy)
        return True

    def _report(self, diagnostics: Iterable[Diagnostic]) -> None:
        self._errors = tuple(diagnostics)
        kept = f"keeping version {self._version}" if self._current else "no version in service"
        log.warning(
            "policy %s: reload failed (%s): %s",
            self.path,
            kept,
            self._errors[0] if self._errors else "unknown error",
        )
        if self.on_error is not None:
            try:
                self.on_error(self._errors)
            except Exception as exc:
                log.warning(
                    "policy %s: on_error callback failed: %s", self.path, type(exc).__name__
                )

    def check(self) -> bool:
        """Reload if a watched file changed since the last attempt and has been quiet since.

        A file written in place passes through truncated states, and a truncated policy can be
        valid and looser than either version (the first half of a file, without its deny
        list). So a change is loaded only once no watched file has been modified for `settle`
        seconds. Writers that replace files atomically (write a temporary file, then rename)
        need no such wait; the store cannot tell them apart, so it waits for everyone."""
        if self._fingerprint_of(self._watched) == self._fingerprint:
            return False
        if not self._quiet(self._watched):
            return False  # still being written: look again at the next tick
        return self._reload(verify_quiet=True)

    # -- watching -----------------------------------------------------------------------------

    def start(self) -> PolicyStore:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._watch, name=f"policyctl-watch {self.path}", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check()
            except Exception as exc:  # the watcher must outlive any single failure
                log.warning("policy %s: watch failed: %s", self.path, type(exc).__name__)

    def __enter__(self) -> PolicyStore:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
