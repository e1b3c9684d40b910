"""The per-call gate: is the tool in the run's resolved set, plus loop-detection bookkeeping.

    python bench/bench_gate.py

Times `CallGate.check` (the synchronous part every call pays before hooks and execution) on
the benchmark scenario's resolution, with small realistic parameter objects.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_resolve import DEFAULT_SCENARIO, scenario_context

from policyctl import load_policy, resolve
from policyctl.runtime import CallGate, RuntimeTool, ToolRegistry


async def _noop(**_: object) -> None:
    return None


def main() -> None:
    import json

    spec = json.loads(DEFAULT_SCENARIO.read_text(encoding="utf-8"))
    policy = load_policy(DEFAULT_SCENARIO.parent / spec["policy"])
    names = [t.id for t in policy.catalog.tools]
    registry = ToolRegistry([RuntimeTool(n, n, {"type": "object"}, _noop) for n in names])
    res = resolve(policy, scenario_context(spec), registry.inventory(policy.catalog))
    gate = CallGate(res, registry)
    allowed = list(res.allowed)
    calls = [
        (allowed[i % len(allowed)], {"path": f"src/module_{i}.py", "limit": 200})
        for i in range(200_000)
    ]
    for name, params in calls[:20_000]:
        gate.check(name, params)
    times = []
    for name, params in calls[20_000:]:
        t = time.perf_counter_ns()
        gate.check(name, params)
        times.append(time.perf_counter_ns() - t)
    times.sort()
    median = statistics.median(times) / 1000
    p99 = times[round(0.99 * (len(times) - 1))] / 1000
    mark = "✓" if median <= 3 else "✗ missed"
    print("| case | median µs | p99 µs | target |")
    print("|---|---|---|---|")
    label = "per-call gate (resolved-set check + loop detection)"
    print(f"| {label} | {median:.2f} | {p99:.2f} | ≤ 3 {mark} |")


if __name__ == "__main__":
    main()
