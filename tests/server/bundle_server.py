"""A bundle server for the tests: a real HTTP server on loopback that serves one bundle with
an ETag (answering 304 to a matching If-None-Match), or misbehaves on request."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from policyctl.cli.main import main


def compile_bundle(policy_text: str, key: Path, out: Path) -> bytes:
    """A bundle signed with `key`, compiled by `policyctl compile --key`."""
    source = out.with_suffix(".yaml")
    source.write_text(policy_text)
    assert main(["compile", str(source), "--key", str(key), "-o", str(out)]) == 0
    return out.read_bytes()


def make_key(path: Path, text: str = "k" * 32) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


class BundleServer:
    def __init__(self) -> None:
        self.body = b""
        #: "ok", "down" (503), "garbage" (200 with no bundle)
        self.mode = "ok"
        self.requests: list[tuple[str | None, int]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/team.bundle.json"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                asked = self.headers.get("If-None-Match")
                etag = '"' + hashlib.sha256(owner.body).hexdigest()[:16] + '"'
                if owner.mode == "down":
                    status, body = 503, b"unavailable"
                elif owner.mode == "garbage":
                    status, body = 200, b"<html>not a bundle</html>"
                elif asked == etag:
                    status, body = 304, b""
                else:
                    status, body = 200, owner.body
                owner.requests.append((asked, status))
                self.send_response(status)
                if status in (200, 304) and owner.mode == "ok":
                    self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    @contextmanager
    def running(self) -> Iterator[BundleServer]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
