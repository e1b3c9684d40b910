"""Running the gateway: over stdio (the client started it) or as a streamable-HTTP listener.

Both read client messages with a cap (`MAX_MESSAGE_BYTES`): an oversized line on stdio is
dropped up to its newline and said on stderr (the SDK has no id to answer it with), an
oversized HTTP body is refused by the SDK; either way memory stays bounded and the gateway
keeps serving.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import os
import socket
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from mcp.server.lowlevel.server import NotificationOptions

from .server import Gateway

log = logging.getLogger("policyctl.gateway")

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
_CHUNK = 65536
#: what an oversized line is replaced by: not JSON, so the SDK drops it as unparseable
_OVERSIZED = "\x00policyctl: message larger than the gateway's cap\n"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class CappedLines:
    """Lines of a byte stream, each at most `cap` bytes, decoded as UTF-8; `read` returns the
    next chunk (b"" at the end)."""

    def __init__(self, read: Callable[[], Awaitable[bytes]], cap: int = MAX_MESSAGE_BYTES) -> None:
        self.read, self.cap = read, cap

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        buffer, dropping = b"", False
        while True:
            chunk = await self.read()
            if not chunk:
                # a last message without its newline is still a message, as the SDK's own
                # stdio reads it; the rest of an oversized one is not
                if buffer and not dropping:
                    yield buffer.decode("utf-8", "replace") + "\n"
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


class PipeWriter:
    """The write side the SDK's stdio transport expects (`write`, `flush`), on an event-loop
    pipe: no worker thread per message, which is most of what a call through the gateway
    costs when stdout is a thread-wrapped file."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        if self.writer.is_closing():
            raise anyio.ClosedResourceError
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        try:
            await self.writer.drain()
        except ConnectionError as exc:
            # the client is gone with answers still unread: the SDK's writer ends quietly on
            # ClosedResourceError only, and the gateway would exit on a traceback
            raise anyio.ClosedResourceError from exc


def _wire(fd: int, divert: int) -> int:
    """A private duplicate of `fd` to serve the wire from; `fd` itself is pointed at `divert`,
    so a stray print (or a child that inherits it) cannot write into the protocol."""
    import fcntl  # POSIX only, like the pipes this serves

    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.dup2(divert, fd)
    return private


def _same_file(a: int, b: int) -> bool:
    first, second = os.fstat(a), os.fstat(b)
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


class _Outgoing(asyncio.StreamReaderProtocol):
    """The write side of the wire; when the client hangs up on it, `on_lost` closes the read
    side too: what the client sends after could be run but never answered."""

    def __init__(self, on_lost: Callable[[], None]) -> None:
        super().__init__(asyncio.StreamReader())
        self.on_lost = on_lost

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.on_lost()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _pipe_streams() -> tuple[CappedLines, PipeWriter] | None:
    """stdin and stdout as event-loop pipes, when both are pipes or sockets (as when a client
    starts the gateway); None otherwise (a terminal or a file: the SDK's threads serve it)."""
    if sys.platform == "win32" or not (_is_pipe(0) and _is_pipe(1)):
        return None
    loop = asyncio.get_running_loop()
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        stdin_fd = _wire(0, null)
    finally:
        os.close(null)
    stdout_fd = _wire(1, 2)
    if stat.S_ISSOCK(os.fstat(stdin_fd).st_mode) and _same_file(stdin_fd, stdout_fd):
        # one socket both ways (socat, inetd, systemd's socket activation): a write pipe
        # transport takes the client's data arriving on it for a hang-up and stops writing,
        # so one socket transport serves both directions
        os.close(stdout_fd)
        sock = socket.socket(fileno=stdin_fd)
        reader, writer = await asyncio.open_connection(sock=sock, limit=_CHUNK)
        return CappedLines(lambda: reader.read(_CHUNK)), PipeWriter(writer)
    reader = asyncio.StreamReader(limit=_CHUNK)
    incoming, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(stdin_fd, "rb", buffering=0)
    )
    protocol = _Outgoing(incoming.close)
    transport, _ = await loop.connect_write_pipe(
        lambda: protocol, os.fdopen(stdout_fd, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return CappedLines(lambda: reader.read(_CHUNK)), PipeWriter(writer)


async def run_stdio(gateway: Gateway) -> None:
    from mcp.server.stdio import stdio_server

    options = gateway.server.create_initialization_options(NotificationOptions(tools_changed=True))
    pipes = await _pipe_streams()
    async with anyio.create_task_group() as tg:
        await gateway.serve_background(tg)
        if pipes is not None:
            stdin, stdout = pipes
            async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):  # type: ignore[arg-type]
                await gateway.server.run(read, write, options)
        else:
            raw: Any = sys.stdin.buffer
            lines = CappedLines(lambda: anyio.to_thread.run_sync(raw.read1, _CHUNK))
            async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
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
