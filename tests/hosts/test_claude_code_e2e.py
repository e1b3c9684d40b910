"""Claude Code (pinned in tests/hosts/npm) runs ``policyctl hook claude-code``, offline, and obeys.

``claude -p`` talks to a loopback fake of the Messages API that asks for one tool call; the
PreToolUse hook (policyctl, under tests/hosts/policies/claude-code.yaml) decides whether it
runs. In ``-p`` mode nobody can answer a prompt, so ``ask`` (from the hook, or from the host's
own permission rules) refuses the call, and a hook ``allow`` does not loosen the host's own
``deny``/``ask`` rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from host_drivers import run_claude
from host_hooks import decisions, policyctl_hook, standin_hook
from host_records import check_record


@dataclass(frozen=True)
class Case:
    name: str
    tool: str
    input: dict[str, Any]  # "{work}" stands for the run's working directory
    verdict: str | None  # policyctl's verdict (None: the stand-in hook printed nothing)
    creates: str  # the file the call makes if it runs
    runs: bool
    model_sees: str  # part of the tool result sent back to the model
    permissions: dict[str, Any] = field(default_factory=dict)  # the host's own rules


def _bash(command: str) -> dict[str, Any]:
    return {"command": command, "description": "make a file"}


CASES = [
    Case("deny-bash", "Bash", _bash("touch denied1"), "deny", "denied1", False, "call refused"),
    Case("allow-bash", "Bash", _bash("touch allowed1"), "allow", "allowed1", True, "completed"),
    Case("ask-bash", "Bash", _bash("touch asked1"), "ask", "asked1", False, "needs approval"),
    Case(
        "deny-write",
        "Write",
        {"file_path": "{work}/denied.txt", "content": "x"},
        "deny",
        "denied.txt",
        False,
        "call refused",
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
    # A hook allow cannot loosen the host's own rules: its deny and its ask still hold.
    Case(
        "allow-vs-host-deny",
        "Bash",
        _bash("touch allowed2"),
        "allow",
        "allowed2",
        False,
        "has been denied",
        {"deny": ["Bash(touch allowed*)"]},
    ),
    Case(
        "allow-vs-host-ask",
        "Bash",
        _bash("touch allowed3"),
        "allow",
        "allowed3",
        False,
        "haven't granted",
        {"ask": ["Bash(touch allowed*)"]},
    ),
    # ... and the host's allow rule does not loosen a hook's ask.
    Case(
        "ask-vs-host-allow",
        "Bash",
        _bash("touch asked2"),
        "ask",
        "asked2",
        False,
        "needs approval",
        {"allow": ["Bash(touch asked*)"]},
    ),
    # A hook that says nothing leaves the host's own check, which cannot ask in -p: refused.
    # So an allowed call runs only because policyctl answers `allow`.
    Case("silent-bash", "Bash", _bash("touch plain1"), None, "plain1", False, "needs approval"),
]


def _fill(value: Any, work: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{work}", str(work))
    return {k: _fill(v, work) for k, v in value.items()} if isinstance(value, dict) else value


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_claude_code_obeys_the_hook(case: Case, tmp_path: Path) -> None:
    tool_input = _fill(case.input, tmp_path / "work")
    hook = policyctl_hook("claude-code", tmp_path) if case.verdict else standin_hook("claude-code")
    run = run_claude(tmp_path, hook, case.tool, tool_input, case.permissions)
    assert run.returncode == 0, run.stderr
    # The hook really ran, on this call, and answered with policyctl's verdict.
    [exchange] = run.exchanges
    assert exchange["stdin"]["tool_name"] == case.tool
    assert exchange["stdin"]["tool_input"] == tool_input
    said = json.loads(exchange["stdout"]) if exchange["stdout"].strip() else {}
    assert said.get("hookSpecificOutput", {}).get("permissionDecision") == case.verdict
    logged = [(d["hostTool"], d["verdict"]) for d in decisions(tmp_path)]
    assert logged == ([(case.tool, case.verdict)] if case.verdict else [])
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
