"""Resolve latency on the shared benchmark scenario (every layer applies), against a baseline.

    python bench/bench_resolve.py [--scenario ../shared/bench/scenario.json] [--quick]

Cases, for N = 0, 200, 2000 MCP tools beside the catalog's core tools:
- cached: the same context again;
- new context: a context not seen before (a new sender) over an inventory already seen;
- cold: a new inventory (a first resolve against it).
Medians and p99 in microseconds, from time.perf_counter_ns after a warm-up; the baseline
(bench/baseline.py) is timed in the same run on new contexts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import baseline_resolve

from policyctl import Capture, RunContext, Sender, load_policy, resolve
from policyctl.inventory import Inventory, Tool
from policyctl.loader import load_document

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SCENARIO = ROOT.parent / "shared" / "bench" / "scenario.json"


def percentiles(ns: list[int]) -> tuple[float, float]:
    ordered = sorted(ns)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered) / 1000, p99 / 1000


def scenario_context(spec: dict[str, Any], sender_id: str | None = None) -> RunContext:
    c = spec["context"]
    s = c["sender"]
    return RunContext(
        agent=c["agent"],
        provider=c["provider"],
        model=c["model"],
        channel=c["channel"],
        group=c["group"],
        session_key=c["sessionKey"],
        spawned_by=c["spawnedBy"],
        subagent_depth=c["subagentDepth"],
        sender=Sender(id=sender_id or s["id"], name=s["name"], username=s["username"]),
        # the parent capture: an unrestricted parent that itself lost code_execution
        parent=Capture(None, ("code_execution",)),
    )


def tools_for(catalog_ids: list[str], n: int, salt: str = "") -> list[Tool]:
    return [
        *(Tool(t) for t in catalog_ids),
        *(Tool(f"srv{i // 10}__tool{i % 10}{salt}", "bundle-mcp") for i in range(n)),
    ]


def run(scenario_path: Path, quick: bool) -> list[dict[str, Any]]:
    spec = json.loads(scenario_path.read_text(encoding="utf-8"))
    policy_path = scenario_path.parent / spec["policy"]
    policy = load_policy(policy_path)
    doc = load_document(policy_path).data
    ids = [t.id for t in policy.catalog.tools]
    iterations = 2000 if quick else 20000
    rows = []
    for n in spec["inventory"]["mcp"]["N"]:
        inv = Inventory.build(tools_for(ids, n), policy.catalog)
        pairs = [(t.name, t.plugin_id) for t in inv.tools]
        # correctness first: the baseline and policyctl agree on the scenario
        for sender in ("987654321", "111111111", "42"):
            ctx = scenario_context(spec, sender)
            expected = baseline_resolve(doc, policy.catalog, ctx, pairs)
            got = list(resolve(policy, ctx, inv).allowed)
            assert got == expected, f"N={n} sender={sender}: {got} != {expected}"
        # cached: the same context object again
        ctx = scenario_context(spec)
        for _ in range(1000):
            resolve(policy, ctx, inv)
        cached = []
        for _ in range(iterations):
            t = time.perf_counter_ns()
            resolve(policy, ctx, inv)
            cached.append(time.perf_counter_ns() - t)
        # new context: a sender not seen before, same inventory
        contexts = [scenario_context(spec, f"sender-{i}") for i in range(iterations + 500)]
        for c in contexts[:500]:
            resolve(policy, c, inv)
        fresh = []
        for c in contexts[500:]:
            t = time.perf_counter_ns()
            resolve(policy, c, inv)
            fresh.append(time.perf_counter_ns() - t)
        # cold: a new inventory each time (built from tool records, as a runtime would)
        cold = []
        for i in range(20 if quick else 100):
            tools = tools_for(ids, n, salt=f"x{i}")
            c = scenario_context(spec, f"cold-{i}")
            t = time.perf_counter_ns()
            resolve(policy, c, tools)
            cold.append(time.perf_counter_ns() - t)
        # baseline: new contexts, same inventory
        base: list[int] = []
        deadline = time.perf_counter() + (5 if quick else 20)  # the baseline is quadratic in N
        while len(base) < 100 and (len(base) < 3 or time.perf_counter() < deadline):
            c = scenario_context(spec, f"base-{len(base)}")
            t = time.perf_counter_ns()
            baseline_resolve(doc, policy.catalog, c, pairs)
            base.append(time.perf_counter_ns() - t)
        rows.append(
            {
                "N": n,
                "cached": percentiles(cached),
                "new": percentiles(fresh),
                "cold": percentiles(cold),
                "baseline": percentiles(base),
                "baseline_runs": len(base),
            }
        )
    return rows


TARGETS = {
    ("cached", 0): 1.5,
    ("cached", 200): 1.5,
    ("cached", 2000): 1.5,
    ("new", 200): 15.0,
    ("new", 2000): 60.0,
    ("cold", 200): 1000.0,
}


def render(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| N | case | median µs | p99 µs | baseline median µs | speed-up | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        base_median = row["baseline"][0]
        for case in ("cached", "new", "cold"):
            median, p99 = row[case]
            target = TARGETS.get((case, row["N"]))
            mark = (
                "" if target is None else f"≤ {target:g} {'✓' if median <= target else '✗ missed'}"
            )
            lines.append(
                f"| {row['N']} | {case} | {median:.2f} | {p99:.2f} | {base_median:.0f} | "
                f"{base_median / median:.0f}× | {mark} |"
            )
    ratio = next(r["baseline"][0] / r["new"][0] for r in rows if r["N"] == 200)
    lines.append("")
    lines.append(f"New-context speed-up over the baseline at N = 200: {ratio:.0f}× (target ≥ 20×).")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", type=Path, default=DEFAULT_SCENARIO)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(render(run(args.scenario, args.quick)))


if __name__ == "__main__":
    main()
