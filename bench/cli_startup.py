"""Wall time of whole `policyctl` processes, each checked for the answer it must give.

    python bench/cli_startup.py [--runs 20]

Prints a Markdown table (median and p99 in milliseconds) for bench/RESULTS.md. The resolve
case is the shared scenario with every context flag; its printed allowed list is compared
with the executable specification (tests/reference/). A missed target is followed by the
`python -X importtime` modules that cost the most, the profile of a start-up.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Scenario

SC = Scenario()
_C = SC.spec["context"]
SCENARIO_FLAGS = [
    *("--agent", _C["agent"], "--provider", _C["provider"], "--model", _C["model"]),
    *("--channel", _C["channel"], "--group", _C["group"], "--session-key", _C["sessionKey"]),
    *("--spawned-by", _C["spawnedBy"], "--subagent-depth", str(_C["subagentDepth"])),
    *("--sender-id", _C["sender"]["id"], "--sender-name", _C["sender"]["name"]),
    *("--sender-username", _C["sender"]["username"]),
]


def _allowed_line(out: str) -> tuple[str, ...]:
    line = next(ln for ln in out.splitlines() if ln.startswith("allowed ("))
    return tuple(t.strip() for t in line.split(":", 1)[1].split(",") if t.strip())


def _expected_scenario() -> tuple[str, ...]:
    from policyctl import RunContext

    # the command line has no flag for a deny-only parent capture: the run without one
    ctx = SC.context()
    fields = {f: getattr(ctx, f) for f in RunContext.__dataclass_fields__ if f != "_hash"}
    return SC.expected(RunContext(**{**fields, "parent": None}), SC.tools(0))


EXPECTED = _expected_scenario()
Check = Callable[[subprocess.CompletedProcess[str]], bool]
COMMANDS: dict[str, tuple[list[str], Check, int | None]] = {
    "policyctl --version": (["--version"], lambda p: "policyctl" in p.stdout, 150),
    "policyctl resolve (the scenario, every context flag)": (
        ["resolve", str(SC.policy_path), *SCENARIO_FLAGS],
        lambda p: p.returncode == 0 and _allowed_line(p.stdout) == EXPECTED,
        200,
    ),
    "policyctl validate examples/team.yaml": (
        ["validate", "examples/team.yaml"],
        lambda p: p.returncode == 0 and "0 errors" in p.stdout + p.stderr,
        250,
    ),
    "policyctl validate examples/chatbot.yaml": (
        ["validate", "examples/chatbot.yaml"],
        lambda p: p.returncode == 0 and "0 errors" in p.stdout + p.stderr,
        None,
    ),
    "policyctl explain examples/team.yaml --agent coder --tool screen": (
        ["explain", "examples/team.yaml", "--agent", "coder", "--tool", "screen"],
        lambda p: p.returncode == 0 and "group:ui" in p.stdout,
        None,
    ),
}


def importtime_top(base: list[str], argv: list[str], env: dict[str, str], top: int = 5) -> str:
    """The modules whose import (own time) costs most in one such process."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "policyctl", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[0].startswith("import time:") and "self" not in parts[0]:
            rows.append((int(parts[0].split(":")[1]), int(parts[1]), parts[2].strip()))
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows) / 1000
    shown = ", ".join(f"{name} {own / 1000:.0f}" for own, _cum, name in rows[:top])
    return f"imports {total:.0f} ms in all; most (own ms): {shown}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    exe = shutil.which("policyctl")
    base = [exe] if exe else [sys.executable, "-m", "policyctl"]
    # An installed wheel has its bytecode compiled at install time (pip does so by default);
    # a PYTHONDONTWRITEBYTECODE inherited from the shell would make every timed process
    # recompile the package from source, which no deployed policyctl does. The first, untimed
    # run of each command writes the bytecode.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    print("| command | median ms | p99 ms | target |")
    print("|---|---|---|---|")
    notes = []
    for label, (argv, check, target) in COMMANDS.items():
        first = subprocess.run([*base, *argv], cwd=ROOT, env=env, capture_output=True, text=True)
        assert check(first), f"{label}: unexpected output\n{first.stdout}\n{first.stderr}"
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            proc = subprocess.run([*base, *argv], cwd=ROOT, env=env, capture_output=True, text=True)
            times.append((time.perf_counter() - start) * 1000)
            assert check(proc), f"{label}: unexpected output"
        times.sort()
        median = statistics.median(times)
        p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
        mark = ""
        if target is not None:
            mark = f"≤ {target} " + ("✓" if median <= target else "✗ missed")
            if median > target:
                notes.append(f"- `{label}`: {importtime_top(base, argv, env)}")
        print(f"| `{label}` | {median:.0f} | {p99:.0f} | {mark} |")
    if notes:
        print("\nProfiles of the missed targets (`python -X importtime`):\n")
        print("\n".join(notes))


if __name__ == "__main__":
    main()
