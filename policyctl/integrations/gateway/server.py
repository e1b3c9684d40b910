"""The downstream MCP server clients connect to: `tools/list` is the resolution for the
client's run context, `tools/call` is decided before anything reaches an upstream.

The run context is the gateway's flags (stdio, and the HTTP listener with one token), or for
an HTTP client the context its bearer token stands for in the clients file: nothing a client
sends chooses it. A policy reload or an upstream's `list_changed` re-resolves and tells every
connected client (`notifications/tools/list_changed`). Every call is logged (JSON lines,
arguments hashed unless `log_arguments`) with the time the decision and the call took.
"""

from __future__ import annotations

import hmac
import logging
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ... import __version__
from ...context import RunContext
from ..hosts.decisionlog import append_record, arguments_sha256, log_unwritable
from ..hosts.handler import ALLOW, ASK, DENY, Decided
from . import approval
from .config import ClientEntry, ServerSpec
from .decide import Exposed, PolicyStore, decide, exposed_tools, visible
from .upstream import Upstream, UpstreamUnavailable

_LOG = logging.getLogger("policyctl.gateway")


@dataclass(frozen=True, slots=True)
class GatewayOptions:
    context: RunContext = field(default_factory=RunContext)
    refusal_detail: str = "layer"
    log: str | None = None
    log_arguments: bool = False
    approval_timeout: float = 120.0
    call_timeout: float = 60.0
    reload_interval: float = 1.0


class Gateway:
    def __init__(
        self,
        store: PolicyStore,
        servers: Sequence[ServerSpec],
        options: GatewayOptions,
        clients: Sequence[ClientEntry] = (),
    ) -> None:
        self.store = store
        self.options = options
        self.clients = list(clients)
        self.upstreams = [
            Upstream(s, self._changed, call_timeout=options.call_timeout) for s in servers
        ]
        self.tools: dict[str, Exposed] = {}
        self.pending = approval.PendingApprovals(options.approval_timeout)
        #: one session handle per connected client, for list_changed notifications
        self._sessions: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self.server: Server[Any] = Server(
            "policyctl-gateway",
            version=__version__,
            instructions="Tools of several MCP servers, filtered and decided by policyctl.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        # the sealed state outlives the approval timeout by a minute, so a late answer meets
        # the gateway's own check (a tool error saying so) rather than the SDK's protocol error
        security = RequestStateSecurity.ephemeral(ttl=options.approval_timeout + 60)
        # the SDK's default OpenTelemetry middleware is left out: a span per message costs
        # a measurable share of the per-call overhead, and the decision log times every call
        self.server.middleware = [RequestStateBoundary(security, default_audience=None)]

    # -- lifecycle ----------------------------------------------------------------------

    async def serve_background(self, tg: Any) -> None:
        for upstream in self.upstreams:
            tg.start_soon(upstream.supervise)
        tg.start_soon(self._watch_policy)
        with anyio.move_on_after(20):  # start serving once every upstream came up (or 20 s)
            for upstream in self.upstreams:
                await upstream.connected.wait()

    async def _watch_policy(self) -> None:
        while True:
            await anyio.sleep(self.options.reload_interval)
            if await anyio.to_thread.run_sync(self.store.check):
                await self._notify_all()

    async def _changed(self) -> None:
        self.tools = exposed_tools(self.upstreams)
        await self._notify_all()

    async def _notify_all(self) -> None:
        for session in list(self._sessions.values()):
            try:
                with anyio.move_on_after(2):
                    await session.send_tool_list_changed()
            except Exception:
                continue  # a client gone away

    def _remember(self, ctx: Any) -> None:
        connection = getattr(ctx.session, "_connection", None)
        if connection is not None:
            self._sessions[connection] = ctx.session

    # -- the client's run context -------------------------------------------------------

    def context_of(self, ctx: Any) -> RunContext:
        """The flags' context, or the one the HTTP client's bearer token maps to."""
        if not self.clients:
            return self.options.context
        request = ctx.request
        header = "" if request is None else request.headers.get("authorization", "")
        token = header[7:] if header[:7].lower() == "bearer " else ""
        for client in self.clients:
            if hmac.compare_digest(client.token.encode(), token.encode()):
                return client.context
        raise PermissionError("no client of the clients file has this token")

    # -- tools ---------------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        self._remember(ctx)
        try:
            shown = visible(self.store, self.context_of(ctx), self.tools)
        except (RuntimeError, PermissionError):  # no valid policy (PolicyUnavailable)
            shown = []  # fail closed: no policy, no tools
        tools = [types.Tool.model_validate({**t.listing, "name": t.name}) for t in shown]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        self._remember(ctx)
        started = time.perf_counter()
        name, arguments = params.name, params.arguments or {}
        record: dict[str, Any] = {
            "gateway": "mcp",
            "tool": name,
            "argumentsSha256": arguments_sha256(arguments),
        }
        if self.options.log_arguments:
            record["arguments"] = arguments
        try:
            decided = decide(
                self.store,
                self.context_of(ctx),
                self.tools,
                name,
                arguments,
                self.options.refusal_detail,
            )
        except (RuntimeError, PermissionError) as exc:  # PolicyUnavailable, a bad token
            decided = Decided(DENY, f"policyctl: the call cannot be decided ({exc})")
        except Exception as exc:  # any failure refuses: never a pass
            decided = Decided(DENY, f"policyctl: the call cannot be decided ({type(exc).__name__})")
        if name not in self.tools:
            down = [u.name for u in self.upstreams if name.startswith(f"{u.name}__")]
            if down and not self._connected(down[0]):
                reason = f"MCP server {down[0]!r} is not running (it is being restarted)"
                decided = Decided(DENY, f"policyctl gateway (PC502): {reason}")
        record.update(verdict=decided.verdict, layer=decided.layer, entry=decided.entry)
        reason = decided.reason
        if decided.verdict == ASK:
            outcome = await self._approval(ctx, params, name, arguments, decided)
            if isinstance(outcome, types.InputRequiredResult):
                self._log(record, started, asked="pending")
                return outcome
            record["approval"] = outcome or "approved"
            if outcome is not None:
                reason = f"{decided.reason}: needs approval ({outcome})"
                decided = Decided(DENY, reason, decided.layer, decided.entry, decided.source)
            else:
                decided = Decided(ALLOW, reason, decided.layer, decided.entry, decided.source)
        record["decidedMs"] = round((time.perf_counter() - started) * 1000, 3)
        if decided.verdict != ALLOW:
            self._log(record, started, final=DENY)
            return _error(reason)
        problem = self._log_unwritable()
        if problem is not None:  # a call that cannot be logged is not made (as `serve` does)
            return _error(f"policyctl gateway (PC529): {problem}")
        tool = self.tools.get(name)
        upstream = next((u for u in self.upstreams if tool and u.name == tool.server), None)
        if tool is None or upstream is None:
            self._log(record, started, final=DENY)
            return _error(f"policyctl: the server of {name} is gone")
        try:
            wire = await upstream.call(tool.remote, arguments)
        except UpstreamUnavailable as exc:
            self._log(record, started, final=ALLOW, upstreamError=str(exc)[:500])
            return _error(f"policyctl gateway (PC502): {exc}")
        self._log(record, started, final=ALLOW)
        return types.CallToolResult.model_validate(wire)

    def _connected(self, server: str) -> bool:
        return any(u.name == server and u.connected.is_set() for u in self.upstreams)

    async def _approval(
        self,
        ctx: Any,
        params: types.CallToolRequestParams,
        name: str,
        arguments: Mapping[str, Any],
        decided: Decided,
    ) -> str | types.InputRequiredResult | None:
        if params.request_state is not None:  # the retry carrying an answer (2026-07-28)
            return self.pending.answer(params.request_state, params.input_responses)
        if not approval.can_elicit(ctx):
            return "this client cannot ask its user: it declared no elicitation capability"
        text = approval.question(name, arguments, decided.reason)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self.pending.open(name, arguments, text)
        return await approval.ask_over_back_channel(ctx, text, self.options.approval_timeout)

    def _log_unwritable(self) -> str | None:
        """Why the log cannot take a line, or None. The line is written after the call (it
        holds the call's time), so the file is opened for appending before the call is made."""
        return None if self.options.log is None else log_unwritable(self.options.log)

    def _log(self, record: dict[str, Any], started: float, **more: Any) -> None:
        if self.options.log is None:
            return
        record.update(more, totalMs=round((time.perf_counter() - started) * 1000, 3))
        problem = append_record(self.options.log, record)
        if problem is not None:
            # checked at start; a disk that fills or a file removed later is said, not hidden
            _LOG.warning("%s", problem)

    # -- resources and prompts: passed for the servers whose switch says so -------------

    def _passing(self, kind: str) -> list[Upstream]:
        return [u for u in self.upstreams if getattr(u.spec, kind) == "pass"]

    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        listed = [r for u in self._passing("resources") for r in u.resources]
        return types.ListResourcesResult.model_validate({"resources": listed})

    async def _read_resource(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        for upstream in self._passing("resources"):
            if any(r.get("uri") == str(params.uri) for r in upstream.resources):
                wire = await upstream.passthrough("resources/read", {"uri": str(params.uri)})
                return types.ReadResourceResult.model_validate(wire)
        raise _not_found(f"no resource {str(params.uri)[:200]!r} is passed by this gateway")

    async def _list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        listed = [p for u in self._passing("prompts") for p in u.prompts]
        return types.ListPromptsResult.model_validate({"prompts": listed})

    async def _get_prompt(
        self, ctx: Any, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        for upstream in self._passing("prompts"):
            if any(p.get("name") == params.name for p in upstream.prompts):
                wire = await upstream.passthrough(
                    "prompts/get", {"name": params.name, "arguments": params.arguments}
                )
                return types.GetPromptResult.model_validate(wire)
        raise _not_found(f"no prompt {params.name[:200]!r} is passed by this gateway")


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _not_found(text: str) -> Exception:
    from mcp.shared.exceptions import MCPError

    return MCPError(code=types.INVALID_PARAMS, message=text)
