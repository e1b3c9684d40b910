"""A signed bundle pulled from a URL: polled with ETags, verified, kept on disk, swapped whole.

Every `interval` seconds the source asks the URL with `If-None-Match` (the ETag of the bundle
it holds): a 304 costs nothing. A new bundle is read up to the bundle size cap, verified (its
hashes and its HMAC signature under the operator's key: a URL-pulled bundle must be signed,
since whoever can answer for the URL could otherwise serve a looser policy) and compiled, and
only then swapped in; it is written to the bundle directory (a temporary file, then a rename),
so a restarted replica serves it at once, before the URL answers. Any failure (the server
down or slow, an error status, garbage, a bad signature) keeps the last good revision in
service and is reported: /health says `degraded`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from pathlib import Path

from .state import Listener, ReloadEvent, Snapshot, first_problem

USER_AGENT = "policyctl-serve"


def default_bundle_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "policyctl" / "server"


class BundleRejected(Exception):
    """The URL's answer cannot be served; `code` is PC527 (fetch) or PC528 (content)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class UrlSource:
    def __init__(
        self,
        url: str,
        directory: str,
        key: bytes,
        *,
        interval: float = 10.0,
        timeout: float = 10.0,
        listener: Listener | None = None,
    ) -> None:
        from ...compile.bundleread import bundle_limits

        self.url = url
        self.key = key
        self.interval = interval
        self.timeout = timeout
        self.max_bytes = bundle_limits().max_file_bytes
        self._listener = listener
        self._snapshot: Snapshot | None = None
        self._last: ReloadEvent | None = None
        self._etag: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        name = hashlib.sha256(url.encode()).hexdigest()[:16]
        self.directory = Path(directory)
        self.kept = self.directory / f"{name}.bundle.json"
        self._restore()
        self.poll()

    @property
    def snapshot(self) -> Snapshot | None:
        return self._snapshot

    @property
    def last_event(self) -> ReloadEvent | None:
        return self._last

    def describe(self) -> str:
        return self.url

    # -- loading -----------------------------------------------------------------------------

    def _verified(self, raw: bytes, shown: str) -> Snapshot:
        """The bundle's bytes verified and compiled, or `BundleRejected`."""
        from ...compile.bundle import load_bundle
        from ...diagnostics import PolicyError

        try:
            text = raw.decode("utf-8")
            policy = load_bundle(shown, key=self.key, text=text)
        except UnicodeDecodeError as exc:
            raise BundleRejected("PC528", f"{shown}: not UTF-8 (byte {exc.start})") from None
        except PolicyError as exc:
            raise BundleRejected("PC528", first_problem(exc.diagnostics)) from None
        except Exception as exc:  # a bundle that breaks the loader is a rejected bundle
            raise BundleRejected("PC528", f"{shown}: {type(exc).__name__}: {exc}") from None
        revision = "sha256:" + hashlib.sha256(raw).hexdigest()
        return Snapshot(policy, revision, self.url, time.time())

    def _restore(self) -> None:
        """The bundle kept by an earlier run, verified like a fetched one."""
        try:
            raw = self.kept.read_bytes()
        except OSError:
            return
        try:
            snap = self._verified(raw, str(self.kept))
        except BundleRejected as exc:
            self._emit(ReloadEvent(False, None, f"{exc.code} {exc}", time.time()))
            return
        self._snapshot = snap
        with contextlib.suppress(OSError):
            self._etag = self.kept.with_suffix(".etag").read_text(encoding="ascii").strip()
        self._emit(ReloadEvent(True, snap.revision, None, time.time()))

    def poll(self) -> bool:
        """Ask the URL once; True when a new revision went into service."""
        try:
            fetched = self._fetch()
            if fetched is None:
                return False  # 304: what is in service is current
            raw, etag = fetched
            revision = "sha256:" + hashlib.sha256(raw).hexdigest()
            current = self._snapshot
            if current is not None and current.revision == revision:
                self._etag = etag
                return False
            snap = self._verified(raw, self.url)
        except BundleRejected as exc:
            self._emit(ReloadEvent(False, None, f"{exc.code} {exc}", time.time()))
            return False
        self._snapshot = snap  # one assignment: a request sees the old or the new, whole
        self._etag = etag
        self._persist(raw, etag)
        self._emit(ReloadEvent(True, snap.revision, None, time.time()))
        return True

    def _fetch(self) -> tuple[bytes, str | None] | None:
        import httpx

        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self._etag and self._snapshot is not None:
            headers["If-None-Match"] = self._etag
        try:
            with httpx.stream(
                "GET", self.url, headers=headers, timeout=self.timeout, follow_redirects=False
            ) as response:
                if response.status_code == 304:
                    return None
                if response.status_code != 200:
                    raise BundleRejected("PC527", f"{self.url} answered {response.status_code}")
                chunks: list[bytes] = []
                size = 0
                deadline = time.monotonic() + self.timeout
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise BundleRejected(
                            "PC528", f"{self.url}: larger than {self.max_bytes} bytes"
                        )
                    if time.monotonic() > deadline:  # a server that trickles bytes
                        raise BundleRejected("PC527", f"{self.url}: too slow")
                    chunks.append(chunk)
                return b"".join(chunks), response.headers.get("etag")
        except httpx.HTTPError as exc:
            raise BundleRejected("PC527", f"{self.url}: {type(exc).__name__}: {exc}") from None

    def _persist(self, raw: bytes, etag: str | None) -> None:
        """Keep the bundle for the next start; a failure to write only costs that."""
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            for target, data in ((self.kept, raw), (self.kept.with_suffix(".etag"), etag)):
                temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
                temporary.write_bytes(data if isinstance(data, bytes) else (data or "").encode())
                os.replace(temporary, target)
        except OSError:
            pass

    def _emit(self, event: ReloadEvent) -> None:
        self._last = event
        if self._listener is not None:
            self._listener(event)

    # -- polling -----------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="policyctl-poll", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception as exc:  # the poller must outlive any single failure
                self._emit(ReloadEvent(False, None, f"PC527 {type(exc).__name__}", time.time()))
