"""One tool call through the runtime's real call path, on the scenario's resolution.

    python bench/bench_gate.py [--quick] [--case NAME ...] [--count N] [--no-profile]

Times `await Runtime.gate(resolution).call(name, arguments)`: the path every model tool call
takes in `run_loop` (registry lookup and argument preparation from a JSON string with a
string-to-integer cast, loop detection, one policy hook, execution of a no-op tool; no
observer, which the target does not include). Calls rotate over the allowed tools with varied
arguments, as a real run makes them, so loop detection never vetoes. Each call is asserted
to have run.

Four cases, each named for what it varies from the first:
- `plain`: the scenario's policy (no call rules at all), a hook that answers at once (an
  `async def` that never awaits, as a policy check is);
- `awaiting-hook`: the same, with a hook that awaits once (`asyncio.sleep(0)`, as a hook that
  asks a service does): its answer comes on a later turn of the event loop, so the hook's
  timeout is armed and cancelled on every call;
- `unruled`: the same policy with three path call rules on `read` (`read(./secrets/)`,
  `read(**/.env)`, `read(~/.ssh/)`), calling every allowed tool without call rules (all but
  `read` and `exec`, whose redirections are decided as reads: the gate's per-tool check,
  nothing more);
- `ruled`: that policy, calling `read` itself with workspace paths (the decision on a path
  rule, per call).

`--case` runs only the named cases, `--count` sets the calls per case, `--no-profile` skips
the profile of a missed target (for counting instructions: run `perf stat -e instructions`
at two counts and divide the difference by the difference of the counts).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from dataclasses import replace
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


PATH_RULES = ["read(./secrets/)", "read(**/.env)", "read(~/.ssh/)"]
CASES = {
    "plain": "one tool call through the gate (arguments, loop detection, hook, no-op tool)",
    "awaiting-hook": "one tool call through the gate, a hook that awaits once",
    "unruled": "one tool call through the gate, tool without call rules (policy has some)",
    "ruled": "one tool call through the gate, tool with call rules (path rule)",
}
TARGETS = {"plain": 15.0, "awaiting-hook": None, "unruled": 15.0, "ruled": None}


def _policy_with_path_rules(sc: Scenario, folder: Path) -> Path:
    document = json.loads(json.dumps(sc.document))
    document["tools"]["deny"] = [*document["tools"].get("deny", []), *PATH_RULES]
    path = folder / "policy-with-call-rules.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def setup(count: int, case: str = "plain") -> tuple[CallGate, list[tuple[str, str]], list[int]]:
    sc = Scenario()
    folder = Path(tempfile.mkdtemp(prefix="bench-gate-"))
    (folder / "src").mkdir()
    ruled_policy = case in ("unruled", "ruled")
    policy = load_policy(_policy_with_path_rules(sc, folder) if ruled_policy else sc.policy_path)
    ran = [0]

    async def noop(**_: Any) -> str:
        ran[0] += 1
        return "ok"

    async def hook(_event: ToolCallEvent) -> None:
        return None

    async def awaiting_hook(_event: ToolCallEvent) -> None:
        await asyncio.sleep(0)

    registry = ToolRegistry([RuntimeTool(n, n, SCHEMA, noop) for n in sc.core])
    hooks = [awaiting_hook if case == "awaiting-hook" else hook]
    runtime = Runtime(policy, registry, ScriptedProvider([]), hooks=hooks)
    ctx = replace(sc.context(), workspace=str(folder), home=str(folder))
    resolution = runtime.resolve(ctx)
    expected = sc.expected(sc.context(), [t for t in registry.inventory(policy.catalog).tools])
    assert resolution.allowed == expected
    gate = runtime.gate(resolution)
    allowed = list(resolution.allowed)
    if ruled_policy:
        assert resolution.has_call_rules("read"), "the path rules reach the run"
        # exec is not "without call rules": its redirections are decided as reads and writes
        unruled = [t for t in allowed if not resolution.has_call_rules(t)]
        allowed = ["read"] if case == "ruled" else unruled
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
    parser.add_argument("--case", action="append", choices=list(CASES))
    parser.add_argument("--count", type=int)
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args()
    count = args.count or (5_000 if args.quick else 50_000)
    print("| case | median µs | p99 µs | target |")
    print("|---|---|---|---|")
    missed: list[str] = []
    for case, label in CASES.items():
        if args.case and case not in args.case:
            continue
        gate, calls, ran = setup(count, case)
        times = asyncio.run(measure(gate, calls))[count // 10 :]
        assert ran[0] == count, "every call ran its tool"
        median, p99 = percentiles(times)
        target = TARGETS[case]
        print(f"| {label} | {median:.2f} | {p99:.2f} | {mark(median, target)} |")
        if target is not None and median > target:
            missed.append(case)
    for case in [] if args.no_profile else missed:
        gate, calls, _ = setup(2200, case)
        asyncio.run(measure(gate, calls[:200]))  # the first calls import the call-rule core
        calls = calls[200:]
        where = profile_of(lambda g=gate, c=calls: asyncio.run(measure(g, c)), 1, top=5)
        print(f"\nProfile of the missed target ({case}, share of the calls' time): {where}")


if __name__ == "__main__":
    main()
