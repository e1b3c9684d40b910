"""PolicyStore: hot reload that never serves a broken policy.

The store watches every file a load read or tried to read: the policy, what it extends, its
operator catalog and the catalogs that extends (one digesting reader reads them all).
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

from ..api import compile_loaded
from ..catalog.inventory import Inventory, Tool
from ..compile.bundle import load_bundle
from ..compile.bundlekeys import TRUST_CODES
from ..compile.bundleread import bundle_limits
from ..compile.compiled import CompiledPolicy
from ..context import RunContext
from ..diagnostics import Diagnostic, PolicyError
from ..document.extends import load_document
from ..formats.files import read_capped
from ..formats.read import decode
from ..pipeline.engine import Resolver
from ..pipeline.result import Resolution
from ..settings import default_limits

log = logging.getLogger("policyctl.store")  # the name operators configure handlers on

#: (file, SHA-256 of its bytes or "missing") for every watched file
Fingerprint = tuple[tuple[str, str], ...]
_MISSING = "missing"


def _read_or_refuse(read: Callable[[Path], str], path: Path) -> str:
    """The file through the store's digesting reader; a file that cannot be read is PC101,
    as for a policy file."""
    try:
        return read(path)
    except OSError as exc:
        raise PolicyError(
            [Diagnostic.make("PC101", f"cannot read {path}: {exc.strerror or exc}")]
        ) from None


def _digest(path: Path) -> str:
    """The SHA-256 of a regular file's bytes; "missing" for anything unreadable (a FIFO or a
    device is never read: see `files.read_capped`)."""
    try:
        return hashlib.sha256(read_capped(path, default_limits().max_file_bytes)).hexdigest()
    except OSError:
        return _MISSING


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
        self._revision: str | None = None
        self._errors: tuple[Diagnostic, ...] = ()
        self._watched: tuple[Path, ...] = (self.path,)
        self._fingerprint: Fingerprint | None = None
        #: the watched files' stat as the store last saw it, and when (its own clock)
        self._observed: tuple[tuple[int, int, int] | None, ...] = ()
        self._observed_at = 0.0
        self._lock = threading.Lock()  # one reload at a time; readers never take it
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._first_load()

    # -- reading: lock-free -----------------------------------------------------------------

    @property
    def current(self) -> CompiledPolicy | None:
        return self._current

    @property
    def version(self) -> int:
        """How many valid versions have been swapped in (0: none yet)."""
        return self._version

    @property
    def revision(self) -> str | None:
        """ "sha256:" and the digest of the policy file's bytes as the version in service read
        them (a decision server reports it with every answer); None before the first."""
        return self._revision

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

    def _fingerprint_of(self, paths: Iterable[Path]) -> Fingerprint:
        return tuple((str(p), _digest(p)) for p in paths)

    def reload(self) -> bool:
        """Load and compile now; swap in if valid. True when a new version went in.

        For a caller that knows the files are complete (it just replaced them atomically);
        the watcher and the first load wait for quiet files instead."""
        return self._reload(verify_quiet=False)

    def _first_load(self) -> None:
        """The first load waits for quiet files too: a store started while a file is being
        written must not serve its truncated state. It gives up after a few `settle` periods
        (no version: fail closed) and the watcher loads the file once it is quiet."""
        for _ in range(10):
            if self._quiet(self._watched):
                self._reload(verify_quiet=True)
                if self._fingerprint is not None:
                    return  # loaded, or failed on what the files really hold
            time.sleep(max(self.settle, 0.01))

    def _quiet(self, paths: Iterable[Path]) -> bool:
        """No watched file modified within the last `settle` seconds.

        By the files' mtimes when they are older than that; otherwise by the store's own
        observation: their stat (mtime, size, inode) unchanged for `settle` seconds of its
        clock. An mtime in the future (clock skew, a `tar` or `rsync -t` copy) would never
        look old, and waiting for it would keep a revocation out of service."""
        now = time.time()
        stats: list[tuple[int, int, int] | None] = []
        recent = False
        for p in paths:
            try:
                st = p.stat()
            except OSError:
                stats.append(None)
                continue
            stats.append((st.st_mtime_ns, st.st_size, st.st_ino))
            if now - st.st_mtime < self.settle:
                recent = True
        observed, clock = tuple(stats), time.monotonic()
        if observed != self._observed:
            self._observed, self._observed_at = observed, clock
        return not recent or clock - self._observed_at >= self.settle

    def _reload(self, verify_quiet: bool) -> bool:
        with self._lock:
            # The fingerprint is made of exactly the bytes the load read (or "missing"), so a
            # write that lands between reading a file and fingerprinting it can never be lost:
            # the next check sees a digest that differs from what was read, and loads again.
            seen: dict[str, str] = {}
            is_bundle = self.path.name.endswith(".bundle.json")
            limits = bundle_limits() if is_bundle else default_limits()

            def read(path: Path) -> str:
                try:
                    raw = read_capped(path, limits.max_file_bytes)
                except OSError:
                    seen[str(path)] = _MISSING
                    raise
                seen[str(path)] = hashlib.sha256(raw).hexdigest()
                return decode(raw, str(path), limits)

            try:
                if is_bundle:
                    # a bundle from `policyctl compile`: one file, verified (and its signature
                    # checked under the configured key) before anything in it is used
                    policy = load_bundle(self.path, text=_read_or_refuse(read, self.path))
                else:
                    loaded = load_document(self.path, limits, reader=read)
                    # the same reader for the operator catalog and the catalogs it extends:
                    # every file the compile reads is digested, and watched from now on
                    policy = compile_loaded(loaded, limits, read)
            except PolicyError as exc:
                self._failed(seen, exc.diagnostics)
                return False
            except Exception as exc:  # never let a reload take the service down
                diagnostic = Diagnostic.make("PC120", f"reload failed: {type(exc).__name__}: {exc}")
                self._failed(seen, (diagnostic,))
                return False
            watched = self._watch_list(seen)
            fingerprint = tuple((str(p), seen.get(str(p), _MISSING)) for p in watched)
            if verify_quiet and (
                not self._quiet(watched) or self._fingerprint_of(watched) != fingerprint
            ):
                # A writer touched the files while they were read, or is still writing: what
                # was read may be a truncated state. Serve nothing from it; look again at the
                # next tick.
                self._watched = watched
                self._fingerprint = None
                return False
            self._watched = watched
            self._fingerprint = fingerprint
            self._serving = (policy, Resolver(policy))
            self._revision = "sha256:" + seen.get(str(self.path), _MISSING)
            self._current = policy
            self._version += 1
            self._errors = ()
        log.info("policy %s: version %d in service", self.path, self._version)
        for warning in policy.diagnostics:
            if warning.code in TRUST_CODES:  # who vouches for the bundle in service
                log.warning(
                    "policy %s: %s %s (fix: %s)",
                    self.path,
                    warning.code,
                    warning.message,
                    warning.fix,
                )
        if self.on_reload is not None:
            self.on_reload(policy)
        return True

    def _watch_list(self, seen: dict[str, str]) -> tuple[Path, ...]:
        """The policy and every file the load read or tried to read, in reading order."""
        return tuple(dict.fromkeys([self.path, *(Path(f) for f in seen)]))

    def _failed(self, seen: dict[str, str], diagnostics: Iterable[Diagnostic]) -> None:
        """Watch every file the failed load tried to read, a missing `extends` target or
        catalog included: the version that fixes the failure may be that file appearing."""
        self._watched = self._watch_list(seen)
        self._fingerprint = tuple((str(p), seen.get(str(p), _MISSING)) for p in self._watched)
        self._report(diagnostics)

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
