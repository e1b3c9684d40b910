"""Wall time of whole `policyctl` processes: --version, validate and explain on the examples.

    python bench/cli_startup.py [--runs 20]

Prints a Markdown table (median and p99 in milliseconds) for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "policyctl --version": ["--version"],
    "policyctl validate examples/team.yaml": ["validate", "examples/team.yaml"],
    "policyctl validate examples/chatbot.yaml": ["validate", "examples/chatbot.yaml"],
    "policyctl explain examples/team.yaml --agent coder --tool screen": [
        "explain",
        "examples/team.yaml",
        "--agent",
        "coder",
        "--tool",
        "screen",
    ],
}
TARGETS_MS = {
    "policyctl --version": 150,
    "policyctl validate examples/team.yaml": 400,
    "policyctl validate examples/chatbot.yaml": 400,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    exe = shutil.which("policyctl")
    base = [exe] if exe else [sys.executable, "-m", "policyctl"]
    env = {**os.environ, "NO_COLOR": "1"}
    print("| command | median ms | p99 ms | target |")
    print("|---|---|---|---|")
    for label, argv in COMMANDS.items():
        subprocess.run([*base, *argv], cwd=ROOT, env=env, capture_output=True)  # warm the cache
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run([*base, *argv], cwd=ROOT, env=env, capture_output=True)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
        target = TARGETS_MS.get(label)
        mark = (
            ""
            if target is None
            else (f"≤ {target}" + (" ✓" if statistics.median(times) <= target else " ✗ missed"))
        )
        print(f"| `{label}` | {statistics.median(times):.0f} | {p99:.0f} | {mark} |")


if __name__ == "__main__":
    main()
