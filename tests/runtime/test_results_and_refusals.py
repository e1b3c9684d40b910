"""What goes back to the model: results capped for every tool, refusals at the chosen detail."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from policyctl import RunContext, load_policy_text, resolve
from policyctl.runtime import (
    CallGate,
    ProviderResponse,
    Runtime,
    RuntimeTool,
    ScriptedProvider,
    ToolCall,
    ToolRegistry,
)
from policyctl.runtime.gate import RESULT_LIMIT
from policyctl.runtime.mcp import as_mcp_tool

POLICY = "catalog: nanobot\ntools:\n  deny: [exec]\n"


def returning(value: Any, name: str = "read_file", plugin: str | None = None) -> RuntimeTool:
    async def run(**_: Any) -> Any:
        return value

    made = RuntimeTool(name, name, {"type": "object"}, run)
    return as_mcp_tool(made) if plugin == "bundle-mcp" else made


def gate_for(tools: list[RuntimeTool], **kw: Any) -> CallGate:
    policy = load_policy_text(POLICY, "/srv/bot/policy.yaml")
    registry = ToolRegistry(tools)
    return CallGate(resolve(policy, None, registry.inventory(policy.catalog)), registry, **kw)


@pytest.mark.parametrize("plugin", [None, "bundle-mcp"])
def test_every_tool_result_is_capped_keeping_head_and_tail(plugin: str | None) -> None:
    big = "HEAD" + "x" * 100_000 + "TAIL"
    name = "read_file" if plugin is None else "srv__dump"
    out = asyncio.run(gate_for([returning(big, name, plugin)]).call(name, {}))
    text = out.content()
    assert text.startswith("HEAD") and text.endswith("TAIL")
    assert len(text) < RESULT_LIMIT + 100 and "characters cut" in text
    assert out.result == big  # observers and callers keep the whole value


def test_result_limit_is_configurable_and_applies_to_structured_results() -> None:
    out = asyncio.run(
        gate_for([returning({"rows": list(range(10_000))})], result_limit=500).call("read_file", {})
    )
    assert len(out.content()) < 600 and "characters cut" in out.content()


@pytest.mark.parametrize("empty", ["", "   \n", None])
def test_an_empty_result_reads_no_output(empty: Any) -> None:
    out = asyncio.run(gate_for([returning(empty)]).call("read_file", {}))
    assert out.content() == "(no output)"


def test_a_nan_in_a_result_does_not_break_the_message() -> None:
    out = asyncio.run(gate_for([returning({"x": float("nan")})]).call("read_file", {}))
    assert "nan" in out.content()


def exec_tool() -> RuntimeTool:
    return returning("never", "exec")


def refusal(detail: str | None) -> dict[str, Any]:
    kw = {} if detail is None else {"refusal_detail": detail}
    out = asyncio.run(gate_for([returning("ok"), exec_tool()], **kw).call("exec", {}))
    assert out.veto is not None
    return json.loads(out.content())  # type: ignore[no-any-return]


def test_default_refusal_names_the_layer_and_the_tool_without_paths() -> None:
    body = refusal(None)
    # a deny removal is labelled with the deny key
    assert body["tool"] == "exec" and body["removedBy"] == {"stage": 3, "label": "tools.deny"}
    text = json.dumps(body)
    assert "/srv/bot" not in text and "policy.yaml" not in text and "fix" not in body
    assert (
        body["reason"]
        == 'tool "exec" is not available in this run: removed at layer 3 (tools.deny)'
    )


def test_minimal_refusal_says_only_not_available() -> None:
    body = refusal("minimal")
    assert body["reason"] == 'tool "exec" is not available in this run'
    assert "removedBy" not in body and "layer" not in json.dumps(body)


def test_full_refusal_carries_source_and_fix() -> None:
    body = refusal("full")
    assert "/srv/bot/policy.yaml" in body["removedBy"]["source"]
    assert body["removedBy"]["entry"] == "exec" and body["fix"]


def test_full_provenance_goes_to_log_and_observers_whatever_the_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[Any] = []

    async def observer(event: Any, outcome: Any) -> None:
        seen.append(outcome)

    gate = gate_for([returning("ok"), exec_tool()], refusal_detail="minimal", observers=[observer])
    with caplog.at_level(logging.INFO, "policyctl.runtime"):
        asyncio.run(gate.call("exec", {}))
    assert "/srv/bot/policy.yaml" in caplog.text
    (outcome,) = seen
    assert outcome.veto.provenance["removedBy"]["source"]["file"].endswith("policy.yaml")
    assert outcome.veto.provenance["fix"]


def test_runtime_passes_refusal_detail_to_the_gate() -> None:
    policy = load_policy_text(POLICY, "/srv/bot/policy.yaml")
    script = [
        ProviderResponse(tool_calls=(ToolCall("1", "exec", {}),)),
        ProviderResponse(content="ok"),
    ]
    runtime = Runtime(
        policy, ToolRegistry([returning("ok"), exec_tool()]), ScriptedProvider(script)
    )
    result = asyncio.run(runtime.run_turn(RunContext(), "go"))
    tool_message = next(m for m in result.messages if m["role"] == "tool")
    assert "/srv/bot" not in tool_message["content"] and '"stage": 3' in tool_message["content"]
    with pytest.raises(ValueError, match="refusal_detail"):
        Runtime(policy, ToolRegistry([]), ScriptedProvider([]), refusal_detail="all")  # type: ignore[arg-type]
    for bad in (
        {"hook_timeout": float("nan")},
        {"approval_timeout": -1},
        {"max_iterations": 0},
        {"max_continuations": "3"},
        {"sessions": 0},
        {"tool_timeout": float("inf")},
    ):
        with pytest.raises(ValueError):
            Runtime(policy, ToolRegistry([]), ScriptedProvider([]), **bad)  # type: ignore[arg-type]


def test_runtime_defaults_are_the_documented_ones() -> None:
    runtime = Runtime(load_policy_text(POLICY), ToolRegistry([]), ScriptedProvider([]))
    assert runtime.gate_options == {
        "refusal_detail": "layer",
        "result_limit": 20_000,
        "hook_timeout": 10.0,
        "approval_timeout": 300.0,
        "tool_timeout": None,
    }
    assert (runtime.max_iterations, runtime.max_continuations) == (20, 3)


class _StrRaises:
    def __str__(self) -> str:
        raise RuntimeError("no text")

    __repr__ = __str__


def _cycle() -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["self"] = d
    return d


@pytest.mark.parametrize(
    "make_value", [_cycle, lambda: {"x": _StrRaises()}, lambda: [_StrRaises()]]
)
def test_a_result_with_no_text_is_a_tool_error_the_turn_goes_on_and_observers_see_it(
    make_value: Any,
) -> None:
    seen: list[Any] = []
    value = make_value()
    provider = ScriptedProvider(
        [
            ProviderResponse(tool_calls=(ToolCall("c1", "read_file", {}),)),
            ProviderResponse(content="done"),
        ]
    )
    policy = load_policy_text(POLICY, "/srv/bot/policy.yaml")
    runtime = Runtime(
        policy,
        ToolRegistry([returning(value)]),
        provider,
        observers=[lambda event, outcome: seen.append((event.tool, outcome))],
    )
    result = asyncio.run(runtime.run_turn(RunContext(), "hi"))
    assert result.final_text == "done" and result.stopped == "done"
    ((tool, outcome),) = seen
    assert tool == "read_file" and outcome.ok is False and "cannot be shown" in outcome.content()
    tool_messages = [m for m in provider.requests[-1][0] if m.get("role") == "tool"]
    assert "cannot be shown" in tool_messages[-1]["content"]


def test_an_exception_whose_str_raises_is_still_a_tool_error() -> None:
    class Odd(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    async def run(**_: Any) -> Any:
        raise Odd

    tool = RuntimeTool("read_file", "read_file", {"type": "object"}, run)
    out = asyncio.run(gate_for([tool]).call("read_file", {}))
    assert not out.ok and "Odd" in out.content()
