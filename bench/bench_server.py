"""The decision server under load: `/v1/decide` latency and throughput, one and two replicas.

    python bench/bench_server.py [--seconds 10]

Real `policyctl serve` processes (Uvicorn) answer the team example's shell call; wrk drives
them on loopback, two replicas through the real nginx with the compose file's configuration
(tests/server/loadrig.py). Cases:

- one replica at about 500 requests/s (each wrk connection waits between requests): the
  target is p99 ≤ 5 ms at that rate;
- one replica and two replicas behind nginx, as fast as they answer (8 connections):
  throughput, p50, p99.

wrk measures the time from sending a request to its answer, so the paced case's p99 is the
latency a client sees at that rate. Needs nginx and wrk (`apt-get install nginx wrk`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "server"))

from loadrig import lua_script, nginx, replicas, wrk  # noqa: E402

POLICY = str(ROOT / "examples" / "hosts-team.yaml")
TARGET_P99_MS = 5.0
#: each connection waits 10 ms between requests: with about 1.5 ms per answer, 6 connections
#: send a little over 500 requests/s (the line prints the rate reached)
PACED_RPS, PACED_CONNECTIONS = 500, 6


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    load = os.getloadavg()
    print(
        f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        fast = lua_script(work)
        paced = lua_script(work, rate_per_connection=100)
        with replicas(POLICY, 2) as running:
            (one, _), (two, _) = running
            wrk(one + "/v1/decide", 2, 4, fast)  # warm both caches before measuring
            wrk(two + "/v1/decide", 2, 4, fast)
            rate = wrk(one + "/v1/decide", args.seconds, PACED_CONNECTIONS, paced)
            single = wrk(one + "/v1/decide", args.seconds, 8, fast)
            with nginx([one, two], work) as front:
                double = wrk(front + "/v1/decide", args.seconds, 8, fast, threads=2)
    met = rate.p99_ms <= TARGET_P99_MS
    print(rate.line(f"one replica, paced at about {PACED_RPS}/s"))
    print(
        f"  target p99 ≤ {TARGET_P99_MS:g} ms at {PACED_RPS} req/s: " + ("✓" if met else "✗ missed")
    )
    print(single.line("one replica, unpaced"))
    print(double.line("two replicas behind nginx, unpaced"))
    gain = double.rps / single.rps if single.rps else 0.0
    print(f"  two replicas / one: {gain:.2f}x throughput")
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    errors = rate.errors + single.errors + double.errors
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
