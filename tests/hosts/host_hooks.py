"""The hook commands the real-host tests configure, and what the hook logged.

(Helpers, not fixtures: a conftest.py here would shadow the one in tests/ for the modules
that import names from it.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from host_drivers import HERE

POLICIES = HERE / "policies"


def decision_log(tmp: Path) -> Path:
    """Where ``policyctl hook --log`` appends one JSON line per decision of a test's run."""
    return tmp / "decisions.jsonl"


def policyctl_hook(host: str, tmp: Path) -> list[str]:
    """argv of ``policyctl hook HOST`` under policies/HOST.yaml, logging to decision_log(tmp)."""
    policy = POLICIES / f"{host}.yaml"
    log = decision_log(tmp)
    return [sys.executable, "-m", "policyctl", "hook", host, "--policy", str(policy),
            "--log", str(log)]  # fmt: skip


def standin_hook(host: str) -> list[str]:
    """argv of a hook that may also print no decision at all, to show what a host does on its
    own (policyctl always decides)."""
    return [sys.executable, str(HERE / "standin_hook.py"), host]


def decisions(tmp: Path) -> list[dict[str, Any]]:
    log = decision_log(tmp)
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
