"""The worst shapes of a shell line at the 64 KiB limit: what one `analyse` costs.

    python bench/bench_shell_bounds.py [--case NAME ...]

Each case is one line of at most 64 KiB, named for exactly what it varies; each is analysed
in a fresh child process (so the command catalog and the grammar are loaded before the clock
starts and memory is that line's alone) and reports the wall time of `analyse` and the peak
memory it allocated (tracemalloc, timed apart from it). Targets: ≤ 0.3 s and ≤ 200 MB.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys

LIMIT = 64 * 1024 - 16


def _fill(head: str, unit: str, tail: str = "") -> str:
    count = (LIMIT - len(head) - len(tail)) // len(unit)
    return head + unit * count + tail


def _nested_bash_c() -> str:
    script = "rm x"
    while True:
        wider = "bash -c " + shlex.quote(script)
        if len(wider) > LIMIT:
            return script
        script = wider


CASES = {
    # a script word first (`'a b'`): the words after it were joined into scripts
    "words-after-watch": lambda: _fill("watch 'a b' ", "a "),
    "words-after-ssh": lambda: _fill("ssh host 'a b' ", "a "),
    "words-after-tmux-new": lambda: _fill("tmux new 'a b' ", "a "),
    "words-after-systemd-run": lambda: _fill("systemd-run 'a b' ", "a "),
    "nested-xargs": lambda: _fill("", "xargs ", "rm x"),
    "nested-sudo": lambda: _fill("", "sudo ", "rm x"),
    "nested-env": lambda: _fill("", "env ", "rm x"),
    "nested-timeout": lambda: _fill("", "timeout 1 ", "rm x"),
    "nested-bash-c": _nested_bash_c,
    "long-pipeline": lambda: _fill("", "a | ", "a"),
    "many-redirections": lambda: _fill("cat ", "> f "),
    "many-assignments": lambda: _fill("", "A=1 ", "ls"),
    "deep-command-substitution": lambda: "$(" * 8000 + "x" + ")" * 8000,
    "many-git-config-settings": lambda: _fill("git ", "-c core.pager=x ", "log"),
    "many-find-exec": lambda: _fill("find . ", "-exec rm {} ; "),
    "many-file-operands": lambda: _fill("cat ", "f "),
}

_CHILD = """
import json, sys, time, tracemalloc
from policyctl.callrules.shell import analyse
analyse("sudo xargs git -C . status; cat f")  # load the grammar and the catalog
line = sys.stdin.read()
started = time.perf_counter()
found = analyse(line)
seconds = time.perf_counter() - started
tracemalloc.start()
analyse(line)
peak = tracemalloc.get_traced_memory()[1]
reasons = sorted({p.reason for p in found.problems})[:2]
print(json.dumps({"seconds": seconds, "mb": peak / 1e6, "problems": reasons}))
"""


def measure(name: str) -> dict[str, object]:
    line = CASES[name]()
    assert len(line.encode()) <= 64 * 1024, name
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], input=line, capture_output=True, text=True, check=False
    )
    if out.returncode:  # a crash is a result too (a RecursionError before the depth limits)
        error = (out.stderr.strip().splitlines() or ["?"])[-1]
        return {"seconds": float("inf"), "mb": float("inf"), "problems": [f"crashed: {error}"]}
    result: dict[str, object] = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    args = parser.parse_args()
    print("| case | wall s | peak MB | target | unanalysable because |")
    print("|---|---|---|---|---|")
    for name in args.case or CASES:
        r = measure(name)
        ok = r["seconds"] <= 0.3 and r["mb"] <= 200  # type: ignore[operator]
        mark = "✓" if ok else "✗ missed"
        why = "; ".join(r["problems"]) or "—"  # type: ignore[arg-type]
        print(f"| {name} | {r['seconds']:.3f} | {r['mb']:.1f} | ≤ 0.3 s, ≤ 200 MB {mark} | {why} |")


if __name__ == "__main__":
    main()
