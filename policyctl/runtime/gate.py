"""The call-time gate: every call, from every entry point, passes here before it runs.

In order: the call must be well formed; the tool must be in the run's resolved set (a removed
or unknown tool is refused and never executed); the arguments are prepared; loop detection
counts every call, refused, invalid and malformed ones included (a critical loop vetoes, a
warning is noted); the run's call rules decide the prepared arguments (a deny is refused here,
before any hook or person sees the call); the hooks (block, approval, rewrite), each within a
timeout; parameters a hook rewrote are validated again and decided again, so a rewrite cannot
dodge a rule: what runs is what was decided. An `ask` (of a call rule, or of a hook) goes to
the approver with the final arguments, once for both (`approvals`). A veto goes back to the
model as a structured tool result, at the refusal detail the operator chose; the full
provenance goes to the log and the observers. While the tool runs, its re-checks of what it
really touches meet the same rules (`callcheck.recheck`). What a tool returns is cut to
`result_limit` characters (head and tail kept, the cut said).
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..pipeline.result import Resolution
from .approvals import Approval, Approver, SessionGrants, request_approval
from .arguments import ArgumentError, coerce_arguments
from .callcheck import ASK, DENY, CallCheck, CallDecider, CallRefused, running, undecidable
from .hooks import (
    APPROVAL_TIMEOUT,
    HOOK_TIMEOUT,
    Hook,
    Observer,
    ToolCallEvent,
    notify_observers,
    run_hooks,
)
from .loopdetect import LoopConfig, LoopDetector, LoopVerdict, params_hash
from .registry import REFUSAL_DETAILS, CallError, PreparedCall, RefusalDetail, ToolRegistry
from .text import UnrenderableResult, render_result, safe_str, truncate
from .tools import RuntimeTool

if TYPE_CHECKING:
    from ..callrules import CallDecision

log = logging.getLogger("policyctl.runtime")

RESULT_LIMIT = 20_000  # characters of one tool result the model reads
MALFORMED = "(malformed call)"  # the name a call without a usable tool name is counted under
MAX_NAME = 256  # characters of a tool name a call may carry (providers allow 64)


@dataclass(frozen=True)
class Veto:
    tool: str
    kind: str  # "policy", "arguments", "loop", "hook", "approval", "malformed"
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)  # what the model reads
    provenance: dict[str, Any] = field(default_factory=dict)  # log and observers only

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
    limit: int = RESULT_LIMIT
    text: str | None = None  # the result already rendered (the gate renders it to check it)

    def content(self) -> str:
        if self.veto is not None:
            return json.dumps(self.veto.to_result())
        body = self.text if self.text is not None else render_result(self.result)
        body = truncate(body, self.limit)
        if self.warnings:
            body += "\n\n[" + "; ".join(self.warnings) + "]"
        return body


ERROR_HINT = "[Analyze the error above and try a different approach.]"


def command_fingerprint(command: Any) -> str:
    """How exec failures are logged: the length and a short hash, never the command itself."""
    text = command if isinstance(command, str) else repr(command)
    return f"len={len(text)} sha256={hashlib.sha256(text.encode()).hexdigest()[:12]}"


def _raw_text(raw: Any) -> str:
    """Invalid arguments as loop detection counts them: the same bad call is the same call."""
    if isinstance(raw, str):
        return raw
    try:
        return json.dumps(raw, sort_keys=True, default=str)
    except (ValueError, TypeError, RecursionError):
        return repr(raw)


class _ToolTimedOut(Exception):
    """The tool ran past `tool_timeout` (apart from any TimeoutError the tool raises itself)."""


def check_gate_options(
    refusal_detail: str,
    result_limit: int,
    hook_timeout: float,
    approval_timeout: float,
    tool_timeout: float | None = None,
) -> None:
    """ValueError for an option the gate could not honour (a NaN timeout never expires)."""
    if refusal_detail not in REFUSAL_DETAILS:
        raise ValueError(
            f"refusal_detail must be one of {', '.join(REFUSAL_DETAILS)}, got {refusal_detail!r}"
        )
    if isinstance(result_limit, bool) or not isinstance(result_limit, int) or result_limit < 100:
        raise ValueError(f"result_limit must be a whole number >= 100, got {result_limit!r}")
    timeouts = [("hook_timeout", hook_timeout), ("approval_timeout", approval_timeout)]
    if tool_timeout is not None:
        timeouts.append(("tool_timeout", tool_timeout))
    for label, value in timeouts:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            raise ValueError(f"{label} must be a finite number > 0, got {value!r}")


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
        refusal_detail: RefusalDetail = "layer",
        result_limit: int = RESULT_LIMIT,
        hook_timeout: float = HOOK_TIMEOUT,
        approval_timeout: float = APPROVAL_TIMEOUT,
        tool_timeout: float | None = None,
        grants: SessionGrants | None = None,
        decider: CallDecider | None = None,
    ) -> None:
        check_gate_options(
            refusal_detail, result_limit, hook_timeout, approval_timeout, tool_timeout
        )
        self.resolution = resolution
        self.registry = registry
        self.hooks = tuple(hooks)
        self.observers = tuple(observers)
        self.approver = approver
        self.loop = loop or LoopDetector(loop_config or LoopConfig())
        self.refusal_detail: RefusalDetail = refusal_detail
        self.result_limit = int(result_limit)
        self.hook_timeout = float(hook_timeout)
        self.approval_timeout = float(approval_timeout)
        self.tool_timeout = None if tool_timeout is None else float(tool_timeout)
        ctx = resolution.context
        # which tools the run's call rules look at, asked once per tool: one lookup per call
        self._ruled: dict[str, bool] = {}
        self._fast = decider is None  # a Resolution answers has_call_rules
        self.calls = CallCheck(
            decider if decider is not None else resolution,
            approver,
            grants if grants is not None else SessionGrants(),  # no session: this run's own
            self.approval_timeout,
            self.refusal_detail,
            ctx.session_key,
            ctx.agent,
            ctx.trigger,
            resolution.run_context.home,
        )

    def check(self, name: str, params: dict[str, Any]) -> LoopVerdict | None:
        """The synchronous part of the gate: None if the tool is not in the resolved set,
        else the loop detector's verdict (recorded)."""
        if not self.registry.allows(name, self.resolution):
            self.loop.observe(name, params, known=False)
            return None
        return self.loop.observe(name, params)

    def _event(self, name: str, params: dict[str, Any], meta: dict[str, Any]) -> ToolCallEvent:
        ctx = self.resolution.context
        return ToolCallEvent(name, params, ctx.session_key, ctx.agent, ctx.trigger, meta)

    async def _done(self, event: ToolCallEvent | None, outcome: Outcome) -> Outcome:
        if self.observers and event is not None:
            await notify_observers(self.observers, event, outcome, timeout=self.hook_timeout)
        return outcome

    def _loop_veto(self, name: str, verdict: LoopVerdict) -> Outcome:
        detail = {"detector": verdict.detector, "count": verdict.count}
        return Outcome(name, False, None, Veto(name, "loop", verdict.message, detail))

    async def malformed(self, name: Any, problem: str, raw_arguments: Any = None) -> Outcome:
        """A call the provider could not make sense of (no tool name, no function): the model
        reads what was wrong, and it counts for loop detection like a call of a missing tool."""
        label = name if isinstance(name, str) and name else MALFORMED
        verdict = self.loop.observe(label, {}, known=False)
        event = self._event(label, {}, {"malformed": problem})
        if verdict.level == "critical":
            return await self._done(event, self._loop_veto(label, verdict))
        warnings = (verdict.message,) if verdict.level == "warning" else ()
        text = f"Error: malformed tool call: {problem}\n\n{ERROR_HINT}"
        return await self._done(
            event, Outcome(label, False, text, None, warnings, self.result_limit)
        )

    async def call(
        self, name: str, raw_arguments: Any, *, event_meta: dict[str, Any] | None = None
    ) -> Outcome:
        if not isinstance(name, str) or not name.strip():
            return await self.malformed(name, "the call has no tool name", raw_arguments)
        if len(name) > MAX_NAME:  # echoed in refusals: never a megabyte of it
            return await self.malformed(None, f"the tool name is longer than {MAX_NAME} characters")
        meta = dict(event_meta or {})
        try:
            prepared = self.registry.prepare_call(name, raw_arguments, self.resolution)
        except Exception as exc:  # a checker that fails must not run the call, nor end the turn
            log.warning("checking a call of tool %s failed: %s", name, type(exc).__name__)
            prepared = CallError(
                name, f"invalid arguments for {name}: they could not be checked", kind="arguments"
            )
        if isinstance(prepared, CallError):
            return await self._refuse(prepared, raw_arguments, meta)
        assert isinstance(prepared, PreparedCall)
        params = prepared.arguments
        tool = prepared.tool
        digest = params_hash(params)  # hashed once: the result is recorded under it too
        verdict = self.loop.observe_hashed(name, digest)
        warnings: list[str] = []
        # the event is what hooks and observers read: not built for a gate that has neither
        event = self._event(name, params, meta) if self.hooks or self.observers else None
        if verdict.level == "critical":
            return await self._done(event, self._loop_veto(name, verdict))
        if verdict.level == "warning":
            warnings.append(verdict.message)
        # decided before the hooks: no hook, and no person, sees a call the rules refuse
        decision = self._decide(tool, params)
        if decision is not None and decision.effect == DENY:
            return await self._done(event, self._rule_veto(self.calls.refusal(name, decision)))
        hook_question: str | None = None
        if self.hooks:
            event = event or self._event(name, params, meta)
            hooked = await run_hooks(self.hooks, event, timeout=self.hook_timeout)
            warnings.extend(hooked.notes)
            if hooked.blocked is not None:
                return await self._done(
                    event, Outcome(name, False, None, Veto(name, "hook", hooked.blocked))
                )
            if hooked.rewritten:
                # a hook's rewrite is held to the same schema as the model's own arguments
                try:
                    params = coerce_arguments(
                        hooked.params, tool.checked_schema, accept=tool.accept
                    )
                except ArgumentError as exc:
                    log.warning("a hook rewrote the parameters of tool %s: %s", name, exc)
                    reason = f"a hook rewrote the parameters into ones {name} does not take: {exc}"
                    return await self._done(
                        event, Outcome(name, False, None, Veto(name, "hook", reason))
                    )
                event = self._event(name, params, meta)
                # what runs is what is decided: the rewritten arguments, again
                decision = self._decide(tool, params)
                if decision is not None and decision.effect == DENY:
                    rewritten = self.calls.refusal(name, decision)
                    return await self._done(event, self._rule_veto(rewritten))
            hook_question = hooked.approval
        approved = False
        if decision is not None and decision.effect == ASK:
            refused = await self.calls.approve(
                name, self._view(tool, params), decision, also=hook_question
            )
            if refused is not None:
                return await self._done(event, self._rule_veto(refused))
            approved = True
        elif hook_question is not None:
            answer = await request_approval(
                self.approver,
                self._event(name, copy.deepcopy(params), {}),  # what runs is not theirs
                hook_question,
                timeout=self.approval_timeout,
            )
            if answer is Approval.DENY:
                veto = Veto(name, "approval", f"not approved: {hook_question}")
                return await self._done(event, Outcome(name, False, None, veto))
        try:
            result = await self._execute(prepared, params, approved)
            # rendered here, not when the model's message is built: a result with no text
            # (a cycle, a __str__ that raises) is a tool error, and the turn goes on
            rendered = render_result(result)
            outcome = Outcome(
                name, True, result, None, tuple(warnings), self.result_limit, rendered
            )
        except CallRefused as exc:  # what the tool was about to touch: refused by the rules
            outcome = self._rule_veto(exc, warnings)
        except _ToolTimedOut:
            log.warning("tool %s did not finish within %s s; cancelled", name, self.tool_timeout)
            text = f"Error: {name} did not finish within {self.tool_timeout} s\n\n{ERROR_HINT}"
            outcome = Outcome(name, False, text, None, tuple(warnings), self.result_limit)
        except UnrenderableResult as exc:
            log.warning("tool %s returned a result with no text: %s", name, exc)
            text = f"Error: {name} returned a result that cannot be shown ({exc})\n\n{ERROR_HINT}"
            outcome = Outcome(name, False, text, None, tuple(warnings), self.result_limit)
        except Exception as exc:
            if name == "exec":
                log.warning(
                    "exec failed (%s): %s",
                    command_fingerprint(params.get("command")),
                    type(exc).__name__,
                )
            else:
                log.warning("tool %s failed: %s", name, type(exc).__name__)
            text = f"Error: {safe_str(exc)}\n\n{ERROR_HINT}"
            outcome = Outcome(name, False, text, None, tuple(warnings), self.result_limit)
        seen = outcome.text if outcome.text is not None else outcome.result
        if params is not prepared.arguments:  # a hook's rewrite ran: recorded as what ran
            digest = params_hash(params)
        self.loop.record_hashed(name, digest, seen)
        if not self.observers:  # what _done would do, without a coroutine per call
            return outcome
        return await self._done(event, outcome)

    @staticmethod
    def _view(tool: RuntimeTool, params: dict[str, Any]) -> Mapping[str, Any]:
        """The arguments as the call rules read them (see `RuntimeTool.call_view`)."""
        return params if tool.call_view is None else tool.call_view(params)

    def _decide(self, tool: RuntimeTool, params: dict[str, Any]) -> CallDecision | None:
        """The run's decision on the arguments the tool will receive; None: no call rules.
        A decider that fails refuses the call (fail closed)."""
        decider = self.calls.decider
        try:
            if self._fast:
                ruled = self._ruled.get(tool.name)
                if ruled is None:
                    ruled = self._ruled[tool.name] = self.resolution.has_call_rules(tool.name)
                if not ruled:
                    return None
            return decider.decide_call(tool.name, self._view(tool, params))
        except Exception as exc:
            log.warning("deciding a call of tool %s failed: %s", tool.name, type(exc).__name__)
            return undecidable(tool.name, exc)

    def _rule_veto(self, refused: CallRefused, warnings: Sequence[str] = ()) -> Outcome:
        name = refused.decision.tool
        provenance = refused.decision.to_json()
        if log.isEnabledFor(logging.INFO):
            log.info(
                "call of tool %s refused (session %s): %s",
                name,
                self.resolution.context.session_key,
                json.dumps(provenance, default=str),
            )
        veto = Veto(name, refused.kind, refused.reason, refused.detail, provenance)
        return Outcome(name, False, None, veto, tuple(warnings))

    async def _execute(
        self, prepared: PreparedCall, params: dict[str, Any], approved: bool = False
    ) -> Any:
        # the tool's re-checks find the run here; the task made below copies it
        token = running.set((self.calls, prepared.tool.name, approved))
        try:
            if self.tool_timeout is None:
                return await prepared.tool.execute(**params)
            task = asyncio.ensure_future(prepared.tool.execute(**params))
        finally:
            running.reset(token)
        done, _ = await asyncio.wait({task}, timeout=self.tool_timeout)
        if not done:
            task.cancel()  # not awaited: a tool that ignores cancellation cannot hold the turn
            raise _ToolTimedOut
        return task.result()

    async def _refuse(self, error: CallError, raw_arguments: Any, meta: dict[str, Any]) -> Outcome:
        name = error.tool
        event = self._event(name, {}, meta)
        if error.kind == "arguments":
            verdict = self.loop.observe(name, {"(invalid arguments)": _raw_text(raw_arguments)})
            if verdict.level == "critical":
                return await self._done(event, self._loop_veto(name, verdict))
            warnings = (verdict.message,) if verdict.level == "warning" else ()
            text = f"Error: {error.message}\n\n{ERROR_HINT}"
            return await self._done(
                event, Outcome(name, False, text, None, warnings, self.result_limit)
            )
        verdict = self.loop.observe(name, {}, known=False)
        provenance = error.provenance()
        if log.isEnabledFor(logging.INFO):  # the JSON is only encoded for a log that keeps it
            log.info(
                "tool %s refused (session %s): %s",
                name,
                self.resolution.context.session_key,
                json.dumps(provenance, default=str),
            )
        if verdict.level == "critical":
            return await self._done(event, self._loop_veto(name, verdict))
        shown = error.to_result(self.refusal_detail)
        reason = shown.pop("error")
        shown.pop("status", None)
        shown.pop("tool", None)
        if verdict.level == "warning":
            shown["warning"] = verdict.message
        veto = Veto(name, "policy", reason, shown, provenance)
        return await self._done(event, Outcome(name, False, None, veto))
