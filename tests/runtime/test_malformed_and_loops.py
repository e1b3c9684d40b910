"""A model's malformed output never crashes a turn; loop detection counts every kind of call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from policyctl import RunContext, load_policy_text, resolve
from policyctl.runtime import (
    CallGate,
    LoopConfig,
    ProviderResponse,
    Runtime,
    RuntimeTool,
    ScriptedProvider,
    ToolCall,
    ToolRegistry,
    run_loop,
)
from policyctl.runtime.providers import ProviderError, parse_chat_completion

PARAMS = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def counting_tool(calls: list[dict[str, Any]], name: str = "read_file") -> RuntimeTool:
    async def run(**params: Any) -> str:
        calls.append(params)
        return "ran"

    return RuntimeTool(name, name, PARAMS, run)


def gate_for(tools: list[RuntimeTool], **kw: Any) -> CallGate:
    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry(tools)
    return CallGate(resolve(policy, None, registry.inventory(policy.catalog)), registry, **kw)


def body(*calls: Any) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": list(calls)}}]
    }


def test_null_name_and_missing_function_are_parsed_not_raised() -> None:
    parsed = parse_chat_completion(
        body(
            {"id": "a", "function": {"name": None, "arguments": "{}"}},
            {"id": "b", "type": "function"},
            "not an object",
            {"id": "d", "function": {"name": "read_file", "arguments": 42}},
            {"function": {"name": "read_file", "arguments": '{"n": 1}'}},
        )
    )
    assert [c.error for c in parsed.tool_calls] == [
        "the tool call has no tool name",
        "the tool call has no function",
        "a tool call must be an object",
        "the arguments must be a JSON object",
        None,
    ]
    assert parsed.tool_calls[4].id == "call_4"
    with pytest.raises(ProviderError):
        parse_chat_completion({"choices": []})
    with pytest.raises(ProviderError):
        parse_chat_completion(["not", "a", "body"])


def test_malformed_calls_become_tool_errors_the_model_reads() -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_for([counting_tool(calls)])
    script = [
        parse_chat_completion(
            body(
                {"id": "a", "function": {"name": None}},
                {"id": "b"},
                {"id": "c", "function": {"name": "read_file", "arguments": '{"n": 1}'}},
            )
        ),
        ProviderResponse(content="done"),
    ]
    result = asyncio.run(run_loop(ScriptedProvider(script), gate, []))
    tool_messages = [m for m in result.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["a", "b", "c"]
    assert "malformed tool call: the tool call has no tool name" in tool_messages[0]["content"]
    assert "the tool call has no function" in tool_messages[1]["content"]
    assert calls == [{"n": 1}] and result.final_text == "done"


def test_a_null_name_given_straight_to_the_gate_is_an_error_not_a_crash() -> None:
    gate = gate_for([counting_tool([])])
    out = asyncio.run(gate.call(None, {}))  # type: ignore[arg-type]
    assert not out.ok and "no tool name" in out.content()


def test_repeated_malformed_calls_are_vetoed_by_loop_detection() -> None:
    gate = gate_for([counting_tool([])], loop_config=LoopConfig(warning=2, critical=3))
    outs = [asyncio.run(gate.malformed(None, "the tool call has no function")) for _ in range(3)]
    assert outs[1].warnings and outs[2].veto is not None and outs[2].veto.kind == "loop"


def test_invalid_arguments_are_counted_and_vetoed() -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_for([counting_tool(calls)], loop_config=LoopConfig(warning=3, critical=5))
    outs = [asyncio.run(gate.call("read_file", {"n": "many"})) for _ in range(5)]
    assert "invalid arguments" in outs[0].content()
    assert "loop detected (warning)" in outs[2].content()
    assert outs[4].veto is not None and outs[4].veto.kind == "loop"
    assert calls == []


def test_unknown_tool_verdict_is_honoured() -> None:
    gate = gate_for([counting_tool([])], loop_config=LoopConfig(warning=2, critical=4))
    outs = [asyncio.run(gate.call("teleport", {})) for _ in range(4)]
    assert outs[0].veto is not None and outs[0].veto.kind == "policy"
    assert "loop detected (warning)" in outs[1].content()
    assert outs[3].veto is not None and outs[3].veto.kind == "loop"
    assert outs[3].veto.detail["detector"] == "unknown-tool"


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"history": 0}, "history"),
        ({"warning": -1}, "warning"),
        ({"critical": 0}, "critical"),
        ({"breaker": 0}, "breaker"),
        ({"warning": 5, "critical": 4}, "warning"),
        ({"history": 1.5}, "history"),
        ({"history": True}, "history"),
    ],
)
def test_loop_config_is_validated(kw: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=f"LoopConfig.{field}"):
        LoopConfig(**kw)


def test_a_history_as_short_as_the_critical_threshold_works() -> None:
    gate = gate_for([counting_tool([])], loop_config=LoopConfig(history=2, warning=1, critical=2))
    assert asyncio.run(gate.call("read_file", {"n": 1})).warnings


def test_loop_detector_is_per_session_across_turns() -> None:
    calls: list[dict[str, Any]] = []
    policy = load_policy_text("catalog: nanobot\n")
    call = ProviderResponse(tool_calls=(ToolCall("x", "read_file", {"n": 1}),))
    script = [call, ProviderResponse(content="ok")] * 3
    runtime = Runtime(
        policy,
        ToolRegistry([counting_tool(calls)]),
        ScriptedProvider(script),
        loop_config=LoopConfig(warning=2, critical=3),
    )
    ctx = RunContext(session_key="agent:main:main")
    results = [asyncio.run(runtime.run_turn(ctx, "go")) for _ in range(3)]
    assert [r.outcomes[0].ok for r in results] == [True, True, False]
    assert results[2].outcomes[0].veto is not None
    # another session starts fresh
    other = Runtime(
        policy,
        ToolRegistry([counting_tool(calls)]),
        ScriptedProvider([call, ProviderResponse(content="ok")]),
        loop_config=LoopConfig(warning=2, critical=3),
    )
    assert runtime.loop_detector("agent:main:main") is runtime.loop_detector("agent:main:main")
    assert (
        asyncio.run(other.run_turn(RunContext(session_key="agent:main:other"), "go")).outcomes[0].ok
    )


def test_a_huge_tool_name_is_not_echoed_back() -> None:
    out = asyncio.run(gate_for([counting_tool([])]).call("x" * 1_000_000, {}))
    assert len(out.content()) < 1_000 and "longer than 256 characters" in out.content()


def test_only_one_arguments_wrapper_is_unwrapped() -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_for([counting_tool(calls)])
    assert asyncio.run(gate.call("read_file", {"arguments": {"n": 1}})).ok
    nested = asyncio.run(gate.call("read_file", {"arguments": {"arguments": {"n": 1}}}))
    assert not nested.ok and calls == [{"n": 1}]


def test_nan_arguments_are_never_sent_back_as_invalid_json() -> None:
    message = ProviderResponse(
        tool_calls=(ToolCall("a", "read_file", {"n": float("nan")}),)
    ).message()
    import json

    json.loads(message["tool_calls"][0]["function"]["arguments"], parse_constant=lambda c: 1 / 0)


def test_a_plain_answer_has_no_tool_calls() -> None:
    plain = {"choices": [{"message": {"role": "assistant", "content": "hi"}}]}
    assert parse_chat_completion(plain).tool_calls == ()
    assert parse_chat_completion(body()).tool_calls == ()


def test_a_failing_argument_check_refuses_the_call_and_keeps_the_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from policyctl.runtime import registry as registry_module

    def broken(*_: Any, **__: Any) -> Any:
        raise OverflowError("a checker bug")

    monkeypatch.setattr(registry_module, "coerce_arguments", broken)
    calls: list[dict[str, Any]] = []
    out = asyncio.run(gate_for([counting_tool(calls)]).call("read_file", {"n": 1}))
    assert not out.ok and "could not be checked" in out.content() and calls == []


def test_session_detectors_are_bounded_and_keyless_runs_get_their_own() -> None:
    runtime = Runtime(
        load_policy_text("catalog: nanobot\n"), ToolRegistry([]), ScriptedProvider([]), sessions=2
    )
    a = runtime.loop_detector("agent:main:a")
    runtime.loop_detector("agent:main:b")
    assert runtime.loop_detector("agent:main:a") is a  # a is now the most recent
    runtime.loop_detector("agent:main:c")  # evicts b, the least recently active
    assert runtime.loop_detector("agent:main:a") is a
    assert len(runtime._loops) == 2 and "agent:main:b" not in runtime._loops
    assert runtime.loop_detector(None) is not runtime.loop_detector(None)
