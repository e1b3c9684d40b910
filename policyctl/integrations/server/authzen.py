"""OpenID AuthZEN Authorization API 1.0: `/access/v1/evaluation`, `/access/v1/evaluations`
and `/.well-known/authzen-configuration`, mapped onto `/v1/decide`'s decisions.

The mapping: the subject is the agent run (`{type: "agent_run", id: <session key>,
properties: <the run context in its JSON names>}`), the action `call_tool` (a call: the call
rules decide) or `list_tools` (whether the run has the tool at all), the resource the tool
(`{type: "tool", id: <tool name>, properties: {arguments, mcp}}`). AuthZEN decisions are
booleans, so `ask` is `decision: false` with the approval request in `context`: a PEP that
does not know policyctl's context refuses, which is the safe reading.

The specification asks receivers to ignore fields they do not know; fields policyctl knows
are checked strictly, and a request missing what the specification requires is a 400.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from .decide import Answer, decide, new_decision_id
from .requests import ApiError, DecideRequest, context_json, parse_json, validated
from .state import Snapshot

if TYPE_CHECKING:
    from .service import Server

SUBJECT_TYPE, RESOURCE_TYPE = "agent_run", "tool"
ACTIONS = ("call_tool", "list_tools")
#: the parts of an evaluation; the top-level ones are the defaults of every item
PARTS = ("subject", "action", "resource", "context")
SEMANTICS = ("execute_all", "deny_on_first_deny", "permit_on_first_permit")
#: the most evaluations one request may carry
MAX_EVALUATIONS = 100
#: the run context's fields, in their JSON names (`--context` files, /v1/decide)
CONTEXT_FIELDS = (
    *("agent", "provider", "model", "channel", "account", "group", "sender", "owner"),
    *("spawnedBy", "subagentDepth", "parentTools", "trigger", "workspace", "home"),
)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One evaluation read: a decide request, or why it cannot be decided (then refused)."""

    action: str
    request: DecideRequest | None
    problem: str | None = None


def _object(value: Any, where: str, required: bool = True) -> dict[str, Any] | None:
    if value is None and not required:
        return None
    if not isinstance(value, dict):
        raise ApiError(400, "PC522", f"{where} must be an object")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ApiError(400, "PC522", f"{where} must be a string")
    return value


def read_evaluation(item: dict[str, Any], where: str) -> Evaluation:
    """An evaluation request (subject, action, resource, context) -> a decide request."""
    subject = _object(item.get("subject"), f"{where}/subject")
    action = _object(item.get("action"), f"{where}/action")
    resource = _object(item.get("resource"), f"{where}/resource")
    context = _object(item.get("context"), f"{where}/context", required=False) or {}
    assert subject is not None and action is not None and resource is not None
    subject_type = _string(subject.get("type"), f"{where}/subject/type")
    session = _string(subject.get("id"), f"{where}/subject/id")
    name = _string(action.get("name"), f"{where}/action/name")
    resource_type = _string(resource.get("type"), f"{where}/resource/type")
    tool = _string(resource.get("id"), f"{where}/resource/id")
    props = _object(subject.get("properties"), f"{where}/subject/properties", False) or {}
    tool_props = _object(resource.get("properties"), f"{where}/resource/properties", False)
    tool_props = tool_props or {}
    if subject_type != SUBJECT_TYPE:
        return Evaluation(name, None, f'subject type "{subject_type[:100]}" is not "agent_run"')
    if resource_type != RESOURCE_TYPE:
        return Evaluation(name, None, f'resource type "{resource_type[:100]}" is not "tool"')
    if name not in ACTIONS:
        return Evaluation(name, None, f'action "{name[:100]}" is not call_tool or list_tools')
    unknown = [k for k in props if k not in CONTEXT_FIELDS]
    if unknown:
        # the properties are policyctl's run context, not the specification's extension
        # point: a misspelt field (`agnet`) left out would decide for a wider run
        shown = json.dumps(unknown[0][:100], ensure_ascii=True)
        return Evaluation(name, None, f"subject property {shown} is not a run context field")
    run = {k: props[k] for k in CONTEXT_FIELDS if k in props}
    if session:
        run["sessionKey"] = session
    body: dict[str, Any] = {"context": run, "tool": tool}
    if "arguments" in tool_props:
        body["arguments"] = tool_props["arguments"]
    if "mcp" in tool_props:
        body["mcp"] = tool_props["mcp"]
    if "detail" in context:
        body["detail"] = context["detail"]
    try:
        request = validated(DecideRequest, body)
    except ApiError as exc:  # a field policyctl knows, of the wrong type: the request is bad
        raise ApiError(400, exc.code, f"{where}: {exc.message}") from None
    return Evaluation(name, request)


def evaluate(
    snap: Snapshot, ev: Evaluation, log_arguments: bool
) -> tuple[dict[str, Any], Answer | None]:
    """The AuthZEN decision of one evaluation, and the answer behind it (for the log)."""
    if ev.request is None:
        problem = {"status": 400, "message": ev.problem}
        return {"decision": False, "context": {"error": problem}}, None
    if ev.action == "list_tools":
        from ...names import fold
        from ...pipeline.resolve import resolve

        req = ev.request
        res = resolve(snap.policy, req.context.to_run_context(), None, require_tools=False)
        tool = req.tool if req.mcp else fold(req.tool)
        alias = snap.policy.catalog.aliases.get(tool, tool)
        allowed = alias in res.allowed
        context: dict[str, Any] = {
            "revision": snap.revision,
            "verdict": "allow" if allowed else "deny",
        }
        gone = res.removal(alias)
        if gone is not None:
            context.update(layer=gone.label, entry=gone.entry)
        # logged like every decision, so an unloggable `true` is turned into a refusal too
        record = {
            "decisionId": new_decision_id(),
            "kind": "list_tools",
            "revision": snap.revision,
            "context": context_json(req.context),
            "tool": req.tool,
            "verdict": context["verdict"],
            "layer": context.get("layer"),
            "entry": context.get("entry"),
        }
        verdict = {"verdict": context["verdict"], "layer": context.get("layer")}
        return {"decision": allowed, "context": context}, Answer(verdict, record)
    answer = decide(snap, ev.request, log_arguments)
    body = answer.body
    context = {k: body[k] for k in ("decisionId", "revision", "verdict", "reason") if k in body}
    context.update({k: body[k] for k in ("layer", "entry", "source", "code") if body.get(k)})
    if body["verdict"] == "ask":
        # AuthZEN has no "ask": false, with what a person must approve
        context["approval"] = {"required": True, "reason": body["reason"], "tool": body["tool"]}
    return {"decision": body["verdict"] == "allow", "context": context}, answer


def _merged(defaults: dict[str, Any], item: Any, where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ApiError(400, "PC522", f"{where} must be an object")
    return {
        **defaults,
        **{k: item[k] for k in ("subject", "action", "resource", "context") if k in item},
    }


def authzen_routes(server: Server, route: Callable[..., Any]) -> list[Any]:
    async def body_of(request: Request) -> dict[str, Any]:
        data = parse_json(await server.body(request))
        if not isinstance(data, dict):
            raise ApiError(400, "PC522", "the body must be a JSON object")
        return data

    async def evaluation(server: Server, request: Request) -> Response:
        return await single(server, request, await body_of(request))

    async def single(server: Server, request: Request, data: dict[str, Any]) -> Response:
        ev = read_evaluation(data, "")
        snap = server.snapshot()
        out, answer = await server.run(lambda: evaluate(snap, ev, server.config.log_arguments))
        _log(server, out, answer)
        return _reply(request, out)

    async def evaluations(server: Server, request: Request) -> Response:
        data = await body_of(request)
        items = data.get("evaluations")
        options = _object(data.get("options"), "/options", required=False) or {}
        semantic = options.get("evaluations_semantic", "execute_all")
        if semantic not in SEMANTICS:
            raise ApiError(
                400, "PC522", f"/options/evaluations_semantic must be one of {', '.join(SEMANTICS)}"
            )
        if items is None or items == []:
            return await single(server, request, data)  # as the single evaluation API
        if not isinstance(items, list) or len(items) > MAX_EVALUATIONS:
            raise ApiError(
                400, "PC522", f"/evaluations must be an array of at most {MAX_EVALUATIONS}"
            )
        defaults = {k: data[k] for k in PARTS if k in data}
        evs = [
            read_evaluation(_merged(defaults, item, f"/evaluations/{i}"), f"/evaluations/{i}")
            for i, item in enumerate(items)
        ]
        snap = server.snapshot()  # one revision for every evaluation

        def work() -> list[tuple[dict[str, Any], Answer | None]]:
            done = []
            for ev in evs:
                out = evaluate(snap, ev, server.config.log_arguments)
                done.append(out)
                if semantic == "deny_on_first_deny" and not out[0]["decision"]:
                    break
                if semantic == "permit_on_first_permit" and out[0]["decision"]:
                    break
            return done

        results = []
        for out, answer in await server.run(work):
            _log(server, out, answer)
            results.append(out)
        return _reply(request, {"evaluations": results})

    async def configuration(server: Server, request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {
                "policy_decision_point": base,
                "access_evaluation_endpoint": f"{base}/access/v1/evaluation",
                "access_evaluations_endpoint": f"{base}/access/v1/evaluations",
            }
        )

    return [
        route("/access/v1/evaluation", evaluation, error=_error),
        route("/access/v1/evaluations", evaluations, error=_error),
        route("/.well-known/authzen-configuration", configuration, "GET", open_route=True),
    ]


def _log(server: Server, out: dict[str, Any], answer: Answer | None) -> None:
    if answer is None:
        return
    body = server.logged(answer)  # an unwritable log turns the answer into a refusal
    if body["verdict"] == "deny" and out["decision"]:
        out["decision"] = False
        out["context"].update(verdict="deny", reason=body["reason"], code=body.get("code"))


def _reply(request: Request, body: dict[str, Any]) -> Response:
    headers = {}
    request_id = request.headers.get("x-request-id")
    if request_id is not None:  # the specification: echo the PEP's request id
        headers["X-Request-ID"] = request_id[:200]
    return JSONResponse(body, headers=headers)


def _error(exc: ApiError) -> Response:
    """The specification's error body: a message string (the status says which error)."""
    status = 400 if exc.status == 422 else exc.status
    return PlainTextResponse(f"{exc.code} {exc.message}", status_code=status)
