"""Run every benchmark and write bench/RESULTS.md.

    python bench/run.py            # the full run (several minutes: the baseline is slow)
    python bench/run.py --quick    # fewer iterations, prints only

Needs the shared scenario at ../shared/bench/scenario.json (beside the repository).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(script: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, str(HERE / script), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE.parent,
    )
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
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
        f"{platform.python_implementation()} {platform.python_version()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    quick = ["--quick"] if args.quick else []
    sections = [
        (
            "Resolve latency on the shared scenario (every layer applies)",
            "`bench/bench_resolve.py`. N MCP tools beside the 32 core tools of openclaw-2026.4. "
            "*cached*: the same context again; *new*: a sender never seen, same inventory; "
            "*cold*: a new inventory. The baseline (`bench/baseline.py`: for each tool, for each "
            "layer, fnmatch every entry, no compilation, no caching) is asserted to give the same "
            "answers and timed on new contexts in the same run.",
            run("bench_resolve.py", *quick),
        ),
        ("Scale", "`bench/bench_scale.py`. Each size in its own process.", run("bench_scale.py")),
        ("Per-call gate", "`bench/bench_gate.py`.", run("bench_gate.py")),
        (
            "CLI wall time (whole processes)",
            "`bench/cli_startup.py`.",
            run("cli_startup.py", "--runs", "10" if args.quick else "20"),
        ),
    ]
    text = [
        f"# Benchmark results\n\nDate: {datetime.date.today().isoformat()}. "
        f"Machine: {machine()}.\n\nRegenerate with `python bench/run.py`.\n"
    ]
    for title, note, body in sections:
        text.append(f"## {title}\n\n{note}\n\n{body}\n")
    report = "\n".join(text)
    print(report)
    if not args.quick:
        (HERE / "RESULTS.md").write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
