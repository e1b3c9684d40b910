"""An answer that comes after the timeout is no answer: a hook that blocks the event loop past
`hook_timeout`, or one that catches the timeout's cancellation and answers later, blocks the
call; an approver doing the same denies it. Whatever the late answer says is not obeyed."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from policyctl import load_policy_text, resolve
from policyctl.runtime import CallGate, RequireApproval, RewriteParams, RuntimeTool, ToolRegistry
from policyctl.runtime.approvals import Approval, request_approval
from policyctl.runtime.deadline import bounded
from policyctl.runtime.hooks import ToolCallEvent, notify_observers

PARAMS = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TIMEOUT = 0.1
LATE = 0.25  # well past TIMEOUT, so a busy machine cannot make it look in time


def gate_for(calls: list[dict[str, Any]], **kw: Any) -> CallGate:
    async def run(**params: Any) -> str:
        calls.append(params)
        return "ran"

    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry([RuntimeTool("read_file", "read", PARAMS, run)])
    return CallGate(resolve(policy, None, registry.inventory(policy.catalog)), registry, **kw)


async def blocks_then_answers(*_: Any) -> None:
    time.sleep(LATE)  # synchronous work (a blocking client): never awaits, answers late
    return None


async def swallows_then_answers(*_: Any) -> None:
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:  # a bare `except:` in a hook catches the timeout too
        await asyncio.sleep(LATE)
    return None


async def swallows_then_rewrites(*_: Any) -> RewriteParams:
    await swallows_then_answers()
    return RewriteParams({"n": 9})


@pytest.mark.parametrize(
    "hook", [blocks_then_answers, swallows_then_answers, swallows_then_rewrites]
)
def test_a_hook_answering_after_its_timeout_blocks(
    hook: Any, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_for(calls, hooks=[hook], hook_timeout=TIMEOUT)
    with caplog.at_level(logging.WARNING, "policyctl.runtime"):
        out = asyncio.run(gate.call("read_file", {"n": 1}))
    assert out.veto is not None and out.veto.kind == "hook" and calls == []
    assert f"failed for tool read_file: no answer within {TIMEOUT} s" in caplog.text


async def approves_late_blocking(*_: Any) -> bool:
    time.sleep(LATE)
    return True


async def approves_late_swallowing(*_: Any) -> Approval:
    await swallows_then_answers()
    return Approval.SESSION


@pytest.mark.parametrize("approver", [approves_late_blocking, approves_late_swallowing])
def test_an_approver_answering_after_its_timeout_denies(approver: Any) -> None:
    async def ask(_: ToolCallEvent) -> RequireApproval:
        return RequireApproval("careful")

    calls: list[dict[str, Any]] = []
    gate = gate_for(calls, hooks=[ask], approver=approver, approval_timeout=TIMEOUT)
    out = asyncio.run(gate.call("read_file", {"n": 1}))
    assert out.veto is not None and out.veto.kind == "approval" and calls == []
    event = ToolCallEvent("read_file", {"n": 1})
    answer = asyncio.run(request_approval(approver, event, "careful", timeout=TIMEOUT))
    assert answer is Approval.DENY


def test_an_observer_answering_late_is_logged_as_timed_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    event = ToolCallEvent("read_file", {"n": 1})
    with caplog.at_level(logging.WARNING, "policyctl.runtime"):
        asyncio.run(notify_observers([blocks_then_answers], event, None, timeout=TIMEOUT))
    assert "observer blocks_then_answers failed for tool read_file: TimeoutError" in caplog.text


def test_bounded_refuses_a_late_answer_of_any_awaitable() -> None:
    async def late_future() -> None:
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def answer_late() -> None:
            time.sleep(LATE)  # blocks the loop past the deadline, then answers
            future.set_result("late")

        loop.call_soon(answer_late)
        await bounded(future, TIMEOUT)

    for late in (blocks_then_answers, swallows_then_answers):
        with pytest.raises(asyncio.TimeoutError):
            asyncio.run(bounded(late(), TIMEOUT))
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(late_future())


def test_an_answer_in_time_still_counts() -> None:
    async def quick(*_: Any) -> str:
        await asyncio.sleep(0)
        return "ok"

    assert asyncio.run(bounded(quick(), TIMEOUT)) == "ok"
