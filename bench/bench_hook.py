"""Wall time of a whole `policyctl hook` process, against `python -c pass` in the same run.

    python bench/bench_hook.py [--runs 20]

A host starts the hook once per tool call, so what counts is the process: interpreter
start-up, imports, loading the policy and one decision. The two commands are run in turn
(pass, hook, pass, hook, ...) so both see the same machine load, and the ratio of their
medians is the figure (target: at most 4x). Cases: the team example's bundle answered by
the `--warm` helper (the hook process is a small client), and read through the compiled
cache in the hook's own process, for a shell call that an ask rule decides (the shell
parser loads) and a read whose path rule decides; the YAML policy through the cache; and
the first call of a policy file, which compiles it (cold cache). Each reply is checked
before it is timed; the helper the run starts is ended by its process id.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "examples" / "hosts-team.yaml"
SHELL = {
    "session_id": "s1",
    "cwd": "/srv/repo",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "git push origin main", "description": "Push"},
}
READ = {**SHELL, "tool_name": "Read", "tool_input": {"file_path": "/srv/repo/.env"}}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICYCTL_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def _time(argv: list[str], stdin: bytes) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=_env(), cwd=ROOT)
    return time.perf_counter() - start, proc.stdout


def _hook(policy: Path, cache: Path) -> list[str]:
    return [sys.executable, "-m", "policyctl", "hook", "claude-code", "--policy", str(policy),
            "--cache-dir", str(cache)]  # fmt: skip


def _decision(out: bytes) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["permissionDecision"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    runs = ap.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "hosts-team.bundle.json"
        subprocess.run(
            [sys.executable, "-m", "policyctl", "compile", str(POLICY), "-o", str(bundle)],
            check=True, env=_env(), cwd=ROOT, capture_output=True,
        )  # fmt: skip
        cache = Path(tmp) / "cache"
        warm = [*_hook(bundle, cache), "--warm"]
        cases = [
            ("bundle, --warm helper: Bash ask rule", warm, SHELL, "ask"),
            ("bundle, --warm helper: Read deny rule", warm, READ, "deny"),
            ("bundle, cached: Bash ask rule", _hook(bundle, cache), SHELL, "ask"),
            ("bundle, cached: Read deny rule", _hook(bundle, cache), READ, "deny"),
            ("YAML, cached: Bash ask rule", _hook(POLICY, cache), SHELL, "ask"),
            ("bundle, --no-cache (loaded and checked each call)",
             [*_hook(bundle, cache), "--no-cache"], SHELL, "ask"),
        ]  # fmt: skip
        baseline = [sys.executable, "-c", "pass"]
        print("| case | median ms | p90 ms | python -c pass median ms | ratio | target |")
        print("|---|---|---|---|---|---|")
        _decision(_time(warm, json.dumps(SHELL).encode())[1])  # starts the helper
        pid_file = next(iter(cache.glob("warm-*.sock.lock")), None)
        for _ in range(600):
            if pid_file is not None and Path(f"{str(pid_file)[:-5]}.pid").exists():
                break
            time.sleep(0.05)
            pid_file = next(iter(cache.glob("warm-*.sock.lock")), None)
        for label, argv, payload, expected in cases:
            stdin = json.dumps(payload).encode()
            got = _decision(_time(argv, stdin)[1])  # also fills the cache
            assert got == expected, (label, got)
            hook, base = [], []
            for _ in range(runs):
                base.append(_time(baseline, b"")[0])
                hook.append(_time(argv, stdin)[0])
            h, b = statistics.median(hook), statistics.median(base)
            p90 = statistics.quantiles(hook, n=10)[-1]
            mark = "✓" if h / b <= 4 else "✗"
            print(f"| {label} | {h * 1e3:.1f} | {p90 * 1e3:.1f} | {b * 1e3:.1f} | "
                  f"{h / b:.1f}x | ≤ 4x {mark} |")  # fmt: skip
        for pid in cache.glob("warm-*.sock.pid"):  # the helper this run started
            os.kill(int(pid.read_text()), signal.SIGTERM)
        cold, base = [], []
        for i in range(max(3, runs // 5)):
            stdin = json.dumps(SHELL).encode()
            base.append(_time(baseline, b"")[0])
            cold.append(_time(_hook(POLICY, Path(tmp) / f"cold{i}"), stdin)[0])
        h, b = statistics.median(cold), statistics.median(base)
        print(f"| YAML, first call (compiles, fills the cache) | {h * 1e3:.1f} | | "
              f"{b * 1e3:.1f} | {h / b:.1f}x | |")  # fmt: skip


if __name__ == "__main__":
    main()
