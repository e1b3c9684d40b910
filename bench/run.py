"""Run every benchmark and write bench/RESULTS.md.

    python bench/run.py            # everything, about 4 to 6 minutes on 2 cores; writes RESULTS.md
    python bench/run.py --quick    # fewer iterations, prints only (about a minute)

Run it on a quiet machine: every case is a median over many runs, but other processes on the
same cores still move the numbers (and the p99 most). Needs the shared scenario at
shared/bench/scenario.json beside the checkout (or POLICYCTL_BENCH_SCENARIO) and the test
extras (the expected answers come from tests/reference/).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(script: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, str(HERE / script), *args],
        capture_output=True,
        text=True,
        cwd=HERE.parent,
    )
    if out.returncode != 0:
        return f"**failed** (exit {out.returncode}):\n\n```\n{out.stderr.strip()[-2000:]}\n```"
    return out.stdout.strip()


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = f"; load average at start {os.getloadavg()[0]:.1f}"
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
        f"{platform.python_implementation()} {platform.python_version()}{load}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    quick = ["--quick"] if args.quick else []
    started = time.perf_counter()
    text = [
        f"# Benchmark results\n\nDate: {datetime.date.today().isoformat()}. "
        f"Machine: {machine()}.\n\nRegenerate with `python bench/run.py` (see its docstring). "
        "Every row checks its answer (the allowed tools, or the command's output) before it "
        "is timed; the expected allowed sets come from the executable specification in "
        "`tests/reference/`, not from the engine. ✗ marks a missed target; the profile that "
        "explains it follows the table.\n"
    ]
    sections = [
        (
            "Resolve latency on the shared scenario",
            "`bench/bench_resolve.py`. A sandboxed leaf subagent of agent `coder`, spawned from "
            "a Telegram group session, on openai/gpt-5.4; N MCP tools after the 32 core tools "
            "of openclaw-2026.4. Layers 2, 6 and 8 have no policy for this run and skip; the "
            "other eight apply.",
            lambda: run("bench_resolve.py", *quick),
        ),
        (
            "One tool call through the runtime gate",
            "`bench/bench_gate.py`: `Runtime.gate(resolution).call(...)`, the path of every "
            "model tool call.",
            lambda: run("bench_gate.py", *quick),
        ),
        (
            "Worst shell lines at the 64 KiB limit",
            "`bench/bench_shell_bounds.py`: one `analyse` per shape, each in its own process.",
            lambda: run("bench_shell_bounds.py"),
        ),
        (
            "Threads",
            "`bench/bench_threads_memory.py threads`.\n\n"
            "| case | work | exceptions | answers | target |\n|---|---|---|---|---|",
            lambda: run("bench_threads_memory.py", "threads", "--seconds", "3" if quick else "10"),
        ),
        (
            "Memory kept by the caches",
            "`bench/bench_threads_memory.py memory`.\n\n| case | kept | target |\n|---|---|---|",
            lambda: run(
                "bench_threads_memory.py", "memory", "--inventories", "1000" if quick else "10000"
            ),
        ),
        (
            "Scale",
            "`bench/bench_scale.py`. Each size in its own process.",
            lambda: run("bench_scale.py", *(["--sizes", "10,1000"] if quick else [])),
        ),
        (
            "CLI wall time (whole processes)",
            "`bench/cli_startup.py`.",
            lambda: run("cli_startup.py", "--runs", "5" if args.quick else "20"),
        ),
        (
            "The HTML report of a large policy in chromium",
            "`bench/bench_report.py`: open and filter a 30,000+ context report (target: about "
            "two seconds each).",
            lambda: (
                "```text\n"
                + run("bench_report.py", *(["--repeat", "1"] if args.quick else []))
                + "\n```"
            ),
        ),
    ]
    for title, note, body in sections:
        # the table header of one-row sections is in the note, the row comes from the script
        joiner = "\n" if note.endswith("|") else "\n\n"
        text.append(f"## {title}\n\n{note}{joiner}{body()}\n")
    text.append(f"Whole run: {time.perf_counter() - started:.0f} s.\n")
    report = "\n".join(text)
    print(report)
    if not args.quick:
        (HERE / "RESULTS.md").write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
