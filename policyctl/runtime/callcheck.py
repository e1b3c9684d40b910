"""Call rules at run time: the run's decision for one call, and what the model reads of it.

The gate asks a `CallDecider` (the run's `Resolution`) for the decision on the arguments the
tool will really receive. A deny becomes a refusal the model reads, naming the rule and the
layer at the refusal detail the operator chose; an ask goes to the approver (`approvals`).

The reference tools check again what they really touch, when they touch it: the real path of
the file they opened, every redirect hop of a fetch, the argument vector exec starts. They do
so through `recheck`, which finds the run's `CallCheck` in a context variable the gate sets
while the tool runs (each task has its own, so calls running together never see each
other's). A tool called outside a gate (a test, a script) has no run and no policy to ask.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..explain.refusal import (
    as_other_tool,
    how_decided,
    refusal_reason,
    shown_detail,
)
from .approvals import Approval, Approver, SessionGrants, call_key, request_approval
from .hooks import ToolCallEvent

if TYPE_CHECKING:
    from ..callrules import CallDecision, Verdict

# `callrules.Effect` (an IntEnum) by value: importing the runtime does not load the call-rule
# core (its shell parser) before a run has a call rule to decide (a test pins the values)
ALLOW, ASK, DENY = 0, 1, 2


class CallDecider(Protocol):
    """What the gate needs of a run: its decision for one call (`Resolution.decide_call`)."""

    def decide_call(self, tool: str, args: Mapping[str, Any]) -> CallDecision: ...


class CallRefused(PermissionError):
    """A call (or what a tool was about to touch) that the run's call rules refuse."""

    def __init__(
        self, reason: str, kind: str, detail: dict[str, Any], decision: CallDecision
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind  # "policy" (a deny) or "approval" (an ask nobody approved)
        self.detail = detail
        self.decision = decision


def undecidable(tool: str, exc: Exception) -> CallDecision:
    """The decision for a call the decider failed on: refused (fail closed)."""
    from ..callrules import CallDecision, Effect, Reason, Verdict

    why = f"the call could not be decided ({type(exc).__name__})"
    return CallDecision(tool, Verdict(Effect.DENY, Reason.UNANALYSABLE, tool, detail=why), ())


def question(verdict: Verdict) -> tuple[str | None, str | None]:
    """The rule that asked: part of what a session grant remembers."""
    return (verdict.layer, verdict.entry)


@dataclass
class CallCheck:
    """One run's call rules with its approver, for the gate and the tools' re-checks."""

    decider: CallDecider
    approver: Approver | None
    grants: SessionGrants
    approval_timeout: float
    refusal_detail: str
    session_key: str | None = None
    agent: str | None = None
    trigger: str = "user"
    #: the run's home (`RunContext.home`): what `~` means in its call rules, and exec's HOME
    home: str | None = None

    def decide(self, tool: str, args: Mapping[str, Any]) -> CallDecision:
        return self.decider.decide_call(tool, args)

    def event(self, tool: str, args: Mapping[str, Any], meta: dict[str, Any]) -> ToolCallEvent:
        own = copy.deepcopy(dict(args))  # what runs is not the approver's to change
        return ToolCallEvent(tool, own, self.session_key, self.agent, self.trigger, meta)

    def refusal(self, tool: str, decision: CallDecision, what: str = "call") -> CallRefused:
        verdict = decision.verdict
        reason = refusal_reason(tool, verdict, self.refusal_detail, what=what)
        return CallRefused(reason, "policy", shown_detail(verdict, self.refusal_detail), decision)

    async def approve(
        self,
        tool: str,
        args: Mapping[str, Any],
        decision: CallDecision,
        *,
        also: str | None = None,
        what: str = "call",
    ) -> CallRefused | None:
        """Settle an `ask`: a session grant, else the approver. None: the call may run.
        `also` is a hook's own approval question, asked in the same breath."""
        verdict = decision.verdict
        key = call_key(tool, args, question(verdict))
        if key in self.grants and also is None:
            return None
        reason = f"{what} of {tool} needs approval: {how_decided(verdict)}"
        reason += as_other_tool(tool, verdict, self.refusal_detail)
        if also is not None:
            reason += f"; and a hook asks: {also}"
        if self.approver is None:
            shown = f"{reason}. This run has no approver (headless), so it is refused."
            detail = shown_detail(verdict, self.refusal_detail)
            if self.refusal_detail == "minimal":
                shown = f"this {what} of {tool} needs approval, and this run has no approver"
            return CallRefused(shown, "approval", detail, decision)
        meta = {"callRule": verdict.to_json(), "sessionGrantable": also is None}
        answer = await request_approval(
            self.approver, self.event(tool, args, meta), reason, timeout=self.approval_timeout
        )
        if answer is Approval.DENY:
            detail = shown_detail(verdict, self.refusal_detail)
            return CallRefused(f"not approved: {reason}", "approval", detail, decision)
        if answer is Approval.SESSION:
            self.grants.grant(key)
        return None


#: the run's call check while a tool runs inside the gate (None outside one)
running: ContextVar[tuple[CallCheck, str, bool] | None] = ContextVar(
    "policyctl_running_call", default=None
)


def run_home() -> str | None:
    """The home of the run whose tool is running (absolute, symlinks resolved, as the call
    rules read it), or None outside a gate or in a run without one."""
    current = running.get()
    if current is None or current[0].home is None:
        return None
    return os.path.realpath(os.path.abspath(current[0].home))


async def recheck(
    tool: str, args: Mapping[str, Any], *, same_call: bool = False, what: str = "call"
) -> None:
    """Decide what a tool is about to touch as a call of `tool` with `args`, now.

    Raises CallRefused for a deny, and for an ask nobody approves. `same_call`: the tool says
    this is what the gate already decided (the real path is the path named), so an approval
    the gate obtained for this call covers it; anything else asks again.
    """
    current = running.get()
    if current is None:
        return  # not inside a gate: no run, no rules
    check, _, approved_here = current
    decision = check.decide(tool, args)
    if decision.effect == ALLOW:
        return
    if decision.effect == DENY:
        raise check.refusal(tool, decision, what)
    if same_call and approved_here:
        return
    refused = await check.approve(tool, args, decision, what=what)
    if refused is not None:
        raise refused


def refuse_if_denied(tool: str, args: Mapping[str, Any], what: str) -> None:
    """Raise CallRefused if a deny rule meets `args`; allow rules and callDefault do not speak
    here (web_fetch decides a host's resolved address this way: `ip:` deny rules cover the
    addresses names resolve to, while a name needs no allow rule for its address)."""
    current = running.get()
    if current is None:
        return
    check = current[0]
    decision = check.decide(tool, args)
    from ..callrules import Reason

    if decision.effect == DENY and decision.verdict.reason is Reason.DENY_RULE:
        raise check.refusal(tool, decision, what)
