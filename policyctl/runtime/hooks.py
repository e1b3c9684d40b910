"""Policy hooks before a call, observers after it (semantics 11).

A hook returns `Block(reason)`, `RequireApproval(reason)`, `RewriteParams(params)` or None.
Merging: a block is sticky and stops the remaining hooks; once approval is requested, later
hooks may still block but may no longer change the params the approver sees; a rewrite is
applied when its canonical JSON differs from the call's (`canonical`); each hook gets
its own copy of the event; a hook that raises, returns anything but a hook result, or does not
answer within `timeout` seconds counts as a block (fail closed). Observers get the same timeout;
one that hangs is abandoned, never waited for. A timeout can only interrupt a hook that awaits:
one that blocks the event loop (time.sleep, a synchronous request) cannot be cut short.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .canonical import canonical_json
from .deadline import bounded

log = logging.getLogger("policyctl.runtime")

_IMMUTABLE = frozenset({str, int, float, bool, type(None)})  # exact types: a copy is the value


def own_copy(value: dict[str, Any]) -> dict[str, Any]:
    """A copy nothing done to it can leak from: a new dict when every value is an immutable
    scalar (what deepcopy would give, without its cost), else a deep copy."""
    for v in value.values():  # a loop, not all(...): this runs for every hook of every call
        if type(v) not in _IMMUTABLE:
            return copy.deepcopy(value)
    return dict(value)


HOOK_FAILED = "Tool call blocked because before_tool_call hook failed"
HOOK_TIMEOUT = 10.0  # seconds a hook or an observer may take
APPROVAL_TIMEOUT = 300.0  # seconds an approver (often a person) may take; then: denied


@dataclass(frozen=True)
class ToolCallEvent:
    tool: str
    params: dict[str, Any]
    session_key: str | None = None
    agent: str | None = None
    trigger: str = "user"
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Block:
    reason: str


@dataclass(frozen=True)
class RequireApproval:
    reason: str


@dataclass(frozen=True)
class RewriteParams:
    params: dict[str, Any]


HookResult = Block | RequireApproval | RewriteParams | None
Hook = Callable[[ToolCallEvent], Awaitable[HookResult]]
Observer = Callable[[ToolCallEvent, Any], Awaitable[None]]


class HookOutcome(NamedTuple):  # immutable, and made on every call: a tuple, not a dataclass
    params: dict[str, Any]
    blocked: str | None = None
    approval: str | None = None
    notes: tuple[str, ...] = ()
    #: the hooks changed the parameters: their canonical JSON differs from the call's (a
    #: rewrite of `true` to `1` is a change, though Python calls the two dicts equal)
    rewritten: bool = False


def _name(hook: object) -> str:
    return str(getattr(hook, "__name__", None) or type(hook).__name__)


async def run_hooks(
    hooks: Sequence[Hook], event: ToolCallEvent, *, timeout: float = HOOK_TIMEOUT
) -> HookOutcome:
    params = event.params
    approval: str | None = None
    notes: list[str] = []
    for hook in hooks:
        own = ToolCallEvent(
            event.tool,
            own_copy(params),
            event.session_key,
            event.agent,
            event.trigger,
            own_copy(event.meta),
        )
        try:
            result = await bounded(hook(own), timeout)
        except Exception as exc:  # a failing or hung hook must never let a call through
            why = f"no answer within {timeout} s" if isinstance(exc, asyncio.TimeoutError) else ""
            log.warning(
                "before_tool_call hook %s failed for tool %s: %s",
                _name(hook),
                event.tool,
                why or type(exc).__name__,
            )
            return HookOutcome(params, HOOK_FAILED, approval, tuple(notes))
        if result is not None and not isinstance(result, Block | RequireApproval | RewriteParams):
            log.warning(
                "before_tool_call hook %s returned %s for tool %s, not a hook result",
                _name(hook),
                type(result).__name__,
                event.tool,
            )
            return HookOutcome(params, HOOK_FAILED, approval, tuple(notes))
        if isinstance(result, RewriteParams) and not isinstance(result.params, dict):
            log.warning(
                "before_tool_call hook %s rewrote the parameters of tool %s to a %s",
                _name(hook),
                event.tool,
                type(result.params).__name__,
            )
            return HookOutcome(params, HOOK_FAILED, approval, tuple(notes))
        if isinstance(result, Block):
            return HookOutcome(params, result.reason or "blocked by a hook", approval, tuple(notes))
        if isinstance(result, RequireApproval):
            approval = approval or result.reason or "approval required"
        elif isinstance(result, RewriteParams):
            if approval is not None:
                notes.append(
                    "a hook tried to change parameters after approval was requested; ignored"
                )
            else:
                params = copy.deepcopy(result.params)
    if params is event.params:
        return HookOutcome(params, None, approval, tuple(notes))
    changed = canonical_json(params) != canonical_json(event.params)
    return HookOutcome(params, None, approval, tuple(notes), changed)


async def notify_observers(
    observers: Sequence[Observer], event: ToolCallEvent, outcome: Any, *, timeout: float
) -> None:
    """Observers see a copy of the outcome; what they return or raise changes nothing."""
    for observer in observers:
        try:
            await bounded(observer(copy.deepcopy(event), copy.deepcopy(outcome)), timeout)
        except Exception as exc:
            log.warning(
                "after_tool_call observer %s failed for tool %s: %s",
                _name(observer),
                event.tool,
                type(exc).__name__,
            )
