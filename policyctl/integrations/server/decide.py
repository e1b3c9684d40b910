"""The server's answers, computed from one policy snapshot with the hosts' decision code.

`/v1/decide` and the hook routes run `hosts.handler.decide_call`/`handle`, the code
`policyctl hook` runs, so a call gets the same verdict from a hook process and from a server.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from ..hosts.handler import DENY, Decided, decide_call
from ..hosts.payload import BadPayload, HostCall
from .requests import ApiError, DecideRequest, ResolveRequest, context_json
from .state import Snapshot


@dataclass(frozen=True, slots=True)
class Answer:
    """One decision: the response body and the decision log's record."""

    body: dict[str, Any]
    record: dict[str, Any]


def new_decision_id() -> str:
    return uuid.uuid4().hex


def arguments_digest(arguments: Any) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8", "replace")).hexdigest()


def decide(snap: Snapshot, req: DecideRequest, log_arguments: bool = False) -> Answer:
    from ...names import fold

    tool = req.tool if req.mcp else fold(req.tool)
    call = HostCall(req.tool, tool, req.arguments, req.mcp)
    code = None
    try:
        decided = decide_call(call, req.context.to_run_context(), snap.policy, req.detail)
    except BadPayload as exc:  # a tool the catalog does not know: refused, never allowed
        decided, code = Decided(DENY, f"policyctl: {exc}"), exc.code
    except Exception as exc:  # anything else is a refusal too (fail closed)
        reason = f"policyctl: the call could not be decided ({type(exc).__name__})"
        decided, code = Decided(DENY, reason), "PC185"
    decision_id = new_decision_id()
    body: dict[str, Any] = {
        "decisionId": decision_id,
        "revision": snap.revision,
        "tool": req.tool,
        "verdict": decided.verdict,
        "reason": decided.reason,
        "layer": decided.layer,
        "entry": decided.entry,
        "source": decided.source,
    }
    if code is not None:
        body["code"] = code
    if req.detail == "minimal":  # the provenance is what "minimal" leaves out
        body.update(layer=None, entry=None, source=None)
    record: dict[str, Any] = {
        "decisionId": decision_id,
        "kind": "decide",
        "revision": snap.revision,
        "context": context_json(req.context),
        "tool": req.tool,
        "verdict": decided.verdict,
        "layer": decided.layer,
        "entry": decided.entry,
        "source": decided.source,
        "argumentsSha256": arguments_digest(req.arguments),
    }
    if code is not None:
        record["code"] = code
    if log_arguments:
        record["arguments"] = req.arguments
    return Answer(body, record)


def resolve(snap: Snapshot, req: ResolveRequest) -> Answer:
    from ...catalog.inventory import Tool
    from ...names import fold
    from ...pipeline.resolve import resolve as resolve_run

    inventory = None
    if req.tools is not None:
        try:
            inventory = [
                Tool(fold(t.name), t.plugin_id and fold(t.plugin_id), t.optional) for t in req.tools
            ]
        except ValueError as exc:  # a plugin id that marks MCP tools
            raise ApiError(422, "PC522", f"/tools: {exc}", "/tools") from None
    res = resolve_run(snap.policy, req.context.to_run_context(), inventory, require_tools=False)
    decision_id = new_decision_id()
    body = {"decisionId": decision_id, "revision": snap.revision, **res.to_json()}
    record = {
        "decisionId": decision_id,
        "kind": "resolve",
        "revision": snap.revision,
        "context": context_json(req.context),
        "allowed": list(res.allowed),
        "removed": len(res.removed),
    }
    return Answer(body, record)
