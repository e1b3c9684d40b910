"""Asking the client's user about a call the rules `ask` about, as an MCP elicitation.

A client that declared the elicitation capability gets a yes/no form naming the tool, its
arguments and the rule. Over a handshake-era connection the question is a server-to-client
`elicitation/create` request; on 2026-07-28 connections it is an `input_required` result the
client answers by retrying the call (the SDK seals the state, binding it to the tool and its
arguments, and expires it after the approval timeout; the gateway also uses it once only).
No capability, no answer in time, a decline or a cancel: the call is denied.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types

from ...escape import printable_line

APPROVAL_KEY = "policyctl-approval"
ARGUMENTS_SHOWN = 1000  # characters of the arguments the question quotes
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Allow this call?",
            "description": "Yes runs the call once; no refuses it.",
        }
    },
    "required": ["approve"],
}


def question(tool: str, arguments: Mapping[str, Any], reason: str) -> str:
    shown = json.dumps(arguments, sort_keys=True, ensure_ascii=True, default=str)
    if len(shown) > ARGUMENTS_SHOWN:
        shown = shown[:ARGUMENTS_SHOWN] + "..."
    return (
        f"Allow the call of {printable_line(tool)}?\n"
        f"Arguments: {printable_line(shown)}\n"
        f"Why it asks: {printable_line(reason)}"
    )


def can_elicit(ctx: Any) -> bool:
    caps = ctx.session.client_capabilities
    return caps is not None and caps.elicitation is not None


def approved(answer: Any) -> str | None:
    """None when the answer approves the call, else why not (for the refusal)."""
    if not isinstance(answer, types.ElicitResult):
        return "the approval answer was not understood"
    if answer.action == "decline":
        return "the user declined it"
    if answer.action == "cancel":
        return "the user cancelled the question"
    if not isinstance(answer.content, dict) or answer.content.get("approve") is not True:
        return "the user did not approve it"
    return None


async def ask_over_back_channel(ctx: Any, text: str, timeout: float) -> str | None:
    """Handshake era: ask now and wait at most `timeout` seconds."""
    with anyio.move_on_after(timeout):
        try:
            answer = await ctx.session.elicit_form(text, SCHEMA, related_request_id=ctx.request_id)
        except Exception as exc:
            return f"the question could not be asked ({type(exc).__name__})"
        return approved(answer)
    return f"no answer within {timeout:g} s"


class PendingApprovals:
    """The questions of `input_required` results awaiting their retry: each nonce once."""

    def __init__(self, timeout: float, limit: int = 1000) -> None:
        self.timeout = timeout
        self.limit = limit
        self._pending: dict[str, float] = {}

    def open(self, tool: str, arguments: Mapping[str, Any], text: str) -> types.InputRequiredResult:
        now = time.monotonic()
        self._pending = {k: d for k, d in self._pending.items() if d > now}
        if len(self._pending) >= self.limit:  # a client that never answers cannot grow this
            self._pending.pop(next(iter(self._pending)))
        nonce = secrets.token_hex(16)
        self._pending[nonce] = now + self.timeout
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=text, requested_schema=SCHEMA)
        )
        return types.InputRequiredResult(
            input_requests={APPROVAL_KEY: request}, request_state=nonce
        )

    def answer(self, state: str, responses: Mapping[str, Any] | None) -> str | None:
        """None when the retry carries an approval of an open question, else why not."""
        deadline = self._pending.pop(state, None)
        if deadline is None:
            return "the approval is unknown or was used already"
        if time.monotonic() > deadline:
            return f"no answer within {self.timeout:g} s"
        return approved((responses or {}).get(APPROVAL_KEY))
