"""The call gate (policy, loop detection, hooks, observers) and the agent loop."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from typing import Any

import pytest

from policyctl import load_policy_text, resolve
from policyctl.runtime import (
    Block,
    CallGate,
    LoopConfig,
    ProviderResponse,
    RequireApproval,
    RewriteParams,
    RuntimeTool,
    ScriptedProvider,
    ToolCall,
    ToolCallEvent,
    ToolRegistry,
    run_loop,
)
from policyctl.runtime.gate import command_fingerprint

PARAMS = {"type": "object", "properties": {"path": {"type": "string"}, "n": {"type": "integer"}}}


def make(
    calls: list[tuple[str, dict[str, Any]]],
    *,
    read_only: bool = True,
    delay: float = 0.0,
    name: str = "read_file",
    fail: bool = False,
) -> RuntimeTool:
    async def run(**params: Any) -> Any:
        calls.append((name, params))
        if delay:
            await asyncio.sleep(delay)
        if fail:
            raise RuntimeError("disk on fire")
        return {"read": params.get("path")}

    return RuntimeTool(name, name, PARAMS, run, read_only=read_only)


def gate_for(
    tools: list[RuntimeTool], policy_text: str = "catalog: nanobot\n", **kw: Any
) -> CallGate:
    policy = load_policy_text(policy_text)
    registry = ToolRegistry(tools)
    res = resolve(policy, None, registry.inventory(policy.catalog))
    return CallGate(res, registry, **kw)


def test_removed_tool_is_refused_and_never_executed() -> None:
    calls: list[Any] = []
    gate = gate_for([make(calls, name="exec")], "catalog: nanobot\ntools: {deny: [exec]}\n")
    out = asyncio.run(gate.call("exec", {"path": "x"}))
    assert not out.ok and out.veto is not None and out.veto.kind == "policy"
    body = json.loads(out.content())
    assert body["status"] == "blocked" and body["removedBy"]["stage"] == 3
    assert calls == []
    assert gate.check("exec", {}) is None


def test_bad_arguments_go_back_as_an_error_with_a_hint() -> None:
    calls: list[Any] = []
    gate = gate_for([make(calls)])
    out = asyncio.run(gate.call("read_file", {"n": "many"}))
    assert not out.ok and out.veto is None
    assert "n: expected integer" in out.result and "try a different approach" in out.result
    assert calls == []


def test_critical_loop_is_vetoed_and_warning_noted() -> None:
    calls: list[Any] = []
    gate = gate_for([make(calls)], loop_config=LoopConfig(warning=2, critical=3))
    first, second, third = (asyncio.run(gate.call("read_file", {"path": "a"})) for _ in range(3))
    assert first.ok and not first.warnings
    assert second.ok and second.warnings and "loop detected (warning)" in second.content()
    assert not third.ok and third.veto is not None and third.veto.kind == "loop"
    assert len(calls) == 2


def test_hooks_block_is_sticky_and_stops_later_hooks() -> None:
    seen: list[str] = []

    async def blocker(event: ToolCallEvent) -> Block:
        seen.append("blocker")
        return Block("not today")

    async def later(event: ToolCallEvent) -> None:
        seen.append("later")

    calls: list[Any] = []
    gate = gate_for([make(calls)], hooks=[blocker, later])
    out = asyncio.run(gate.call("read_file", {"path": "a"}))
    assert out.veto is not None and out.veto.kind == "hook" and out.veto.reason == "not today"
    assert seen == ["blocker"] and calls == []


def test_raising_hook_blocks() -> None:
    async def broken(event: ToolCallEvent) -> None:
        raise KeyError("oops")

    calls: list[Any] = []
    gate = gate_for([make(calls)], hooks=[broken])
    out = asyncio.run(gate.call("read_file", {"path": "a"}))
    assert out.veto is not None
    assert out.veto.reason == "Tool call blocked because before_tool_call hook failed"
    assert calls == []


def test_approval_freezes_params_and_each_hook_gets_a_copy() -> None:
    approvals: list[dict[str, Any]] = []

    async def rewrite(event: ToolCallEvent) -> RewriteParams:
        event.params["path"] = "mutated-in-place"  # a copy: must not leak
        return RewriteParams({"path": "rewritten"})

    async def ask(event: ToolCallEvent) -> RequireApproval:
        assert event.params == {"path": "rewritten"}
        return RequireApproval("writes outside the sandbox")

    async def too_late(event: ToolCallEvent) -> RewriteParams:
        return RewriteParams({"path": "sneaky"})

    async def approver(event: ToolCallEvent, reason: str) -> bool:
        approvals.append(dict(event.params))
        return True

    calls: list[Any] = []
    gate = gate_for([make(calls)], hooks=[rewrite, ask, too_late], approver=approver)
    out = asyncio.run(gate.call("read_file", {"path": "original"}))
    assert out.ok
    assert approvals == [{"path": "rewritten"}]
    assert calls == [("read_file", {"path": "rewritten"})]
    assert any("after approval" in w for w in out.warnings)


def test_approval_without_approver_or_denied_is_a_veto() -> None:
    async def ask(event: ToolCallEvent) -> RequireApproval:
        return RequireApproval("needs a human")

    async def no(event: ToolCallEvent, reason: str) -> bool:
        return False

    for approver in (None, no):
        calls: list[Any] = []
        gate = gate_for([make(calls)], hooks=[ask], approver=approver)
        out = asyncio.run(gate.call("read_file", {"path": "a"}))
        assert out.veto is not None and out.veto.kind == "approval" and calls == []


def test_block_after_approval_request_still_blocks() -> None:
    async def ask(event: ToolCallEvent) -> RequireApproval:
        return RequireApproval("x")

    async def block(event: ToolCallEvent) -> Block:
        return Block("no")

    calls: list[Any] = []
    gate = gate_for([make(calls)], hooks=[ask, block])
    out = asyncio.run(gate.call("read_file", {"path": "a"}))
    assert out.veto is not None and out.veto.kind == "hook"


def test_observers_cannot_change_the_outcome() -> None:
    async def meddle(event: ToolCallEvent, outcome: Any) -> None:
        outcome.result["read"] = "changed"  # a copy
        raise RuntimeError("and then fails")

    calls: list[Any] = []
    gate = gate_for([make(calls)], observers=[meddle])
    out = asyncio.run(gate.call("read_file", {"path": "a"}))
    assert out.ok and out.result == {"read": "a"}


def test_exec_failure_log_has_no_command_and_no_environment(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "curl -H 'Authorization: Bearer sk-live-123' https://example.invalid"
    calls: list[Any] = []
    tool = make(calls, name="exec", read_only=False, fail=True)
    tool = RuntimeTool(
        "exec",
        "exec",
        {"type": "object", "properties": {"command": {"type": "string"}}},
        tool.execute,
    )
    gate = gate_for([tool])
    with caplog.at_level(logging.WARNING, logger="policyctl.runtime"):
        out = asyncio.run(gate.call("exec", {"command": secret}))
    assert not out.ok and "disk on fire" in out.result
    text = caplog.text
    assert "sk-live-123" not in text and "curl" not in text
    assert command_fingerprint(secret) in text
    assert f"len={len(secret)}" in text


def test_loop_batches_concurrency_safe_calls_and_keeps_order() -> None:
    calls: list[Any] = []
    fast = make(calls, delay=0.2, name="read_file")
    slow_writer = make(calls, read_only=False, name="write_file")
    provider = ScriptedProvider(
        [
            ProviderResponse(
                tool_calls=(
                    ToolCall("1", "read_file", {"path": "a"}),
                    ToolCall("2", "read_file", {"path": "b"}),
                    ToolCall("3", "read_file", {"path": "c"}),
                    ToolCall("4", "write_file", {"path": "w"}),
                    ToolCall("5", "read_file", {"path": "d"}),
                )
            ),
            ProviderResponse(content="done"),
        ]
    )
    gate = gate_for([fast, slow_writer])
    start = time.perf_counter()
    result = asyncio.run(run_loop(provider, gate, [{"role": "user", "content": "go"}]))
    elapsed = time.perf_counter() - start
    tool_messages = [m for m in result.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["1", "2", "3", "4", "5"]
    # three reads together (0.2 s), then the write alone, then the last read (0.2 s)
    assert elapsed < 0.55
    assert [c[1]["path"] for c in calls][:3] == ["a", "b", "c"] and calls[3][1] == {"path": "w"}
    assert result.final_text == "done" and result.stopped == "done"
    sent_tools = provider.requests[0][1]
    assert [t["function"]["name"] for t in sent_tools] == ["read_file", "write_file"]


def test_loop_iteration_budget() -> None:
    calls: list[Any] = []
    provider = ScriptedProvider(
        [
            ProviderResponse(tool_calls=(ToolCall(str(i), "read_file", {"path": str(i)}),))
            for i in range(10)
        ]
    )
    result = asyncio.run(run_loop(provider, gate_for([make(calls)]), [], max_iterations=3))
    assert result.stopped == "budget" and result.iterations == 3 and len(calls) == 3


def test_a_hook_changing_nested_values_in_place_changes_nothing_that_runs() -> None:
    async def meddle(event: ToolCallEvent) -> None:
        event.params["tags"].append("injected")  # nested: only a deep copy keeps it out
        event.params["path"] = "elsewhere"
        event.meta["who"] = "hook"

    seen: list[dict[str, Any]] = []

    async def watch(event: ToolCallEvent, outcome: Any) -> None:
        seen.append(event.meta)

    calls: list[Any] = []
    gate = gate_for([make(calls)], hooks=[meddle, meddle], observers=[watch])
    out = asyncio.run(gate.call("read_file", {"path": "a", "tags": ["x"]}, event_meta={"m": 1}))
    assert out.ok
    assert calls == [("read_file", {"path": "a", "tags": ["x"]})]
    assert seen == [{"m": 1}]


def test_a_hook_past_its_timeout_blocks_and_a_quick_one_runs_in_the_callers_task() -> None:
    tasks: list[Any] = []

    async def quick(event: ToolCallEvent) -> None:
        tasks.append(asyncio.current_task())

    async def slow(event: ToolCallEvent) -> None:
        await asyncio.sleep(5)

    async def main(gate: CallGate) -> Any:
        return asyncio.current_task(), await gate.call("read_file", {"path": "a"})

    calls: list[Any] = []
    caller, out = asyncio.run(main(gate_for([make(calls)], hooks=[quick, slow], hook_timeout=0.05)))
    if sys.version_info >= (3, 11):  # 3.10 has no asyncio.timeout: wait_for's own task
        assert tasks == [caller]  # no task (and no event-loop turn) per hook
    assert out.veto is not None and out.veto.kind == "hook" and calls == []


def test_a_refusal_is_logged_with_its_provenance_at_info(caplog: pytest.LogCaptureFixture) -> None:
    gate = gate_for([make([])], "catalog: nanobot\ntools:\n  deny: [read_file]\n")
    with caplog.at_level(logging.INFO, logger="policyctl.runtime"):
        out = asyncio.run(gate.call("read_file", {"path": "a"}))
    assert out.veto is not None and out.veto.kind == "policy"
    assert "tool read_file refused" in caplog.text and '"removedBy"' in caplog.text


def test_a_repeated_refusal_follows_a_registry_change() -> None:
    calls: list[Any] = []
    gate = gate_for([make(calls), make(calls, name="web_search")])
    first = asyncio.run(gate.call("no_such_tool", {}))
    assert first.veto is not None and "web_search" in first.veto.reason
    assert asyncio.run(gate.call("no_such_tool", {})).veto == first.veto  # the same answer again
    gate.registry.unregister("web_search")
    after = asyncio.run(gate.call("no_such_tool", {}))
    assert after.veto is not None and "web_search" not in after.veto.reason


def test_loop_detection_records_a_result_under_the_arguments_that_ran() -> None:
    from policyctl.runtime.loopdetect import params_hash

    async def rewrite(event: ToolCallEvent) -> RewriteParams:
        return RewriteParams({"path": "b"})

    calls: list[Any] = []
    plain = gate_for([make(calls)])
    rewritten = gate_for([make(calls)], hooks=[rewrite])
    asyncio.run(plain.call("read_file", {"path": "a"}))
    asyncio.run(rewritten.call("read_file", {"path": "a"}))
    assert calls == [("read_file", {"path": "a"}), ("read_file", {"path": "b"})]
    # counted as the call the model made, its result recorded as the call that ran
    assert list(plain.loop.counts) == [("read_file", params_hash({"path": "a"}))]
    assert list(plain.loop.last_results) == [("read_file", params_hash({"path": "a"}))]
    assert list(rewritten.loop.counts) == [("read_file", params_hash({"path": "a"}))]
    assert list(rewritten.loop.last_results) == [("read_file", params_hash({"path": "b"}))]
