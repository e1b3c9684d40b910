"""Policy hooks before a call, observers after it (semantics 11).

A hook returns `Block(reason)`, `RequireApproval(reason)`, `RewriteParams(params)` or None.
Merging: a block is sticky and stops the remaining hooks; once approval is requested, later
hooks may still block but may no longer change the params the approver sees; each hook gets
its own copy of the event; a hook that raises counts as a block (fail closed).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("policyctl.runtime")

HOOK_FAILED = "Tool call blocked because before_tool_call hook failed"


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
Approver = Callable[[ToolCallEvent, str], Awaitable[bool]]
Observer = Callable[[ToolCallEvent, Any], Awaitable[None]]


@dataclass(frozen=True)
class HookOutcome:
    params: dict[str, Any]
    blocked: str | None = None
    approval: str | None = None
    notes: tuple[str, ...] = ()


async def run_hooks(hooks: Sequence[Hook], event: ToolCallEvent) -> HookOutcome:
    params = event.params
    approval: str | None = None
    notes: list[str] = []
    for hook in hooks:
        own = ToolCallEvent(
            event.tool,
            copy.deepcopy(params),
            event.session_key,
            event.agent,
            event.trigger,
            copy.deepcopy(event.meta),
        )
        try:
            result = await hook(own)
        except Exception as exc:  # a failing hook must never let a call through
            log.warning(
                "before_tool_call hook %r failed: %s",
                getattr(hook, "__name__", hook),
                type(exc).__name__,
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
            elif isinstance(result.params, dict):
                params = copy.deepcopy(result.params)
    return HookOutcome(params, None, approval, tuple(notes))


async def notify_observers(
    observers: Sequence[Observer], event: ToolCallEvent, outcome: Any
) -> None:
    """Observers see a copy of the outcome; what they return or raise changes nothing."""
    for observer in observers:
        try:
            await observer(copy.deepcopy(event), copy.deepcopy(outcome))
        except Exception as exc:
            log.warning("after_tool_call observer failed: %s", type(exc).__name__)
