"""Fixtures for the real-host tests: the hook each host runs, and what that hook decided."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from host_drivers import HERE

POLICIES = HERE / "policies"
HookCommand = Callable[[str], list[str]]


@pytest.fixture
def decision_log(tmp_path: Path) -> Path:
    """Where ``policyctl hook --log`` appends one JSON line per decision of the test's run."""
    return tmp_path / "decisions.jsonl"


@pytest.fixture
def hook_command(decision_log: Path) -> HookCommand:
    """hook_command(host) -> argv of ``policyctl hook HOST`` under policies/HOST.yaml."""

    def command(host: str) -> list[str]:
        policy = POLICIES / f"{host}.yaml"
        return [
            sys.executable,
            "-m",
            "policyctl",
            "hook",
            host,
            "--policy",
            str(policy),
            "--log",
            str(decision_log),
        ]

    return command


@pytest.fixture
def standin_command() -> HookCommand:
    """standin_command(host) -> argv of a hook that may also print no decision at all, to show
    what a host does on its own (policyctl always decides)."""

    def command(host: str) -> list[str]:
        return [sys.executable, str(HERE / "standin_hook.py"), host]

    return command


def decisions(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
