"""Claude Code (pinned in tests/hosts/npm) runs its PreToolUse hook and obeys it, offline.

``claude -p`` talks to a loopback fake of the Messages API that asks for one tool call; the
hook's answer decides whether the call runs. In ``-p`` mode nobody can answer a prompt, so
``ask`` (from the hook, or from the host's own permission rules) refuses the call, and a hook
``allow`` does not loosen the host's own ``deny``/``ask`` rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from host_drivers import run_claude
from host_records import check_record


@dataclass(frozen=True)
class Case:
    name: str
    tool: str
    input: dict[str, Any]  # "{work}" stands for the run's working directory
    answered: str | None  # the hook's permissionDecision (None: no decision printed)
    creates: str  # the file the call makes if it runs
    runs: bool
    model_sees: str  # part of the tool result sent back to the model
    permissions: dict[str, Any] = field(default_factory=dict)


CASES = [
    Case(
        "deny-bash",
        "Bash",
        {"command": "touch denied1", "description": "t"},
        "deny",
        "denied1",
        False,
        "deny by the stand-in hook",
    ),
    Case(
        "allow-bash",
        "Bash",
        {"command": "touch allowed1", "description": "t"},
        "allow",
        "allowed1",
        True,
        "completed",
    ),
    Case(
        "ask-bash",
        "Bash",
        {"command": "touch asked1", "description": "t"},
        "ask",
        "asked1",
        False,
        "ask by the stand-in hook",
    ),
    Case(
        "deny-write",
        "Write",
        {"file_path": "{work}/denied.txt", "content": "x"},
        "deny",
        "denied.txt",
        False,
        "deny by the stand-in hook",
    ),
    Case(
        "allow-write",
        "Write",
        {"file_path": "{work}/allowed.txt", "content": "x"},
        "allow",
        "allowed.txt",
        True,
        "File created",
    ),
    # No decision: the host's own permission check runs, and -p cannot ask, so it refuses.
    Case(
        "silent-bash",
        "Bash",
        {"command": "touch plain1", "description": "t"},
        None,
        "plain1",
        False,
        "needs approval",
    ),
    # A hook allow cannot loosen the host's own rules: its deny and its ask still hold.
    Case(
        "allow-vs-host-deny",
        "Bash",
        {"command": "touch allowed2", "description": "t"},
        "allow",
        "allowed2",
        False,
        "has been denied",
        {"deny": ["Bash(touch allowed*)"]},
    ),
    Case(
        "allow-vs-host-ask",
        "Bash",
        {"command": "touch allowed3", "description": "t"},
        "allow",
        "allowed3",
        False,
        "haven't granted",
        {"ask": ["Bash(touch allowed*)"]},
    ),
    # A hook ask is not loosened by the host's allow rule either.
    Case(
        "ask-vs-host-allow",
        "Bash",
        {"command": "touch asked2", "description": "t"},
        "ask",
        "asked2",
        False,
        "ask by the stand-in hook",
        {"allow": ["Bash(touch asked*)"]},
    ),
]


def _fill(value: Any, work: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{work}", str(work))
    return {k: _fill(v, work) for k, v in value.items()} if isinstance(value, dict) else value


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_claude_code_obeys_the_hook(case: Case, tmp_path: Path, hook_command: Any) -> None:
    tool_input = _fill(case.input, tmp_path / "work")
    run = run_claude(tmp_path, hook_command("claude-code"), case.tool, tool_input, case.permissions)
    assert run.returncode == 0, run.stderr
    # The hook really ran, on this call, and said what the case expects.
    [exchange] = run.exchanges
    assert exchange["stdin"]["tool_name"] == case.tool
    assert exchange["stdin"]["tool_input"] == tool_input
    said = json.loads(exchange["stdout"]) if exchange["stdout"].strip() else {}
    assert said.get("hookSpecificOutput", {}).get("permissionDecision") == case.answered
    # The decision held: the file exists exactly when the call ran.
    assert (run.workdir / case.creates).exists() is case.runs
    [seen] = run.model_saw
    assert case.model_sees in seen
    check_record(
        "claude-code",
        "PreToolUse",
        case.name,
        exchange,
        {"ran": case.runs, "model_saw": seen},
        tmp_path,
    )
