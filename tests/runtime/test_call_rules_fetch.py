"""web_fetch decides every redirect hop as a new call, and the address it connects to.

A local HTTP server (stdlib) answers with redirects; the rules refuse a redirect to a denied
host or IP before any connection is made to it, ask about a hop an ask rule meets, and refuse
a name whose address a deny `ip:` rule covers.
"""

from __future__ import annotations

import asyncio
import http.server
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from callrules_runtime_helpers import RulesDecider, decider, environment, gate_with, rules

from policyctl.runtime import Approval, ToolCallEvent
from policyctl.runtime.web_fetch import make_web_fetch

ENV = environment()


class Handler(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Handler.hits.append(self.path)
        port = self.server.server_address[1]
        targets = {
            "/hop": "/ok",
            "/to-internal": "http://metadata.internal/latest",
            "/to-ip": "http://10.1.2.3/admin",
            "/to-userinfo": "http://docs.example@10.9.9.9/",
            "/to-localhost": f"http://localhost:{port}/ok",
            "/to-ftp": "ftp://files.example/etc/passwd",
            "/loop": "/loop",
        }
        if self.path in targets:
            self.send_response(302)
            self.send_header("Location", targets[self.path])
            self.end_headers()
            return
        body = b"hello from ok" if self.path == "/ok" else b"nothing"
        self.send_response(200 if self.path == "/ok" else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Handler.hits = []
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def fetch_rules(**lists: Any) -> RulesDecider:
    base = {"deny": ["web_fetch(domain:*.internal)", "web_fetch(ip:10.0.0.0/8)"]}
    for key, extra in lists.items():
        base[key] = [*base.get(key, []), *extra]
    return decider(ENV, agent=[rules("web_fetch", ENV, **base)])


def fetch(url: str, call_decider: RulesDecider, **kw: Any) -> Any:
    gate = gate_with([make_web_fetch(max_redirects=3)], call_decider, **kw)
    return asyncio.run(asyncio.wait_for(gate.call("web_fetch", {"url": url}), 20))


def test_an_allowed_redirect_is_followed(server: str) -> None:
    out = fetch(f"{server}/hop", fetch_rules())
    assert out.ok and out.result["text"] == "hello from ok"
    assert out.result["url"].endswith("/ok") and Handler.hits == ["/hop", "/ok"]


@pytest.mark.parametrize(
    ("path", "entry"),
    [
        ("/to-internal", "web_fetch(domain:*.internal)"),
        ("/to-ip", "web_fetch(ip:10.0.0.0/8)"),
        ("/to-userinfo", "web_fetch(ip:10.0.0.0/8)"),
    ],
)
def test_a_redirect_to_a_denied_host_or_ip_is_refused(server: str, path: str, entry: str) -> None:
    d = fetch_rules()
    out = fetch(server + path, d)
    assert out.veto is not None and out.veto.kind == "policy", out
    assert "redirect refused" in out.veto.reason and entry in out.veto.reason
    assert Handler.hits == [path]


def test_a_redirect_is_a_new_call_that_may_ask(server: str) -> None:
    asked: list[str] = []

    async def approver(event: ToolCallEvent, reason: str) -> Approval:
        asked.append(event.params["url"])
        return Approval.ONCE

    ask = fetch_rules(ask=["web_fetch(domain:localhost)"])
    out = fetch(f"{server}/to-localhost", ask, approver=approver)
    assert out.ok and out.result["text"] == "hello from ok"
    assert len(asked) == 1 and asked[0].startswith("http://localhost:")
    headless = fetch(f"{server}/to-localhost", fetch_rules(ask=["web_fetch(domain:localhost)"]))
    assert headless.veto is not None and headless.veto.kind == "approval"


def test_a_name_resolving_into_a_denied_range_is_refused(server: str) -> None:
    port = server.rsplit(":", 1)[1]
    out = fetch(f"http://localhost:{port}/ok", fetch_rules(deny=["web_fetch(ip:127.0.0.0/8)"]))
    assert out.veto is not None and "address refused" in out.veto.reason
    assert Handler.hits == []


def test_only_http_and_a_bounded_number_of_hops(server: str) -> None:
    to_ftp = fetch(f"{server}/to-ftp", fetch_rules())
    assert not to_ftp.ok and "only http and https" in str(to_ftp.result)
    looping = fetch(f"{server}/loop", fetch_rules())
    assert not looping.ok and "more than 3 redirects" in str(looping.result)
    assert Handler.hits.count("/loop") == 4


@pytest.mark.parametrize("address", ["0.0.0.0", "::"])
def test_a_name_resolving_to_an_unspecified_address_meets_a_loopback_deny(
    server: str, address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 0.0.0.0 and :: connect to this host's loopback on Linux (red-team finding 5)
    from policyctl.runtime import web_fetch as module

    monkeypatch.setattr(module, "_address", lambda url: address)
    port = server.rsplit(":", 1)[1]
    out = fetch(f"http://localhost:{port}/ok", fetch_rules(deny=["web_fetch(ip:127.0.0.0/8)"]))
    assert out.veto is not None and "address refused" in out.veto.reason
    assert Handler.hits == []
