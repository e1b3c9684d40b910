"""Running `policyctl hook` as the hosts do: a new process, the payload on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
SAMPLES = ROOT / "tests" / "data" / "hosts" / "samples"
RECORDED = ROOT / "tests" / "data" / "hosts" / "recorded"


@dataclass(frozen=True)
class HookRun:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def reply(self) -> Any:
        """stdout parsed (None when empty): a host reads exactly this."""
        return json.loads(self.stdout) if self.stdout.strip() else None


def hook_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICYCTL_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def run_hook(
    argv: list[str],
    stdin: bytes | str | Any,
    *,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> HookRun:
    """`python -m policyctl hook ARGV` with `stdin` (bytes as they are, str encoded, anything
    else as JSON)."""
    if isinstance(stdin, str):
        data = stdin.encode("utf-8")
    elif isinstance(stdin, bytes):
        data = stdin
    else:
        data = json.dumps(stdin).encode("utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "policyctl", "hook", *argv],
        input=data,
        capture_output=True,
        cwd=cwd,
        env=env if env is not None else hook_env(),
        timeout=timeout,
    )
    return HookRun(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
