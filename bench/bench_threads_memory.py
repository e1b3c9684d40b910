"""Thread safety and the memory the caches keep, on the scenario policy.

    python bench/bench_threads_memory.py threads [--seconds 10]
    python bench/bench_threads_memory.py memory [--inventories 10000]

threads: 8 threads resolve, for the given time, over 1,000 inventories (the 32 core tools and
10 MCP tools whose names differ per inventory) and 10,000 contexts (new senders and new
subagent session keys); every answer must equal the one a single thread computed on its own
policy object, and no resolve may raise. A sample of the single-thread answers is checked
against the executable specification (tests/reference/).

memory: one policy resolves against that many distinct inventories (the 32 core tools and
200 MCP tools each), none kept by the caller; what stays allocated afterwards (tracemalloc,
after a full collection) is what the caches keep. Stops early beyond 200 MB.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import threading
import time
import traceback
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Scenario

from policyctl import Inventory, RunContext, load_policy, resolve


def threads(seconds: float) -> str:
    sc = Scenario()
    catalog = load_policy(sc.policy_path).catalog
    inventories = [Inventory.build(sc.tools(10, salt=f"i{k}"), catalog) for k in range(1000)]
    contexts: list[RunContext] = [
        sc.context(sender_id=f"s{i}")
        if i % 2
        else sc.context(session_key=f"agent:coder:subagent:k{i}")
        for i in range(10_000)
    ]
    rnd = random.Random(7)
    jobs = [(rnd.randrange(1000), rnd.randrange(10_000)) for _ in range(20_000)]
    solo = load_policy(sc.policy_path)
    answers = [resolve(solo, contexts[c], inventories[i]).allowed for i, c in jobs]
    for k in range(0, len(jobs), 1000):
        i, c = jobs[k]
        assert answers[k] == sc.expected(contexts[c], list(inventories[i].tools))

    shared = load_policy(sc.policy_path)
    errors: list[str] = []
    mismatches = [0]
    done = [0]
    stop = time.perf_counter() + seconds

    def worker(offset: int) -> None:
        k = offset
        count = 0
        while time.perf_counter() < stop:
            i, c = jobs[k % len(jobs)]
            try:
                got = resolve(shared, contexts[c], inventories[i]).allowed
            except Exception as exc:  # what the benchmark looks for
                frame = traceback.extract_tb(exc.__traceback__)[-1]
                where = f"{Path(frame.filename).name}:{frame.lineno} ({frame.name})"
                shown = repr(exc) if len(repr(exc)) <= 120 else repr(exc)[:117] + "..."
                errors.append(f"{type(exc).__name__}: {shown} at {where}")
            else:
                if got != answers[k % len(jobs)]:
                    mismatches[0] += 1
            k += 7
            count += 1
        done[0] += count

    pool = [threading.Thread(target=worker, args=(n * 2500,)) for n in range(8)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    ok = not errors and not mismatches[0]
    kinds = sorted({e.split(":")[0] for e in errors})
    raised = f"\n\nFirst exception: {errors[0]}" if errors else ""
    return (
        f"| 8 threads, 1,000 inventories x 10,000 contexts, {seconds:g} s | {done[0]:,} resolves "
        f"| {len(errors)} raised {kinds if kinds else ''} | {mismatches[0]} differ from one thread "
        f"| none raise, all equal {'✓' if ok else '✗ missed'} |{raised}"
    )


def memory(count: int) -> str:
    sc = Scenario()
    policy = load_policy(sc.policy_path)
    ctx = sc.context()
    probe = sc.tools(200, salt="probe")
    assert resolve(policy, ctx, probe).allowed == sc.expected(ctx, probe)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    stopped = ""
    for k in range(count):
        resolve(policy, ctx, sc.tools(200, salt=f"m{k}"))
        if k % 500 == 499 and tracemalloc.get_traced_memory()[0] - base > 200e6:
            stopped = f" (stopped after {k + 1:,})"
            break
    gc.collect()
    kept = (tracemalloc.get_traced_memory()[0] - base) / 1e6
    where = ""
    if kept > 50 or stopped:  # the allocation sites that hold the memory: its profile
        top = tracemalloc.take_snapshot().statistics("lineno")
        ours = [st for st in top if "policyctl" in str(st.traceback[0].filename)][:4]
        sites = ", ".join(
            f"{Path(st.traceback[0].filename).name}:{st.traceback[0].lineno} {st.size / 1e6:.0f} MB"
            for st in ours
        )
        where = f"\n\nWhere it is held (tracemalloc, allocation sites): {sites}"
    tracemalloc.stop()
    ok = kept <= 50 and not stopped
    return (
        f"| {count:,} distinct inventories of 232 tools{stopped} | {kept:.1f} MB kept by caches "
        f"| ≤ 50 MB {'✓' if ok else '✗ missed'} |{where}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["threads", "memory"])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--inventories", type=int, default=10_000)
    args = parser.parse_args()
    print(threads(args.seconds) if args.what == "threads" else memory(args.inventories))


if __name__ == "__main__":
    main()
