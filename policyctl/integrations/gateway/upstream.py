"""Upstream MCP servers: started, supervised, listed and called by the gateway.

Each upstream runs in a task of its own that connects (starting a stdio server's process, or
opening a streamable-HTTP session), lists its tools and then waits. When the connection
breaks (the process exits, a call finds the pipe closed, the session fails) the task forgets
the tools, tells the gateway (which re-lists for its clients) and connects again after a
backoff that doubles up to `MAX_BACKOFF`. A call to a server that is down, or that does not
answer within the call timeout, is a tool error for that call only.

What an upstream lists is checked before a client sees it: a tool without a usable name, a
duplicate name, a non-object schema or more than `max_tools` tools is dropped and logged, so
an upstream cannot make a listing the gateway would mis-name or take memory without bound.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from ...escape import printable_line
from .config import ServerSpec

log = logging.getLogger("policyctl.gateway")

MAX_BACKOFF = 30.0
FIRST_BACKOFF = 0.25
MAX_NAME_CHARS = 128
#: characters of an upstream failure quoted in a refusal or a log line
MAX_MESSAGE_CHARS = 1000


_LIST_CHANGED = (
    types.ToolListChangedNotification,
    types.ResourceListChangedNotification,
    types.PromptListChangedNotification,
)


def _wire(model: Any) -> dict[str, Any]:
    wire: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return wire


class UpstreamUnavailable(Exception):
    """The upstream could not answer the call (down, crashed mid-call, timed out).

    Its text quotes what the upstream said and goes into the agent's refusal and the logs:
    made one printable line here, so an upstream cannot write lines of its own (a forged
    verdict, terminal escapes) into either."""

    def __init__(self, message: str) -> None:
        super().__init__(printable_line(message)[:MAX_MESSAGE_CHARS])


class Upstream:
    def __init__(
        self,
        spec: ServerSpec,
        on_change: Callable[[], Awaitable[None]],
        *,
        call_timeout: float = 60.0,
        connect_timeout: float = 20.0,
        max_tools: int = 5000,
        max_result_bytes: int = 4 * 1024 * 1024,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self._on_change = on_change
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        self.max_tools = max_tools
        self.max_result_bytes = max_result_bytes
        #: the checked listing (wire dicts) while connected; empty while down
        self.tools: tuple[dict[str, Any], ...] = ()
        self.resources: tuple[dict[str, Any], ...] = ()
        self.prompts: tuple[dict[str, Any], ...] = ()
        self.connected = anyio.Event()
        self._client: Client | None = None
        self._broken = anyio.Event()
        self._relist = anyio.Event()
        self.restarts = 0

    # -- supervision ----------------------------------------------------------------------

    async def supervise(self) -> None:
        """Connect, serve, reconnect with backoff: forever (cancelled when the gateway stops)."""
        backoff = FIRST_BACKOFF
        while True:
            try:
                await self._serve_one_connection()
                backoff = FIRST_BACKOFF  # a connection that came up resets the backoff
            except anyio.get_cancelled_exc_class():
                raise
            except BaseException as exc:  # a failing upstream never takes the gateway down
                log.warning("upstream %s: %s", self.name, _describe(exc))
            self._forget()
            await self._on_change()
            self.restarts += 1
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)

    async def _serve_one_connection(self) -> None:
        self._broken = anyio.Event()
        # one scope around the whole connection (the SDK's task groups live inside it): its
        # deadline bounds the connect and the first listing, and is lifted once they are done
        with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
            async with self._client_for() as client:
                self._client = client
                await self._list(client)
                scope.deadline = math.inf
                self.connected.set()
                await self._on_change()
                while not self._broken.is_set() and self._alive():
                    with anyio.move_on_after(1.0):
                        await self._relist.wait()
                    if self._relist.is_set():
                        self._relist = anyio.Event()
                        await self._list(client)
                        await self._on_change()
        if scope.cancelled_caught:
            raise TimeoutError(f"no connection within {self.connect_timeout:g} s")

    def _client_for(self) -> Client:
        spec = self.spec
        if spec.command is not None:
            params = StdioServerParameters(
                command=spec.command, args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
            )
            return Client(params, message_handler=self._on_message, cache=None)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        assert spec.url is not None
        http = httpx2.AsyncClient(
            headers=dict(spec.headers), timeout=httpx2.Timeout(self.connect_timeout, read=None)
        )
        transport = streamable_http_client(spec.url, http_client=http)
        return Client(transport, message_handler=self._on_message, cache=None)

    def _alive(self) -> bool:
        """Whether the session still reads from the server. The SDK does not end a session
        whose server went away while nothing was asked, so the gateway looks at its
        dispatcher (best effort: a call that finds it closed marks it broken anyway)."""
        client = self._client
        if client is None:
            return False
        dispatcher = getattr(client.session, "_dispatcher", None)
        return getattr(dispatcher, "_closed", False) is not True

    def _forget(self) -> None:
        self._client = None
        self.connected = anyio.Event()
        self.tools, self.resources, self.prompts = (), (), ()

    async def _on_message(self, message: Any) -> None:
        if isinstance(
            message,
            types.ToolListChangedNotification
            | types.ResourceListChangedNotification
            | types.PromptListChangedNotification,
        ):
            self._relist.set()

    async def _list(self, client: Client) -> None:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(100):  # pages; an upstream that pages forever is cut off
            page = await client.list_tools(cursor=cursor)
            tools.extend(
                t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools
            )
            cursor = page.next_cursor
            if cursor is None or len(tools) > self.max_tools:
                break
        self.tools = self._checked(tools)
        caps = client.server_capabilities
        if self.spec.resources == "pass" and caps.resources is not None:
            listed = await client.list_resources()
            self.resources = tuple(
                r.model_dump(by_alias=True, mode="json", exclude_none=True)
                for r in listed.resources[: self.max_tools]
            )
        if self.spec.prompts == "pass" and caps.prompts is not None:
            listed_prompts = await client.list_prompts()
            self.prompts = tuple(
                p.model_dump(by_alias=True, mode="json", exclude_none=True)
                for p in listed_prompts.prompts[: self.max_tools]
            )

    def _checked(self, tools: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
        kept: list[dict[str, Any]] = []
        seen: set[str] = set()
        for tool in tools:
            name = tool.get("name")
            problem = None
            if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS:
                problem = "a tool without a usable name (at most 128 characters)"
            elif name in seen:
                problem = f"tool {name!r} listed twice (the first is kept)"
            elif not isinstance(tool.get("inputSchema"), dict):
                problem = f"tool {name!r} has no object inputSchema"
            elif len(kept) >= self.max_tools:
                problem = f"more than {self.max_tools} tools (the rest are dropped)"
            if problem:
                log.warning("upstream %s (PC503): %s", self.name, problem)
                if len(kept) >= self.max_tools:
                    break
                continue
            seen.add(str(name))
            kept.append(tool)
        return tuple(kept)

    # -- calling --------------------------------------------------------------------------

    async def call(self, remote: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """`tools/call` upstream; the result as a wire dict. `UpstreamUnavailable` when the
        server is down, breaks mid-call, answers nothing in time or answers too much."""
        client = self._client
        if client is None:
            raise UpstreamUnavailable(f"MCP server {self.name!r} is not running (restarting)")
        try:
            with anyio.fail_after(self.call_timeout):
                result = await client.call_tool(remote, dict(arguments))
        except TimeoutError:
            raise UpstreamUnavailable(
                f"MCP server {self.name!r} did not answer within {self.call_timeout:g} s"
            ) from None
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED or not self._alive():
                self._broken.set()  # reconnect: the server is gone
            raise UpstreamUnavailable(f"MCP server {self.name!r}: {exc}") from None
        except Exception as exc:
            self._broken.set()  # a transport failure: reconnect
            raise UpstreamUnavailable(
                f"MCP server {self.name!r} failed during the call ({_describe(exc)})"
            ) from None
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        size = len(json.dumps(wire, separators=(",", ":")))
        if size > self.max_result_bytes:
            raise UpstreamUnavailable(
                f"MCP server {self.name!r} returned {size} bytes, more than the "
                f"{self.max_result_bytes} the gateway passes on"
            )
        return wire

    async def passthrough(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """A resources or prompts request forwarded as it came (for servers whose switch
        passes them)."""
        client = self._client
        if client is None:
            raise UpstreamUnavailable(f"MCP server {self.name!r} is not running (restarting)")
        with anyio.fail_after(self.call_timeout):
            if method == "resources/read":
                got: Any = await client.read_resource(params["uri"])
            else:
                got = await client.get_prompt(params["name"], params.get("arguments"))
        wire: dict[str, Any] = got.model_dump(by_alias=True, mode="json", exclude_none=True)
        return wire


def _describe(exc: BaseException) -> str:
    group = getattr(exc, "exceptions", None)  # an exception group (no builtin on 3.10)
    if isinstance(group, tuple) and group:
        return "; ".join(_describe(e) for e in group[:3])
    text = str(exc) or type(exc).__name__
    return printable_line(f"{type(exc).__name__}: {text}")[:500]
