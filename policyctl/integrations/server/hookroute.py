"""`POST /v1/hooks/{host}`: an agent host's hook payload, answered by `hosts.handler.handle`.

The body is what the host would write on `policyctl hook HOST`'s stdin, and the answer's body
is what that command would print (empty where the host reads silence as "proceed"); the exit
code the command would end with travels in `X-Policyctl-Exit-Code`. The run context the
command takes as flags comes as query parameters in their JSON names (`?agent=coder&channel=
slack&sender.id=U1&owner=true&detail=full`).

Every failure answers HTTP 200 with a refusal in the host's format: Claude Code lets a call
proceed when an `http` hook answers a non-2xx status, times out or cannot be reached.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from ..hosts.handler import HostOptions, HostReply, failure, handle
from ..hosts.protocols import HOSTS
from .requests import ApiError, validated

if TYPE_CHECKING:
    from collections.abc import Callable

    from .service import Server

_SENDER = ("id", "e164", "username", "name")
_LISTS = ("parentTools",)


def context_from_query(query: Any) -> tuple[Any, str]:
    """The context (as `ContextSpec`) and the refusal detail a hook URL's query gives."""
    from ...analysis.contextspec import ContextSpec

    data: dict[str, Any] = {}
    sender: dict[str, str] = {}
    detail = "layer"
    for key in query:
        values = query.getlist(key)
        if len(values) != 1:
            raise ApiError(422, "PC522", f"query parameter {key} is given {len(values)} times")
        value = values[0]
        if key == "detail":
            if value not in ("minimal", "layer", "full"):
                raise ApiError(422, "PC522", "detail must be minimal, layer or full")
            detail = value
        elif key.startswith("sender.") and key[7:] in _SENDER:
            sender[key[7:]] = value
        elif key == "owner":
            if value not in ("true", "false"):
                raise ApiError(422, "PC522", "owner must be true or false")
            data[key] = value == "true"
        elif key == "subagentDepth":
            if not value.isdigit():
                raise ApiError(422, "PC522", "subagentDepth must be a whole number >= 0")
            data[key] = int(value)
        elif key in _LISTS:
            data[key] = [v for v in value.split(",") if v.strip()]
        else:
            data[key] = value
    if sender:
        data["sender"] = sender
    return validated(ContextSpec, data), detail


def hook_route(server: Server) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        name = request.path_params["host"]
        host = HOSTS.get(name)
        if host is None:
            known = ", ".join(HOSTS)
            body = {"error": {"code": "PC526", "message": f"no host {name!r} (known: {known})"}}
            return Response(json.dumps(body), 404, media_type="application/json")
        # the body's arrival counts against the time cap too: a client trickling bytes would
        # otherwise hold a connection (and a worker's share) for as long as it likes
        limit = server.config.request_timeout + 1
        try:
            reply = await asyncio.wait_for(_reply(server, request, host), limit)
        except (asyncio.TimeoutError, TimeoutError):
            server.metrics.errors.labels("PC525").inc()
            reply = failure(host, "PC184", f"no answer within {limit:g} s", None)
        if "verdict" in reply.record:
            server.metrics.decided(str(reply.record["verdict"]), reply.record.get("layer"))
        headers = {"X-Policyctl-Exit-Code": str(reply.exit_code)}
        revision = reply.record.get("revision")
        if isinstance(revision, str):
            headers["X-Policyctl-Revision"] = revision
        return Response(reply.stdout, 200, headers=headers, media_type="application/json")

    return endpoint


async def _reply(server: Server, request: Request, host: Any) -> HostReply:
    from .decide import new_decision_id
    from .requests import parse_json

    event = None
    try:
        if not server.authorized(request):
            raise ApiError(401, "PC523", "a valid bearer token is required")
        spec, detail = context_from_query(request.query_params)
        payload = parse_json(await server.body(request))
        if isinstance(payload, dict) and isinstance(payload.get("hook_event_name"), str):
            event = payload["hook_event_name"]
        snap = server.snapshot()
    except ApiError as exc:
        server.metrics.errors.labels(exc.code).inc()
        code = {"PC520": "PC180", "PC521": "PC180", "PC524": "PC183"}.get(exc.code, exc.code)
        return failure(host, code, exc.message, event)
    options = HostOptions(
        host,
        spec.to_run_context(),
        home=None,  # the server's home is not the client's: a hook URL may give `home`
        refusal_detail=detail,
        revision=snap.revision,
        log_arguments=server.config.log_arguments,
    )
    try:
        reply: HostReply = await server.run(lambda: handle(payload, snap.policy, options))
    except ApiError as exc:
        return failure(host, "PC184", exc.message, event)
    record = {"decisionId": new_decision_id(), "kind": "hook", **reply.record}
    problem = server.log.write(record)
    if problem is not None and reply.exit_code == 0 and record.get("verdict") != "deny":
        return failure(host, "PC186", problem, event)
    return HostReply(reply.stdout, reply.stderr, reply.exit_code, record)
