"""The MCP gateway's cost: per `tools/call` over stdio against calling the same server
directly (side by side in one run), and `tools/list` of 2,000 upstream tools filtered.

Targets (issue 22): <= 1 ms added at the median per call; <= 20 ms for the 2,000-tool list.
Needs the `gateway` extra. Run: python bench/bench_gateway.py [--calls N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "gateway" / "recording_server.py"
POLICY = 'tools:\n  allow: ["bundle-mcp"]\n  deny: ["rec__exec(command=rm *)"]\n'


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def _timed_pairs(
    direct: StdioServerParameters, gateway: StdioServerParameters, n: int
) -> tuple[list[float], list[float]]:
    """Both sessions open at once, their calls in turn: a moment of load slows both sides
    of a pair alike, so the added time is read from the same moments."""
    a: list[float] = []
    b: list[float] = []
    async with Client(direct) as plain, Client(gateway) as through:
        for _ in range(20):  # warm-up
            await plain.call_tool("exec", {"command": "ls"})
            await through.call_tool("rec__exec", {"command": "ls"})
        for _ in range(n):
            t = time.perf_counter()
            await plain.call_tool("exec", {"command": "ls"})
            a.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            await through.call_tool("rec__exec", {"command": "ls"})
            b.append((time.perf_counter() - t) * 1000)
    return a, b


def per_call(n: int, work: Path) -> None:
    record = work / "record.jsonl"
    env = {"RECORD_FILE": str(record)}
    direct = StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=env)
    servers = {
        "mcpServers": {"rec": {"command": sys.executable, "args": [str(SERVER)], "env": env}}
    }
    (work / "servers.json").write_text(json.dumps(servers))
    (work / "policy.yaml").write_text(POLICY)
    gateway = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "policyctl",
            "gateway",
            "--policy",
            str(work / "policy.yaml"),
            "--servers",
            str(work / "servers.json"),
        ],
        env={"PYTHONPATH": str(ROOT)},
    )
    a, b = anyio.run(_timed_pairs, direct, gateway, n)
    added = statistics.median(b) - statistics.median(a)
    print(f"tools/call over stdio, {n} calls each, in turn:")
    print(f"  direct   median {statistics.median(a):.3f} ms  p99 {_pct(a, 0.99):.3f} ms")
    print(f"  gateway  median {statistics.median(b):.3f} ms  p99 {_pct(b, 0.99):.3f} ms")
    mark = "ok" if added <= 1.0 else "MISSED"
    print(f"  added at the median: {added:.3f} ms (target <= 1 ms: {mark})")
    paired = statistics.median(y - x for x, y in zip(a, b, strict=True))
    print(f"  median of the pairs' differences: {paired:.3f} ms")


def list_filtering(work: Path) -> None:
    import mcp_types as types

    from policyctl.context import RunContext
    from policyctl.integrations.gateway.decide import Exposed, visible
    from policyctl.runtime.store import PolicyStore

    policy = work / "list-policy.yaml"
    policy.write_text(
        'tools:\n  allow: ["bundle-mcp"]\n  deny: ["s3__*", "s1__tool-1*"]\n'
        '  ask: ["s2__tool-5(path=/etc/*)"]\n'
    )
    store = PolicyStore(policy)
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    tools = {}
    for i in range(2000):
        server = f"s{i % 4}"
        name = f"{server}__tool-{i}"
        listing = {"name": f"tool-{i}", "description": "a tool", "inputSchema": schema}
        tools[name] = Exposed(name, server, f"tool-{i}", listing)
    times = []
    for _ in range(30):
        t = time.perf_counter()
        shown = visible(store, RunContext(agent="coder"), tools)
        [types.Tool.model_validate({**e.listing, "name": e.name}) for e in shown]
        times.append((time.perf_counter() - t) * 1000)
    median = statistics.median(times)
    mark = "ok" if median <= 20 else "MISSED"
    print(f"tools/list of 2,000 upstream tools filtered ({len(shown)} shown):")
    print(f"  median {median:.2f} ms  p99 {_pct(times, 0.99):.2f} ms (target <= 20 ms: {mark})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory() as tmp:
        per_call(args.calls, Path(tmp))
        list_filtering(Path(tmp))
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
