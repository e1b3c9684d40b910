"""The decision server's ASGI application (Starlette): routes, caps, tokens, errors.

Every route reads the policy snapshot once, so one answer is one revision. Every failure is
a JSON error with a diagnostic code, never a traceback. The hook routes answer every failure
(a bad token included) with a refusal in the host's format and HTTP 200: Claude Code treats a
non-2xx answer from an `http` hook as "no objection", so an error status there would allow.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import decide as deciding
from .metrics import CONTENT_TYPE, Metrics
from .requests import ApiError, BatchRequest, DecideRequest, ResolveRequest, parse_json, validated
from .service import Handler, Server, ServerConfig, api_route, error_response
from .state import PolicySource, status_of

REVISION_HEADER = "X-Policyctl-Revision"
__all__ = ["ServerConfig", "build_app"]


def _json(body: dict[str, Any], status: int = 200) -> JSONResponse:
    revision = body.get("revision")
    headers = {REVISION_HEADER: revision} if isinstance(revision, str) else None
    return JSONResponse(body, status_code=status, headers=headers)


async def _decide(server: Server, request: Request) -> Response:
    req = validated(DecideRequest, parse_json(await server.body(request)))
    snap = server.snapshot()
    answer = await server.run(lambda: deciding.decide(snap, req, server.config.log_arguments))
    return _json(server.logged(answer))


async def _decide_batch(server: Server, request: Request) -> Response:
    req = validated(BatchRequest, parse_json(await server.body(request)))
    snap = server.snapshot()  # one snapshot for the whole batch: one revision

    def work() -> list[deciding.Answer]:
        return [deciding.decide(snap, item, server.config.log_arguments) for item in req.items]

    answers = await server.run(work)
    results = [server.logged(a) for a in answers]
    return _json({"revision": snap.revision, "results": results})


async def _resolve(server: Server, request: Request) -> Response:
    req = validated(ResolveRequest, parse_json(await server.body(request)))
    snap = server.snapshot()
    answer = await server.run(lambda: deciding.resolve(snap, req))
    server.log.write(answer.record)
    return _json(answer.body)


async def _health(server: Server, request: Request) -> Response:
    status = status_of(server.source)
    ready = server.source.snapshot is not None
    last = status["lastReload"]
    state = "ok" if ready else "no-policy"
    if ready and last is not None and not last["ok"]:
        state = "degraded"  # serving the last good revision; the newest one failed to load
    status["status"] = state
    return _json(status, 200 if ready else 503)


async def _status(server: Server, request: Request) -> Response:
    from ... import __version__

    return _json({**status_of(server.source), "version": __version__})


async def _metrics(server: Server, request: Request) -> Response:
    return Response(server.metrics.exposition(), media_type=CONTENT_TYPE)


def build_app(
    source: PolicySource,
    config: ServerConfig | None = None,
    metrics: Metrics | None = None,
    extra_routes: list[Route] | None = None,
) -> Starlette:
    """The application over `source`. The caller starts and stops the source."""
    from .authzen import authzen_routes
    from .hookroute import hook_route

    server = Server(source, config or ServerConfig(), metrics or Metrics())

    def route(path: str, handler: Handler, method: str = "POST", **kw: Any) -> Route:
        return Route(path, api_route(server, path, handler, **kw), methods=[method])

    routes = [
        route("/v1/decide", _decide),
        route("/v1/decide/batch", _decide_batch),
        route("/v1/resolve", _resolve),
        route("/health", _health, "GET", open_route=True),
        route("/v1/status", _status, "GET"),
        route("/metrics", _metrics, "GET"),
        Route("/v1/hooks/{host}", hook_route(server), methods=["POST"]),
        *authzen_routes(server, route),
        *(extra_routes or []),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 404:
            error = ApiError(404, "PC526", f"no route {request.url.path}")
        elif status == 405:
            error = ApiError(405, "PC526", f"{request.method} is not allowed here")
        else:
            error = ApiError(500, "PC185", f"internal error ({type(exc).__name__})")
        return error_response(server, error)

    app = Starlette(
        routes=routes, exception_handlers={HTTPException: http_error, Exception: http_error}
    )
    app.state.server = server
    return app
