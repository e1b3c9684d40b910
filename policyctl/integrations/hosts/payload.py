"""A hook payload read: which event, which call, and the facts of the run it belongs to.

Everything here is checked, never assumed: a payload that is not what the host's protocol
says raises `BadPayload`, and the handler turns that into a refusal (a host proceeds on most
hook failures, so a payload policyctl cannot read must not become a silent allow).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...names import mcp_tool_name
from .protocols import Host


class BadPayload(ValueError):
    """The payload is not what the host's protocol sends (the message says what is wrong);
    `code` is the diagnostic code the refusal carries."""

    def __init__(self, message: str, code: str = "PC180") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class HostCall:
    """One tool call as the host reported it and as the policy names it."""

    host_tool: str
    tool: str
    arguments: Mapping[str, Any]
    is_mcp: bool


@dataclass(frozen=True, slots=True)
class PayloadFacts:
    """What the payload says about the run (each None when the host does not say)."""

    event: str
    session_id: str | None
    cwd: str | None
    model: str | None
    agent_type: str | None
    in_subagent: bool
    permission_mode: str | None


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadPayload(
            f'the hook payload\'s "{key}" must be a string, not {type(value).__name__}'
        )
    return value or None


def read_facts(payload: Any) -> PayloadFacts:
    if not isinstance(payload, dict):
        raise BadPayload(f"the hook payload must be a JSON object, not {type(payload).__name__}")
    event = _text(payload, "hook_event_name")
    if event is None:
        raise BadPayload('the hook payload has no "hook_event_name"')
    model = _text(payload, "model")
    request = payload.get("llm_request")
    if model is None and isinstance(request, dict) and isinstance(request.get("model"), str):
        model = request["model"] or None  # Gemini's BeforeToolSelection names it there
    return PayloadFacts(
        event=event,
        session_id=_text(payload, "session_id"),
        cwd=_text(payload, "cwd"),
        model=model,
        # Claude Code adds `agent_id` and `agent_type` to the events of a subagent's calls
        agent_type=_text(payload, "agent_type"),
        in_subagent=_text(payload, "agent_id") is not None,
        permission_mode=_text(payload, "permission_mode"),
    )


def read_call(payload: Mapping[str, Any], host: Host) -> HostCall:
    """The call of a tool event. MCP tools get policyctl's `<server>__<tool>` name: from the
    payload's `mcp_context` when the host sends one (Gemini), else from the host's naming."""
    name = _text(payload, "tool_name")
    if name is None:
        raise BadPayload('the hook payload has no "tool_name"')
    arguments = payload.get("tool_input", None)
    if not isinstance(arguments, dict):
        shown = "missing" if arguments is None else f"a {type(arguments).__name__}"
        raise BadPayload(
            f'the hook payload\'s "tool_input" must be a JSON object, and it is {shown}'
        )
    mcp = _mcp_parts(payload, name, host)
    if mcp is not None:
        return HostCall(name, mcp_tool_name(*mcp), arguments, True)
    return HostCall(name, name.strip().lower(), arguments, False)


def _mcp_parts(payload: Mapping[str, Any], name: str, host: Host) -> tuple[str, str] | None:
    context = payload.get("mcp_context")
    if isinstance(context, dict):
        server, tool = context.get("server_name"), context.get("tool_name")
        if isinstance(server, str) and isinstance(tool, str) and server and tool:
            return server, tool
        raise BadPayload('"mcp_context" must give "server_name" and "tool_name"')
    if not name.startswith(host.mcp_prefix):
        return None
    server, sep, tool = name[len(host.mcp_prefix) :].partition(host.mcp_separator)
    if not (server and sep and tool):
        raise BadPayload(
            f'"{name}" starts like an MCP tool name but is not '
            f"{host.mcp_prefix}<server>{host.mcp_separator}<tool>"
        )
    return server, tool
