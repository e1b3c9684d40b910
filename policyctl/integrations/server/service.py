"""What the routes share: the settings, the policy source, metrics, the decision log, and
the steps every request takes (token, body cap, snapshot, time cap, log)."""

from __future__ import annotations

import asyncio
import hmac
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from . import decide as deciding
from .logs import DecisionLog
from .metrics import Metrics
from .requests import ApiError
from .state import PolicySource, Snapshot


@dataclass(frozen=True, slots=True)
class ServerConfig:
    #: bearer tokens any one of which a request must carry; empty: no token asked
    tokens: tuple[str, ...] = ()
    max_body_bytes: int = 1024 * 1024
    #: seconds from the first byte of the body to the answer
    request_timeout: float = 5.0
    decision_log: str | None = None
    log_arguments: bool = False


class Server:
    """The state the routes share: the policy source, settings, metrics, decision log."""

    def __init__(self, source: PolicySource, config: ServerConfig, metrics: Metrics) -> None:
        self.source = source
        self.config = config
        self.metrics = metrics
        self.log = DecisionLog(config.decision_log)

    # -- the pieces every route uses -------------------------------------------------------

    def authorized(self, request: Request) -> bool:
        if not self.config.tokens:
            return True
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given:
            return False
        presented = given.strip().encode("utf-8", "replace")
        # every token compared, in constant time each: the answer's timing says nothing
        return any([hmac.compare_digest(presented, t.encode()) for t in self.config.tokens])

    async def body(self, request: Request) -> bytes:
        cap = self.config.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > cap):
            raise ApiError(413, "PC520", f"the body is larger than {cap} bytes")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise ApiError(413, "PC520", f"the body is larger than {cap} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def snapshot(self) -> Snapshot:
        snap = self.source.snapshot
        if snap is None:
            raise ApiError(503, "PC524", "no valid policy has been loaded yet (see /v1/status)")
        return snap

    async def run(self, work: Callable[[], Any]) -> Any:
        """`work` (a decision: CPU-bound) on a worker thread, within the time cap."""
        limit = self.config.request_timeout
        try:
            return await asyncio.wait_for(
                anyio.to_thread.run_sync(work, abandon_on_cancel=True), limit
            )
        except (asyncio.TimeoutError, TimeoutError):
            raise ApiError(503, "PC525", f"no answer within {limit:g} s") from None

    def logged(self, answer: deciding.Answer) -> dict[str, Any]:
        """Log the decision; an unwritable log turns an allow or ask into a deny (a logging
        failure may refuse a call, never let an unlogged one through)."""
        problem = self.log.write(answer.record)
        body = answer.body
        if problem is not None and body.get("verdict") in ("allow", "ask"):
            body = {**body, "verdict": "deny", "reason": f"policyctl: {problem}", "code": "PC529"}
        if "verdict" in body:
            self.metrics.decided(body["verdict"], body.get("layer"))
        return body


def error_response(server: Server, exc: ApiError) -> JSONResponse:
    server.metrics.errors.labels(exc.code).inc()
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)


Handler = Callable[[Server, Request], Awaitable[Response]]


def api_route(
    server: Server,
    route: str,
    handler: Handler,
    *,
    open_route: bool = False,
    error: Callable[[ApiError], Response] | None = None,
) -> Any:
    """A JSON route: the token check, the timer, the body and time caps, and errors as JSON
    (or as `error` renders them: AuthZEN's are a message string)."""

    async def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        try:
            if not open_route and not server.authorized(request):
                raise ApiError(401, "PC523", "a valid bearer token is required")
            return await asyncio.wait_for(
                handler(server, request), server.config.request_timeout + 1
            )
        except ApiError as exc:
            problem = exc
        except (asyncio.TimeoutError, TimeoutError):
            problem = ApiError(503, "PC525", "the request took too long")
        finally:
            server.metrics.latency.labels(route).observe(time.perf_counter() - started)
        response = error_response(server, problem)
        return response if error is None else error(problem)

    return endpoint
