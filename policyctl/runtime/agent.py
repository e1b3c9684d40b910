"""The agent loop: ask the model, run the calls it asks for through the gate, repeat.

Consecutive concurrency-safe calls (read-only, not exclusive) run together with
asyncio.gather; any other call runs alone; results go back in the order the model asked.
The loop ends when the model stops calling tools, when the iteration budget is spent, or when
the loop detector's circuit breaker opens.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .gate import CallGate, Outcome
from .providers import Provider, ToolCall


@dataclass
class RunResult:
    messages: list[dict[str, Any]]
    outcomes: list[Outcome] = field(default_factory=list)
    iterations: int = 0
    stopped: str = "done"  # "done", "budget", "breaker"

    @property
    def final_text(self) -> str | None:
        for message in reversed(self.messages):
            if message.get("role") == "assistant" and message.get("content"):
                return str(message["content"])
        return None


def batches(calls: Sequence[ToolCall], gate: CallGate) -> list[list[ToolCall]]:
    """Consecutive concurrency-safe calls together; every other call alone; order kept."""
    out: list[list[ToolCall]] = []
    previous_safe = False
    for call in calls:
        tool = gate.registry.get(call.name)
        safe = tool is not None and tool.concurrency_safe
        if safe and previous_safe:
            out[-1].append(call)
        else:
            out.append([call])
        previous_safe = safe
    return out


async def run_loop(
    provider: Provider, gate: CallGate, messages: list[dict[str, Any]], *, max_iterations: int = 20
) -> RunResult:
    result = RunResult(messages)
    definitions = gate.registry.definitions(gate.resolution)
    while result.iterations < max_iterations:
        result.iterations += 1
        response = await provider.complete(messages, definitions)
        messages.append(response.message())
        if not response.tool_calls:
            return result
        for batch in batches(response.tool_calls, gate):
            outcomes = await asyncio.gather(*(gate.call(c.name, c.arguments) for c in batch))
            for call, outcome in zip(batch, outcomes, strict=True):
                result.outcomes.append(outcome)
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.id,
                        "name": call.name,
                        "content": outcome.content(),
                    }
                )
        if gate.loop.flagged >= gate.loop.config.breaker:
            result.stopped = "breaker"
            return result
    result.stopped = "budget"
    return result
