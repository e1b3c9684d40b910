"""Approvals: what a person (or a program standing in for one) answers when a call asks.

An approver is an async callable `(event, reason) -> Approval`: allow this call once, allow
the same call for the rest of the session, or deny. It gets the call's final arguments (a copy:
what runs is not theirs to change) and the question. An answer that is not an `Approval`
denies, except `True`, which is read as `Approval.ONCE` (approvers written for the hooks'
yes/no question keep working). An approver that raises, or does not answer within the timeout,
denies: a hung approver never holds the loop.

"The same call", for a session grant, is the tool and its final arguments in a canonical
JSON form (key order and number spelling do not matter; anything else does: `./a.txt` and
`a.txt` are two calls, and the second asks again), together with the call rule that asked
(its layer and entry). Asking again is the safe side of every doubt: a grant never widens to a
call the person did not see, and a policy reload that asks by another rule asks again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from ..escape import printable_line
from .deadline import bounded
from .hooks import ToolCallEvent

if TYPE_CHECKING:
    from ..pipeline.result import Resolution

log = logging.getLogger("policyctl.runtime")

MAX_GRANTS = 1024  # session grants kept per session (the oldest go first)


class Approval(str, Enum):
    ONCE = "once"  # allow this call
    SESSION = "session"  # allow this call, and the same call again in this session
    DENY = "deny"


class Approver(Protocol):
    """Answers whether a call that asks may run. `reason` says which rule asked and why."""

    async def __call__(self, event: ToolCallEvent, reason: str) -> Approval | bool: ...


def _name(approver: object) -> str:
    return str(getattr(approver, "__name__", None) or type(approver).__name__)


async def request_approval(
    approver: Approver | None, event: ToolCallEvent, reason: str, *, timeout: float
) -> Approval:
    """The approver's answer; DENY for no approver, a failure, a timeout or a strange answer."""
    if approver is None:
        return Approval.DENY
    try:
        answer = await bounded(approver(event, reason), timeout)
    except Exception as exc:
        why = f"no answer within {timeout} s" if isinstance(exc, asyncio.TimeoutError) else ""
        log.warning(
            "approver %s failed for tool %s: %s",
            _name(approver),
            event.tool,
            why or type(exc).__name__,
        )
        return Approval.DENY
    if answer is True:
        return Approval.ONCE
    if isinstance(answer, Approval):
        return answer
    log.warning(
        "approver %s answered %s for tool %s, not an Approval: denied",
        _name(approver),
        type(answer).__name__,
        event.tool,
    )
    return Approval.DENY


def call_key(tool: str, args: Mapping[str, Any], question: tuple[str | None, str | None]) -> str:
    """The identity of a call for a session grant (see the module docstring)."""
    try:
        text = json.dumps(
            [tool, args, list(question)], sort_keys=True, separators=(",", ":"), allow_nan=False
        )
    except (TypeError, ValueError, RecursionError):
        # arguments with no canonical form: a key that never repeats, so every call asks
        return f"unrepeatable:{id(args)}:{object()!r}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class SessionGrants:
    """The calls a person allowed for the rest of a session: bounded, oldest dropped first."""

    def __init__(self, limit: int = MAX_GRANTS) -> None:
        self.limit = limit
        self._keys: OrderedDict[str, None] = OrderedDict()

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def grant(self, key: str) -> None:
        self._keys[key] = None
        self._keys.move_to_end(key)
        while len(self._keys) > self.limit:
            self._keys.popitem(last=False)


_WARNED: OrderedDict[tuple[str, ...], None] = OrderedDict()


def asking_rules(resolution: Resolution) -> tuple[str, ...]:
    """Where the run's call rules ask, as `layer: entry` (sorted): the entries of ask lists,
    plain names in ask, and `callDefault: ask`."""
    found: set[str] = set()
    for layer in resolution.call_layers:
        for tool, rules in layer.tools.items():
            ask = layer.list_of("ask")
            found.update(f"{ask}: {rule.entry}" for rule in rules.ask)
            if rules.plain_ask is not None:
                found.add(f"{ask}: {rules.plain_ask}")
            if rules.call_default.label == "ask":
                found.add(f"{layer.list_of('callDefault')}: {tool} ask")
    return tuple(sorted(found))


def warn_asks_without_approver(resolution: Resolution) -> None:
    """PC480 on the runtime's logger, once per set of asking rules (as context warnings are
    logged once per message), for a run whose call rules ask when the runtime has no
    approver: every ask will be refused."""
    asking = asking_rules(resolution)
    if not asking or asking in _WARNED:
        return
    _WARNED[asking] = None
    while len(_WARNED) > 256:
        _WARNED.popitem(last=False)
    shown = "; ".join(printable_line(a) for a in asking[:10]) + (" ..." if len(asking) > 10 else "")
    log.warning(
        "PC480 the run's call rules ask (%s), and the runtime has no approver: each such call "
        "is refused as needing approval",
        shown,
    )
