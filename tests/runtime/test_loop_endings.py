"""How a turn ends: a final tool-free answer when the budget is spent, one retry on an empty
answer, continuation on finish_reason "length", and a provider failure reported, not raised."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from policyctl import load_policy_text, resolve
from policyctl.runtime import (
    CallGate,
    ProviderResponse,
    RuntimeTool,
    ScriptedProvider,
    ToolCall,
    ToolRegistry,
    run_loop,
)
from policyctl.runtime.providers import ProviderError


def gate_for(ran: list[str]) -> CallGate:
    async def run(**_: Any) -> str:
        ran.append("read_file")
        return "data"

    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry([RuntimeTool("read_file", "r", {"type": "object"}, run)])
    return CallGate(resolve(policy, None, registry.inventory(policy.catalog)), registry)


def call(i: int) -> ProviderResponse:
    return ProviderResponse(tool_calls=(ToolCall(str(i), "read_file", {"i": i}),))


def test_spent_budget_asks_for_a_final_answer_without_tools() -> None:
    ran: list[str] = []
    script = [
        call(1),
        call(2),
        ProviderResponse(content="summary so far", tool_calls=call(3).tool_calls),
    ]
    provider = ScriptedProvider(script)
    result = asyncio.run(run_loop(provider, gate_for(ran), [], max_iterations=2))
    assert result.stopped == "budget" and ran == ["read_file"] * 2
    last_messages, last_tools = provider.requests[-1]
    assert last_tools == [] and "budget" in last_messages[-1]["content"]
    assert result.final_text == "summary so far"
    assert "tool_calls" not in result.messages[-1]  # the calls it still asked for never ran


def test_an_empty_answer_is_asked_for_again_once() -> None:
    provider = ScriptedProvider([ProviderResponse(content=""), ProviderResponse(content="hi")])
    result = asyncio.run(run_loop(provider, gate_for([]), []))
    assert result.final_text == "hi" and result.stopped == "done" and len(provider.requests) == 2
    twice = ScriptedProvider([ProviderResponse(content=None), ProviderResponse(content=" ")])
    result = asyncio.run(run_loop(twice, gate_for([]), []))
    assert result.stopped == "empty" and len(twice.requests) == 2


def test_length_is_continued_and_the_parts_joined() -> None:
    provider = ScriptedProvider(
        [
            ProviderResponse(content="The answer is ", finish_reason="length"),
            ProviderResponse(content="forty", finish_reason="length"),
            ProviderResponse(content="-two.", finish_reason="stop"),
        ]
    )
    result = asyncio.run(run_loop(provider, gate_for([]), []))
    assert result.final_text == "The answer is forty-two." and len(provider.requests) == 3


def test_continuations_are_bounded() -> None:
    provider = ScriptedProvider([ProviderResponse(content="x", finish_reason="length")] * 10)
    result = asyncio.run(run_loop(provider, gate_for([]), [], max_continuations=2))
    assert result.final_text == "xxx" and len(provider.requests) == 3


class Failing:
    async def complete(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> ProviderResponse:
        raise ProviderError("http://model/v1/chat/completions: HTTP 503 (after 3 attempts)")


def test_a_provider_failure_ends_the_turn_with_a_reason() -> None:
    result = asyncio.run(run_loop(Failing(), gate_for([]), []))
    assert result.stopped.startswith("provider: ") and "HTTP 503" in result.stopped
