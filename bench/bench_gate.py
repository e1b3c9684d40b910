"""One tool call through the runtime's real call path, on the scenario's resolution.

    python bench/bench_gate.py [--quick]

Times `await Runtime.gate(resolution).call(name, arguments)`: the path every model tool call
takes in `run_loop` (registry lookup and argument preparation from a JSON string with a
string-to-integer cast, loop detection, one policy hook, execution of a no-op tool; no
observer, which the target does not include). Calls rotate over the allowed tools with varied
arguments, as a real run makes them, so loop detection never vetoes. Each call is asserted
to have run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Scenario, mark, percentiles, profile_of

from policyctl import load_policy
from policyctl.runtime import (
    CallGate,
    Runtime,
    RuntimeTool,
    ScriptedProvider,
    ToolCallEvent,
    ToolRegistry,
)

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"],
}


def setup(count: int) -> tuple[CallGate, list[tuple[str, str]], list[int]]:
    sc = Scenario()
    policy = load_policy(sc.policy_path)
    ran = [0]

    async def noop(**_: Any) -> str:
        ran[0] += 1
        return "ok"

    async def hook(_event: ToolCallEvent) -> None:
        return None

    registry = ToolRegistry([RuntimeTool(n, n, SCHEMA, noop) for n in sc.core])
    runtime = Runtime(policy, registry, ScriptedProvider([]), hooks=[hook])
    resolution = runtime.resolve(sc.context())
    expected = sc.expected(sc.context(), [t for t in registry.inventory(policy.catalog).tools])
    assert resolution.allowed == expected
    gate = runtime.gate(resolution)
    allowed = list(resolution.allowed)
    calls = [
        (allowed[i % len(allowed)], json.dumps({"path": f"src/module_{i}.py", "limit": "200"}))
        for i in range(count)
    ]
    return gate, calls, ran


async def measure(gate: CallGate, calls: list[tuple[str, str]]) -> list[int]:
    times = []
    for name, arguments in calls:
        t = time.perf_counter_ns()
        outcome = await gate.call(name, arguments)
        times.append(time.perf_counter_ns() - t)
        assert outcome.ok, outcome
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    count = 5_000 if args.quick else 50_000
    gate, calls, ran = setup(count)
    times = asyncio.run(measure(gate, calls))[count // 10 :]
    assert ran[0] == count, "every call ran its tool"
    median, p99 = percentiles(times)
    print("| case | median µs | p99 µs | target |")
    print("|---|---|---|---|")
    label = "one tool call through the gate (arguments, loop detection, hook, no-op tool)"
    print(f"| {label} | {median:.2f} | {p99:.2f} | {mark(median, 15.0)} |")
    if median > 15.0:
        gate, calls, _ = setup(2000)
        where = profile_of(lambda: asyncio.run(measure(gate, calls)), 1, top=5)
        print(f"\nProfile of the missed target (share of the calls' time, cumulative): {where}")


if __name__ == "__main__":
    main()
