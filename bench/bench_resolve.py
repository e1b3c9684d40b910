"""Resolve latency on the shared scenario, one row per thing that varies between resolves.

    python bench/bench_resolve.py [--quick]

The scenario (shared/bench/scenario.json): a sandboxed leaf subagent of agent "coder",
spawned from a Telegram group session, on openai/gpt-5.4, with N = 0, 200, 2000 MCP tools
after the 32 core tools of openclaw-2026.4. Layers 2, 6 and 8 have no policy for it and skip
(asserted below). Cases:

- same context again: the same context and inventory objects as the previous resolve;
- new sender, same session: a sender id never seen, same session key, same inventory;
- new subagent session key: `agent:coder:subagent:<new uuid>`, as every spawn gets;
- same tools as a new, equal list: a new list of `Tool(...)` made again with the same content
  (tools are interned, so these are the same objects), the same context;
- same tools as a new, equal Inventory object: `Inventory.build` of the same tools again (a new
  object with the same fingerprint);
- tools of a rebuilt registry (MCP reconnect): a new `ToolRegistry` of new `RuntimeTool`s with
  the same content, resolved through `registry.inventory(catalog)` as the runtime does;
- first resolve after load_policy: a freshly loaded policy's first resolve (process start,
  hot reload); the load itself is not timed;
- new inventory of new tool names: an inventory never seen (the MCP tool names change).

Every case checks its answer against the executable specification (tests/reference/).
Medians and p99 in µs from time.perf_counter_ns. A missed target is followed by the profile
(cProfile over the same case) of the policyctl functions it spends its time in.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SIZES, Scenario, mark, percentiles, profile_of

from policyctl import CompiledPolicy, Inventory, RunContext, Tool, load_policy, resolve
from policyctl.runtime.mcp import as_mcp_tool
from policyctl.runtime.registry import ToolRegistry
from policyctl.runtime.tools import RuntimeTool

TARGETS_US: dict[tuple[str, int], float] = {
    **{("same context again", n): 1.0 for n in SIZES},
    **{("new sender, same session", n): 10.0 for n in SIZES},
    **{("new subagent session key", n): 15.0 for n in SIZES},
    ("same tools as a new, equal list", 2000): 20.0,
    ("first resolve after load_policy", 0): 150.0,
    ("first resolve after load_policy", 2000): 1500.0,
}


def _timed(calls: list[Callable[[], Any]]) -> tuple[list[int], Any]:
    times = []
    last = None
    for call in calls:
        t = time.perf_counter_ns()
        last = call()
        times.append(time.perf_counter_ns() - t)
    return times, last


def _check(case: str, n: int, got: Any, expected: tuple[str, ...]) -> None:
    assert got.allowed == expected, f"{case} at N={n}: {got.allowed} != {expected}"


async def _noop(**_: object) -> str:
    return ""


def _registry(tools: list[Tool]) -> ToolRegistry:
    """A registry as a runtime builds it after connecting: new RuntimeTool objects."""
    schema = {"type": "object", "properties": {}}

    def made(t: Tool) -> RuntimeTool:
        if t.is_mcp:  # MCP tools as a host's own MCP client bridges them
            return as_mcp_tool(RuntimeTool(t.name, "", schema, _noop))
        return RuntimeTool(t.name, "", schema, _noop, plugin_id=t.plugin_id)

    return ToolRegistry([made(t) for t in tools])


class Cases(list[tuple[str, list[int], str | None]]):
    """(case, times, profile): a missed case is profiled at once, while the caches are as the
    timed runs left them (a case profiled after the later ones ran would measure their
    evictions, not itself)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def append(self, item: tuple[str, list[int], Callable[[], object]]) -> None:  # type: ignore[override]
        case, times, again = item
        target = TARGETS_US.get((case, self.n))
        missed = target is not None and percentiles(times)[0] > target
        super().append((case, times, profile_of(again, 20) if missed else None))


def cases(sc: Scenario, policy: CompiledPolicy, n: int, quick: bool) -> Cases:
    many = 2000 if quick else 20000
    few = 20 if quick else (60 if n == 2000 else 200)
    listed = sc.tools(n)
    tools = Inventory.build(listed, policy.catalog)  # one inventory object, as a runtime keeps
    ctx = sc.context()
    expected = sc.expected(ctx, listed)
    skipped = [layer.stage for layer in resolve(policy, ctx, tools).layers if not layer.applied]
    assert skipped == [2, 6, 8], f"the scenario's skipped layers changed: {skipped}"
    out = Cases(n)

    for _ in range(500):
        resolve(policy, ctx, tools)
    times, last = _timed([lambda: resolve(policy, ctx, tools)] * many)
    _check("same context again", n, last, expected)
    out.append(("same context again", times, lambda: resolve(policy, ctx, tools)))

    senders = [sc.context(sender_id=f"sender-{n}-{i}") for i in range(many + 500)]
    assert sc.expected(senders[-1], listed) == expected
    for c in senders[:500]:
        resolve(policy, c, tools)
    times, last = _timed([lambda c=c: resolve(policy, c, tools) for c in senders[500:]])
    _check("new sender, same session", n, last, expected)
    extra = iter([sc.context(sender_id=f"p-{n}-{i}") for i in range(3000)])
    out.append(("new sender, same session", times, lambda: resolve(policy, next(extra), tools)))

    def spawn_key() -> RunContext:
        return sc.context(session_key=f"agent:coder:subagent:{uuid.uuid4()}")

    keys = [spawn_key() for _ in range(many + 500)]
    assert sc.expected(keys[-1], listed) == expected
    for c in keys[:500]:
        resolve(policy, c, tools)
    times, last = _timed([lambda c=c: resolve(policy, c, tools) for c in keys[500:]])
    _check("new subagent session key", n, last, expected)
    more = iter([spawn_key() for _ in range(3000)])
    out.append(("new subagent session key", times, lambda: resolve(policy, next(more), tools)))

    lists = [sc.tools(n) for _ in range(few + 10)]
    for lst in lists[:10]:
        resolve(policy, ctx, lst)
    times, last = _timed([lambda lst=lst: resolve(policy, ctx, lst) for lst in lists[10:]])
    _check("same tools as a new, equal list", n, last, expected)
    spare = iter([sc.tools(n) for _ in range(few)])
    out.append(
        ("same tools as a new, equal list", times, lambda: resolve(policy, ctx, next(spare)))
    )

    invs = [Inventory.build(listed, policy.catalog) for _ in range(few + 10)]
    for inv in invs[:10]:
        resolve(policy, ctx, inv)
    times, last = _timed([lambda inv=inv: resolve(policy, ctx, inv) for inv in invs[10:]])
    _check("same tools as a new, equal Inventory object", n, last, expected)
    more_invs = iter([Inventory.build(listed, policy.catalog) for _ in range(few)])
    out.append(
        (
            "same tools as a new, equal Inventory object",
            times,
            lambda: resolve(policy, ctx, next(more_invs)),
        )
    )

    registries = [_registry(listed) for _ in range(few + 10)]
    catalog = policy.catalog
    for reg in registries[:10]:
        resolve(policy, ctx, reg.inventory(catalog))
    times, last = _timed(
        [lambda reg=reg: resolve(policy, ctx, reg.inventory(catalog)) for reg in registries[10:]]
    )
    _check("tools of a rebuilt registry (MCP reconnect)", n, last, expected)
    more_regs = iter([_registry(listed) for _ in range(few)])
    out.append(
        (
            "tools of a rebuilt registry (MCP reconnect)",
            times,
            lambda: resolve(policy, ctx, next(more_regs).inventory(catalog)),
        )
    )

    # a process start or hot reload: a new policy, and the runtime's tools as it lists them
    loads = [load_policy(sc.policy_path) for _ in range(few if n else few * 2)]
    times, last = _timed([lambda p=p: resolve(p, ctx, listed) for p in loads])
    _check("first resolve after load_policy", n, last, expected)
    fresh = iter([load_policy(sc.policy_path) for _ in range(20)])
    out.append(
        ("first resolve after load_policy", times, lambda: resolve(next(fresh), ctx, listed))
    )

    renamed = [sc.tools(n, salt=f"x{i}") for i in range(few)]
    times, last = _timed([lambda t=t: resolve(policy, ctx, t) for t in renamed])
    assert last.allowed == sc.expected(ctx, renamed[-1])
    out.append(("new inventory of new tool names", times, lambda: None))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sc = Scenario()
    lines = ["| N | case | median µs | p99 µs | target |", "|---|---|---|---|---|"]
    notes = []
    for n in SIZES:
        policy = load_policy(sc.policy_path)
        for case, times, profile in cases(sc, policy, n, args.quick):
            median, p99 = percentiles(times)
            target = TARGETS_US.get((case, n))
            lines.append(f"| {n} | {case} | {median:.2f} | {p99:.2f} | {mark(median, target)} |")
            if target is not None and median > target:
                notes.append(f"- N = {n}, {case}: {profile}")
    print("\n".join(lines))
    if notes:
        print("\nProfiles of the missed targets (share of the case's time, cumulative):\n")
        print("\n".join(notes))


if __name__ == "__main__":
    main()
