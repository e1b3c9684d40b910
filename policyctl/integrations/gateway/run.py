"""Running the gateway: over stdio (the client started it) or as a streamable-HTTP listener.

Both read client messages with a cap (`MAX_MESSAGE_BYTES`): an oversized line on stdio is
dropped up to its newline and answered as unparseable, an oversized HTTP body is refused by
the SDK; either way memory stays bounded and the gateway keeps serving.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp.server.lowlevel.server import NotificationOptions

from .server import Gateway

log = logging.getLogger("policyctl.gateway")

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
_CHUNK = 65536
#: what an oversized line is replaced by: not JSON, so the client gets a parse error
_OVERSIZED = "\x00policyctl: message larger than the gateway's cap\n"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class CappedLines:
    """Lines of a binary stream, each at most `cap` bytes, decoded as UTF-8."""

    def __init__(self, raw: Any, cap: int = MAX_MESSAGE_BYTES) -> None:
        self.raw, self.cap = raw, cap

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        buffer, dropping = b"", False
        while True:
            chunk = await anyio.to_thread.run_sync(self.raw.read1, _CHUNK)
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if dropping:
                    dropping = False
                    yield _OVERSIZED
                    continue
                yield line.decode("utf-8", "replace") + "\n"
            if len(buffer) > self.cap and not dropping:
                log.warning("a client message is larger than %d bytes: dropped", self.cap)
                buffer, dropping = b"", True
            elif dropping:
                buffer = b""


async def run_stdio(gateway: Gateway) -> None:
    from mcp.server.stdio import stdio_server

    options = gateway.server.create_initialization_options(NotificationOptions(tools_changed=True))
    stdin = CappedLines(sys.stdin.buffer)
    async with anyio.create_task_group() as tg:
        await gateway.serve_background(tg)
        async with stdio_server(stdin=stdin) as (read, write):  # type: ignore[arg-type]
            await gateway.server.run(read, write, options)
        tg.cancel_scope.cancel()


def bearer_guard(app: Any, tokens: list[str]) -> Any:
    """An ASGI wrapper refusing every HTTP request without one of `tokens` (401)."""
    encoded = [t.encode() for t in tokens]

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            header = dict(scope.get("headers") or []).get(b"authorization", b"")
            token = header[7:] if header[:7].lower() == b"bearer " else b""
            if not any(hmac.compare_digest(t, token) for t in encoded):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="policyctl-gateway"'),
                        ],
                    }
                )
                body = b'{"error":"policyctl gateway: a valid bearer token is required"}'
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


async def run_http(
    gateway: Gateway, host: str, port: int, tokens: list[str], ready: Any = None
) -> None:
    import uvicorn

    app = gateway.server.streamable_http_app(
        host=host if is_loopback(host) else "0.0.0.0",
        max_request_body_size=MAX_MESSAGE_BYTES,
    )
    served = bearer_guard(app, tokens) if tokens else app
    config = uvicorn.Config(served, host=host, port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        await gateway.serve_background(tg)
        await server.serve()
        tg.cancel_scope.cancel()
