"""Hooks and approvers fail closed: hung, raising or answering nonsense means the call is denied;
parameters a hook rewrites are held to the tool's schema."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from policyctl import load_policy_text, resolve
from policyctl.runtime import CallGate, RequireApproval, RewriteParams, RuntimeTool, ToolRegistry
from policyctl.runtime.hooks import ToolCallEvent

PARAMS = {
    "type": "object",
    "properties": {"n": {"type": "integer", "maximum": 10}},
    "required": ["n"],
    "additionalProperties": False,
}


def gate_for(calls: list[dict[str, Any]], **kw: Any) -> CallGate:
    async def run(**params: Any) -> str:
        calls.append(params)
        return "ran"

    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry([RuntimeTool("read_file", "read", PARAMS, run)])
    return CallGate(resolve(policy, None, registry.inventory(policy.catalog)), registry, **kw)


async def hung(*_: Any) -> Any:
    await asyncio.sleep(30)


def test_a_hung_hook_blocks_at_its_timeout(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_for(calls, hooks=[hung], hook_timeout=0.2)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, "policyctl.runtime"):
        out = asyncio.run(gate.call("read_file", {"n": 1}))
    assert time.monotonic() - started < 2
    assert out.veto is not None and out.veto.kind == "hook" and calls == []
    assert "hook hung failed for tool read_file: no answer within 0.2 s" in caplog.text


def test_a_hung_approver_denies_at_its_timeout() -> None:
    async def ask(_: ToolCallEvent) -> RequireApproval:
        return RequireApproval("careful")

    calls: list[dict[str, Any]] = []
    gate = gate_for(calls, hooks=[ask], approver=hung, approval_timeout=0.2)
    started = time.monotonic()
    out = asyncio.run(gate.call("read_file", {"n": 1}))
    assert time.monotonic() - started < 2
    assert out.veto is not None and out.veto.kind == "approval" and calls == []


@pytest.mark.parametrize("answer", ["yes", 1, object()])
def test_an_approver_answering_anything_but_true_denies(answer: Any) -> None:
    async def ask(_: ToolCallEvent) -> RequireApproval:
        return RequireApproval("careful")

    async def approver(*_: Any) -> Any:
        return answer

    calls: list[dict[str, Any]] = []
    out = asyncio.run(gate_for(calls, hooks=[ask], approver=approver).call("read_file", {"n": 1}))
    assert out.veto is not None and calls == []


@pytest.mark.parametrize("returned", [True, "allow", {"allow": True}, 0, RewriteParams(["n"])])  # type: ignore[arg-type]
def test_a_hook_returning_something_else_blocks(
    returned: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def odd(_: ToolCallEvent) -> Any:
        return returned

    calls: list[dict[str, Any]] = []
    with caplog.at_level(logging.WARNING, "policyctl.runtime"):
        out = asyncio.run(gate_for(calls, hooks=[odd]).call("read_file", {"n": 1}))
    assert out.veto is not None and out.veto.kind == "hook" and calls == []
    assert "tool read_file" in caplog.text


def test_a_raising_hook_is_logged_with_the_tool(caplog: pytest.LogCaptureFixture) -> None:
    async def broken(_: ToolCallEvent) -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.WARNING, "policyctl.runtime"):
        asyncio.run(gate_for([], hooks=[broken]).call("read_file", {"n": 1}))
    assert "hook broken failed for tool read_file: RuntimeError" in caplog.text


@pytest.mark.parametrize("rewritten", [{"n": 99}, {"n": "x"}, {"n": 1, "extra": True}, {}])
def test_rewritten_parameters_are_validated_again(rewritten: dict[str, Any]) -> None:
    async def rewrite(_: ToolCallEvent) -> RewriteParams:
        return RewriteParams(rewritten)

    calls: list[dict[str, Any]] = []
    out = asyncio.run(gate_for(calls, hooks=[rewrite]).call("read_file", {"n": 1}))
    assert out.veto is not None and out.veto.kind == "hook" and calls == []
    assert "does not take" in out.veto.reason


def test_a_valid_rewrite_is_cast_and_runs() -> None:
    async def rewrite(_: ToolCallEvent) -> RewriteParams:
        return RewriteParams({"n": "7"})

    calls: list[dict[str, Any]] = []
    out = asyncio.run(gate_for(calls, hooks=[rewrite]).call("read_file", {"n": 1}))
    assert out.ok and calls == [{"n": 7}]


def test_a_hung_observer_does_not_hang_the_turn() -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_for(calls, observers=[hung], hook_timeout=0.2)
    started = time.monotonic()
    out = asyncio.run(gate.call("read_file", {"n": 1}))
    assert out.ok and time.monotonic() - started < 2


@pytest.mark.parametrize(
    "kw",
    [
        {"hook_timeout": float("nan")},
        {"hook_timeout": 0},
        {"approval_timeout": float("inf")},
        {"refusal_detail": "everything"},
        {"result_limit": 10},
    ],
)
def test_gate_options_are_checked(kw: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        gate_for([], **kw)


def test_an_approver_changing_the_event_does_not_change_what_runs() -> None:
    async def ask(_: ToolCallEvent) -> RequireApproval:
        return RequireApproval("careful")

    async def sneaky(event: ToolCallEvent, _: str) -> bool:
        event.params["n"] = 999
        return True

    calls: list[dict[str, Any]] = []
    out = asyncio.run(gate_for(calls, hooks=[ask], approver=sneaky).call("read_file", {"n": 1}))
    assert out.ok and calls == [{"n": 1}]


def test_a_hung_tool_is_cut_off_at_tool_timeout() -> None:
    async def stuck(**_: Any) -> str:
        await asyncio.sleep(30)
        return "never"

    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry([RuntimeTool("read_file", "read", {"type": "object"}, stuck)])
    res = resolve(policy, None, registry.inventory(policy.catalog))
    started = time.monotonic()
    out = asyncio.run(CallGate(res, registry, tool_timeout=0.2).call("read_file", {}))
    assert time.monotonic() - started < 2
    assert not out.ok and "did not finish within 0.2 s" in out.content()


def test_a_tool_raising_its_own_timeout_is_reported_as_its_error() -> None:
    async def own(**_: Any) -> str:
        raise TimeoutError("upstream took too long")

    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry([RuntimeTool("read_file", "read", {"type": "object"}, own)])
    res = resolve(policy, None, registry.inventory(policy.catalog))
    out = asyncio.run(CallGate(res, registry, tool_timeout=5).call("read_file", {}))
    assert "upstream took too long" in out.content()


def test_observers_see_vetoes_too() -> None:
    seen: list[Any] = []

    async def observer(_: ToolCallEvent, outcome: Any) -> None:
        seen.append(outcome)

    async def block(_: ToolCallEvent) -> Any:
        from policyctl.runtime import Block

        return Block("not today")

    asyncio.run(gate_for([], hooks=[block], observers=[observer]).call("read_file", {"n": 1}))
    assert [o.veto.reason for o in seen] == ["not today"]
