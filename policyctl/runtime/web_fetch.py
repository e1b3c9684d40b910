"""The reference `web_fetch`: one GET, every redirect hop decided as a new call.

The gate decided the URL the model named. The tool then fetches hop by hop, never letting the
HTTP library follow a redirect: each `Location` is made absolute and decided as a new call of
`web_fetch` (a deny refuses it, an ask goes to the approver, `callDefault` applies) before any
connection is made to it. The URL is read with the call rules' own parser, so the host a rule
judged is the host connected to (`http://docs.example@evil.test/` goes to `evil.test` for both).

At each hop the host name is resolved once, and the address is decided too, against the deny
rules only (`web_fetch(ip:10.0.0.0/8)` also refuses a name that resolves into 10/8; allow rules
speak about names, so an address never needs one); the connection goes to that address (TLS
still checks the name's certificate), so a name cannot resolve to another address afterwards.
Only http and https; at most `max_redirects` hops; the body is cut at `max_bytes`.
"""

from __future__ import annotations

import asyncio
import http.client
import ipaddress
import socket
import ssl
from typing import Any
from urllib.parse import urljoin

from ..callrules.urls import parse_call_url
from ..callrules.values import CallURL
from .callcheck import recheck, refuse_if_denied
from .text import truncate
from .tools import RuntimeTool, tool

MAX_REDIRECTS = 5
FETCH_TIMEOUT = 15.0
MAX_BYTES = 2_000_000
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_PORTS = {"http": 80, "https": 443}


class FetchError(Exception):
    pass


def _parsed(url: str) -> CallURL:
    found = parse_call_url(url)
    if isinstance(found, str):
        raise FetchError(f"cannot fetch {url[:200]!r}: {found}")
    if found.scheme not in _PORTS:
        raise FetchError(f"cannot fetch {found.scheme}: URLs (only http and https)")
    return found


def _address(url: CallURL) -> str:
    """The one address this hop connects to."""
    if url.ip is not None:
        return str(url.ip)
    assert url.host is not None
    port = url.port or _PORTS[url.scheme]
    try:
        infos = socket.getaddrinfo(url.host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise FetchError(f"cannot resolve {url.host}: {exc}") from None
    if not infos:
        raise FetchError(f"cannot resolve {url.host}")
    return str(infos[0][4][0])


def _as_address_url(url: CallURL, address: str) -> str:
    ip = ipaddress.ip_address(address)
    host = f"[{ip}]" if ip.version == 6 else str(ip)
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{host}{port}{url.path}"


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)  # type: ignore[attr-defined]


def _get(url: CallURL, address: str, timeout: float, max_bytes: int) -> tuple[int, Any, bytes]:
    """One request, redirects not followed: (status, headers, body up to max_bytes + 1)."""
    port = url.port or _PORTS[url.scheme]
    name = url.host if url.host is not None else address
    kind = _PinnedHTTPS if url.scheme == "https" else _PinnedHTTP
    conn = kind(name, port, address, timeout)
    try:
        conn.request("GET", url.path or "/", headers={"User-Agent": "policyctl-web-fetch"})
        response = conn.getresponse()
        body = response.read(max_bytes + 1)
        return response.status, response.headers, body
    finally:
        conn.close()


def make_web_fetch(
    *,
    max_redirects: int = MAX_REDIRECTS,
    timeout: float = FETCH_TIMEOUT,
    max_bytes: int = MAX_BYTES,
    output_limit: int = 10_000,
) -> RuntimeTool:
    """The reference web_fetch tool (opt-in: `make_builtin_tools` does not include it)."""

    @tool(read_only=True)
    async def web_fetch(url: str) -> dict[str, Any]:
        """Fetch a web page (GET); redirects are followed, each one checked by the policy."""
        current = _parsed(url)
        for hop in range(max_redirects + 1):
            shown = current.render()
            if hop:  # the first hop is the call the gate decided
                await recheck("web_fetch", {"url": shown}, what="redirect")
            address = await asyncio.to_thread(_address, current)
            refuse_if_denied("web_fetch", {"url": _as_address_url(current, address)}, "address")
            status, headers, body = await asyncio.to_thread(
                _get, current, address, timeout, max_bytes
            )
            location = headers.get("Location") if status in _REDIRECTS else None
            if location is None:
                text = body[:max_bytes].decode("utf-8", errors="replace")
                if len(body) > max_bytes:
                    text += f"\n[cut at {max_bytes} bytes]"
                return {
                    "url": shown,
                    "status": status,
                    "content_type": headers.get("Content-Type"),
                    "text": truncate(text, output_limit),
                }
            current = _parsed(urljoin(shown, location))
        raise FetchError(f"more than {max_redirects} redirects")

    return web_fetch
