"""Codex CLI (pinned in tests/hosts/npm) runs its PreToolUse hook, offline; only ``deny`` holds.

``codex exec`` talks to a loopback fake of the Responses API through a custom model provider.
Codex accepts ``deny`` from a PreToolUse hook; it rejects a bare ``allow`` and every ``ask`` as
unsupported, marks the hook failed and runs the call anyway (fails open), so policyctl's Codex
adapter must answer ``ask`` with ``deny``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fake_responses import Call
from host_drivers import run_codex
from host_records import check_record

PATCH = "*** Begin Patch\n*** Add File: {name}\n+x\n*** End Patch\n"


@dataclass(frozen=True)
class Case:
    name: str
    call: Call
    answered: str | None  # the hook's permissionDecision (None: no decision printed)
    creates: str
    runs: bool
    hook_status: str  # how Codex reports the hook on stderr: Blocked, Failed or Completed
    model_sees: str


CASES = [
    Case(
        "deny-shell",
        Call("exec_command", {"cmd": "touch denied1"}),
        "deny",
        "denied1",
        False,
        "Blocked",
        "Command blocked by PreToolUse hook: deny by the stand-in hook",
    ),
    Case(
        "allow-shell",
        Call("exec_command", {"cmd": "touch allowed1"}),
        "allow",
        "allowed1",
        True,
        "Failed",
        "Process exited with code 0",
    ),
    Case(
        "ask-shell",
        Call("exec_command", {"cmd": "touch asked1"}),
        "ask",
        "asked1",
        True,
        "Failed",
        "Process exited with code 0",
    ),
    Case(
        "silent-shell",
        Call("exec_command", {"cmd": "touch plain1"}),
        None,
        "plain1",
        True,
        "Completed",
        "Process exited with code 0",
    ),
    Case(
        "deny-patch",
        Call("apply_patch", text=PATCH.format(name="denied.txt")),
        "deny",
        "denied.txt",
        False,
        "Blocked",
        "Command blocked by PreToolUse hook",
    ),
    Case(
        "allow-patch",
        Call("apply_patch", text=PATCH.format(name="allowed.txt")),
        "allow",
        "allowed.txt",
        True,
        "Failed",
        "Success",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_codex_obeys_only_deny(case: Case, tmp_path: Path, hook_command: Any) -> None:
    run = run_codex(tmp_path, hook_command("codex"), case.call)
    assert run.returncode == 0, run.stderr
    [exchange] = run.exchanges
    assert exchange["stdin"]["hook_event_name"] == "PreToolUse"
    said = json.loads(exchange["stdout"]) if exchange["stdout"].strip() else {}
    assert said.get("hookSpecificOutput", {}).get("permissionDecision") == case.answered
    assert (run.workdir / case.creates).exists() is case.runs
    statuses = [
        line.split()[-1] for line in run.stderr.splitlines() if line.startswith("hook: PreToolUse ")
    ]
    assert statuses == [case.hook_status]
    [seen] = run.model_saw
    assert case.model_sees in seen
    check_record(
        "codex",
        "PreToolUse",
        case.name,
        exchange,
        {"ran": case.runs, "hook_status": case.hook_status},
        tmp_path,
    )
