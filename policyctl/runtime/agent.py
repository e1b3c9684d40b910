"""The agent loop: ask the model, run the calls it asks for through the gate, repeat.

Consecutive concurrency-safe calls (read-only, not exclusive) run together with
asyncio.gather; any other call runs alone; results go back in the order the model asked.
The loop ends when the model answers without tools, when the iteration budget is spent (the
model is then asked once more, offered no tools, for a final answer), when the loop detector's
circuit breaker opens, or when the provider fails. An empty answer is asked for again once; an
answer cut off by the token limit (`finish_reason: "length"`) is continued up to
`max_continuations` times and its parts joined.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .gate import CallGate, Outcome
from .providers import Provider, ProviderError, ProviderResponse, ToolCall

BUDGET_SPENT = (
    "The tool budget for this turn is spent. Answer now, without calling tools, with what you "
    "have found so far."
)
CONTINUE = "Your answer was cut off. Continue exactly where it stopped, without repeating."
EMPTY_AGAIN = "Your answer was empty. Answer the request."


@dataclass
class RunResult:
    messages: list[dict[str, Any]]
    outcomes: list[Outcome] = field(default_factory=list)
    iterations: int = 0
    stopped: str = "done"  # "done", "budget", "breaker", "empty", "provider: ...", "no-tools: ..."
    text: str | None = None  # the final answer, continuations joined

    @property
    def final_text(self) -> str | None:
        if self.text is not None:
            return self.text
        for message in reversed(self.messages):
            if message.get("role") == "assistant" and message.get("content"):
                return str(message["content"])
        return None


def batches(calls: Sequence[ToolCall], gate: CallGate) -> list[list[ToolCall]]:
    """Consecutive concurrency-safe calls together; every other call alone; order kept."""
    out: list[list[ToolCall]] = []
    previous_safe = False
    for call in calls:
        tool = gate.registry.get(call.name) if isinstance(call.name, str) else None
        safe = call.error is None and tool is not None and tool.concurrency_safe
        if safe and previous_safe:
            out[-1].append(call)
        else:
            out.append([call])
        previous_safe = safe
    return out


async def _run_call(gate: CallGate, call: ToolCall) -> Outcome:
    if call.error is not None:
        return await gate.malformed(call.name, call.error, call.arguments)
    return await gate.call(call.name, call.arguments)


async def _answer(
    provider: Provider,
    messages: list[dict[str, Any]],
    definitions: Sequence[dict[str, Any]],
    max_continuations: int,
) -> tuple[ProviderResponse, str | None]:
    """One model answer: an empty one asked for again once, a cut-off one continued.
    Returns the response and, when it came in parts, the joined text."""
    response = await provider.complete(messages, definitions)
    if not response.tool_calls and not (response.content or "").strip():
        messages.append(response.message())
        messages.append({"role": "user", "content": EMPTY_AGAIN})
        response = await provider.complete(messages, definitions)
    parts: list[str] = []
    while (
        response.finish_reason == "length"
        and not response.tool_calls
        and len(parts) < max_continuations
    ):
        parts.append(response.content or "")
        messages.append(response.message())
        messages.append({"role": "user", "content": CONTINUE})
        response = await provider.complete(messages, definitions)
    joined = "".join([*parts, response.content or ""]) if parts else None
    return response, joined


async def run_loop(
    provider: Provider,
    gate: CallGate,
    messages: list[dict[str, Any]],
    *,
    max_iterations: int = 20,
    max_continuations: int = 3,
) -> RunResult:
    result = RunResult(messages)
    definitions = gate.registry.definitions(gate.resolution)
    try:
        while result.iterations < max_iterations:
            result.iterations += 1
            response, joined = await _answer(provider, messages, definitions, max_continuations)
            messages.append(response.message())
            if not response.tool_calls:
                result.text = joined
                if not (joined or response.content or "").strip():
                    result.stopped = "empty"
                return result
            for batch in batches(response.tool_calls, gate):
                outcomes = await asyncio.gather(*(_run_call(gate, c) for c in batch))
                for call, outcome in zip(batch, outcomes, strict=True):
                    result.outcomes.append(outcome)
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": call.id,
                            "name": outcome.tool,
                            "content": outcome.content(),
                        }
                    )
            if gate.loop.flagged >= gate.loop.config.breaker:
                result.stopped = "breaker"
                return result
        result.stopped = "budget"
        # the budget is spent: one last answer, offered no tools, so the user is not left
        # with a dangling tool call; any calls it still asks for are not run
        messages.append({"role": "user", "content": BUDGET_SPENT})
        response, joined = await _answer(provider, messages, (), max_continuations)
        final = ProviderResponse(response.content, (), response.finish_reason)
        messages.append(final.message())
        result.text = joined
    except ProviderError as exc:
        result.stopped = f"provider: {exc}"
    return result
