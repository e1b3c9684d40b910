"""The call-time gate: every call, from every entry point, passes here before it runs.

In order: the tool must be in the run's resolved set (a removed or unknown tool is refused and
never executed, with the policy's own explanation); the arguments are prepared; loop detection
(a critical loop vetoes, a warning is noted); the hooks (block, approval, rewrite). A veto goes
back to the model as a structured tool result. After the call, observers see the outcome.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..resolution import Resolution
from .hooks import Approver, Hook, Observer, ToolCallEvent, notify_observers, run_hooks
from .loopdetect import LoopConfig, LoopDetector, LoopVerdict
from .registry import CallError, PreparedCall, ToolRegistry

log = logging.getLogger("policyctl.runtime")


@dataclass(frozen=True)
class Veto:
    tool: str
    kind: str  # "policy", "arguments", "loop", "hook", "approval"
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)

    def to_result(self) -> dict[str, Any]:
        return {
            "status": "blocked",
            "tool": self.tool,
            "by": self.kind,
            "reason": self.reason,
            **self.detail,
        }


@dataclass(frozen=True)
class Outcome:
    """What the model gets back for one call."""

    tool: str
    ok: bool
    result: Any
    veto: Veto | None = None
    warnings: tuple[str, ...] = ()

    def content(self) -> str:
        import json

        if self.veto is not None:
            return json.dumps(self.veto.to_result())
        body = self.result if isinstance(self.result, str) else json.dumps(self.result, default=str)
        if self.warnings:
            body += "\n\n[" + "; ".join(self.warnings) + "]"
        return body


ERROR_HINT = "[Analyze the error above and try a different approach.]"


def command_fingerprint(command: Any) -> str:
    """How exec failures are logged: the length and a short hash, never the command itself."""
    text = command if isinstance(command, str) else repr(command)
    return f"len={len(text)} sha256={hashlib.sha256(text.encode()).hexdigest()[:12]}"


class CallGate:
    def __init__(
        self,
        resolution: Resolution,
        registry: ToolRegistry,
        *,
        hooks: Sequence[Hook] = (),
        observers: Sequence[Observer] = (),
        approver: Approver | None = None,
        loop_config: LoopConfig | None = None,
        loop: LoopDetector | None = None,
    ) -> None:
        self.resolution = resolution
        self.registry = registry
        self.hooks = tuple(hooks)
        self.observers = tuple(observers)
        self.approver = approver
        self.loop = loop or LoopDetector(loop_config or LoopConfig())

    def check(self, name: str, params: dict[str, Any]) -> LoopVerdict | None:
        """The synchronous part of the gate: None if the tool is not in the resolved set,
        else the loop detector's verdict (recorded)."""
        if not self.resolution.is_allowed(name) or name not in self.registry:
            self.loop.observe(name, params, known=False)
            return None
        return self.loop.observe(name, params)

    async def call(
        self, name: str, raw_arguments: Any, *, event_meta: dict[str, Any] | None = None
    ) -> Outcome:
        ctx = self.resolution.context
        prepared = self.registry.prepare_call(name, raw_arguments, self.resolution)
        if isinstance(prepared, CallError):
            known = (
                prepared.removal is None
                and name in self.registry
                and self.resolution.is_allowed(name)
            )
            if not known:
                self.loop.observe(name, {}, known=False)
                return Outcome(
                    name,
                    False,
                    None,
                    Veto(name, "policy", prepared.message, _policy_detail(prepared)),
                )
            return Outcome(name, False, f"Error: {prepared.message}\n\n{ERROR_HINT}")
        assert isinstance(prepared, PreparedCall)
        params = prepared.arguments
        verdict = self.loop.observe(name, params)
        warnings: list[str] = []
        if verdict.level == "critical":
            return Outcome(
                name,
                False,
                None,
                Veto(
                    name,
                    "loop",
                    verdict.message,
                    {"detector": verdict.detector, "count": verdict.count},
                ),
            )
        if verdict.level == "warning":
            warnings.append(verdict.message)
        event = ToolCallEvent(
            name, params, ctx.session_key, ctx.agent, ctx.trigger, dict(event_meta or {})
        )
        if self.hooks:
            hooked = await run_hooks(self.hooks, event)
            warnings.extend(hooked.notes)
            if hooked.blocked is not None:
                return Outcome(name, False, None, Veto(name, "hook", hooked.blocked))
            if hooked.approval is not None:
                approved = False
                if self.approver is not None:
                    try:
                        approved = await self.approver(
                            ToolCallEvent(
                                name, hooked.params, ctx.session_key, ctx.agent, ctx.trigger
                            ),
                            hooked.approval,
                        )
                    except Exception as exc:
                        log.warning("approver failed: %s", type(exc).__name__)
                if not approved:
                    return Outcome(
                        name,
                        False,
                        None,
                        Veto(name, "approval", f"not approved: {hooked.approval}"),
                    )
            params = hooked.params
            event = ToolCallEvent(name, params, ctx.session_key, ctx.agent, ctx.trigger, event.meta)
        try:
            result = await prepared.tool.execute(**params)
            outcome = Outcome(name, True, result, None, tuple(warnings))
        except Exception as exc:
            if name == "exec":
                log.warning(
                    "exec failed (%s): %s",
                    command_fingerprint(params.get("command")),
                    type(exc).__name__,
                )
            else:
                log.warning("tool %s failed: %s", name, type(exc).__name__)
            outcome = Outcome(name, False, f"Error: {exc}\n\n{ERROR_HINT}", None, tuple(warnings))
        self.loop.record_result(name, params, outcome.result)
        if self.observers:
            await notify_observers(self.observers, event, outcome)
        return outcome


def _policy_detail(error: CallError) -> dict[str, Any]:
    detail = error.to_result()
    detail.pop("status", None)
    detail.pop("tool", None)
    detail.pop("error", None)
    return detail
