"""`deadline.bounded`: a hook that answers at once arms no timer; one that waits is still cut
off at its deadline (counted from before its first step), and cancellations, errors and
closing pass through it as through a plain `await`."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import pytest

from policyctl import load_policy_text, resolve
from policyctl.runtime import CallGate, RewriteParams, RuntimeTool, ToolRegistry
from policyctl.runtime.deadline import bounded
from policyctl.runtime.hooks import ToolCallEvent

pytestmark = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="3.10 bounds with asyncio.wait_for, a task per call"
)

PARAMS = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def gate_for(calls: list[dict[str, Any]], **kw: Any) -> CallGate:
    async def run(**params: Any) -> str:
        calls.append(params)
        return "ran"

    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry([RuntimeTool("read_file", "read", PARAMS, run)])
    return CallGate(resolve(policy, None, registry.inventory(policy.catalog)), registry, **kw)


async def _timers_armed(gate: CallGate) -> tuple[int, Any]:
    loop = asyncio.get_running_loop()
    armed = 0
    call_at = loop.call_at

    def counting(*args: Any, **kw: Any) -> Any:
        nonlocal armed
        armed += 1
        return call_at(*args, **kw)

    loop.call_at = counting  # type: ignore[method-assign]
    try:
        out = await gate.call("read_file", {"n": 1})
    finally:
        loop.call_at = call_at  # type: ignore[method-assign]
    return armed, out


def test_a_hook_that_answers_at_once_arms_no_timer() -> None:
    async def check(_: ToolCallEvent) -> None:
        return None

    calls: list[dict[str, Any]] = []
    armed, out = asyncio.run(_timers_armed(gate_for(calls, hooks=[check, check])))
    assert out.ok and calls == [{"n": 1}]
    assert armed == 0


def test_a_hook_that_waits_is_timed_and_its_answer_counts() -> None:
    async def slow_rewrite(_: ToolCallEvent) -> RewriteParams:
        await asyncio.sleep(0)
        await asyncio.sleep(0.001)
        return RewriteParams({"n": "7"})

    calls: list[dict[str, Any]] = []
    armed, out = asyncio.run(_timers_armed(gate_for(calls, hooks=[slow_rewrite])))
    assert out.ok and calls == [{"n": 7}]
    assert armed >= 1  # its timeout (and the sleep's own timer)


def test_the_deadline_counts_from_before_the_first_step() -> None:
    async def blocks_then_waits(_: ToolCallEvent) -> None:
        time.sleep(0.3)  # blocks the event loop past the 0.2 s timeout ...
        await asyncio.sleep(0.05)  # ... then waits: cut off here, not 0.2 s from now

    calls: list[dict[str, Any]] = []
    gate = gate_for(calls, hooks=[blocks_then_waits], hook_timeout=0.2)
    out = asyncio.run(gate.call("read_file", {"n": 1}))
    assert out.veto is not None and out.veto.kind == "hook" and calls == []


def test_a_hook_raising_after_it_waited_fails_closed() -> None:
    async def late_failure(_: ToolCallEvent) -> None:
        await asyncio.sleep(0)
        raise RuntimeError("backend down")

    calls: list[dict[str, Any]] = []
    out = asyncio.run(gate_for(calls, hooks=[late_failure]).call("read_file", {"n": 1}))
    assert out.veto is not None and out.veto.kind == "hook" and calls == []


def test_cancelling_the_caller_cancels_the_waiting_hook() -> None:
    seen: list[str] = []
    calls: list[dict[str, Any]] = []

    async def waits(_: ToolCallEvent) -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def main() -> None:
        task = asyncio.ensure_future(gate_for(calls, hooks=[waits]).call("read_file", {"n": 1}))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):  # the caller's cancellation, not a block
            await task

    asyncio.run(main())
    assert seen == ["cancelled"] and calls == []


def test_a_closed_caller_closes_the_waiting_coroutine() -> None:
    seen: list[str] = []

    async def waits(future: asyncio.Future[None]) -> None:
        try:
            await future
        finally:
            seen.append("closed")

    async def main() -> None:
        inner = waits(asyncio.get_running_loop().create_future())
        outer = bounded(inner, 5)
        outer.send(None)  # runs to the future the inner coroutine waits on
        outer.close()  # the caller is dropped: the inner coroutine must not linger
        assert seen == ["closed"] and inner.cr_frame is None

    asyncio.run(main())


def test_other_awaitables_are_bounded_too() -> None:
    async def main() -> None:
        never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with pytest.raises(TimeoutError):
            await bounded(never, 0.05)
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        done.set_result(3)
        assert await bounded(done, 0.05) == 3

    asyncio.run(main())
