"""Codex CLI (pinned in tests/hosts/npm) runs ``policyctl hook codex`` and obeys it, offline.

``codex exec`` talks to a loopback fake of the Responses API through a custom model provider;
the PreToolUse hook is policyctl under tests/hosts/policies/codex.yaml. Codex accepts ``deny``
from a PreToolUse hook; it rejects a bare ``allow`` and every ``ask`` as unsupported, marks the
hook failed and runs the call anyway (fails open). So policyctl answers ``allow`` with silence
and ``ask`` with ``deny``; the stand-in cases show why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_responses import Call
from host_drivers import run_codex
from host_hooks import decisions, policyctl_hook, standin_hook
from host_records import check_record

PATCH = "*** Begin Patch\n*** Add File: {name}\n+x\n*** End Patch\n"


@dataclass(frozen=True)
class Case:
    name: str
    call: Call
    verdict: str | None  # policyctl's verdict (None: the stand-in hook answers instead)
    answered: str | None  # the permissionDecision the host got (None: nothing printed)
    creates: str
    runs: bool
    hook_status: str  # how Codex reports the hook on stderr: Blocked, Failed or Completed
    model_sees: str


def _shell(command: str) -> Call:
    return Call("exec_command", {"cmd": command})


def _patch(name: str) -> Call:
    return Call("apply_patch", text=PATCH.format(name=name))


CASES = [
    Case(
        "deny-shell",
        _shell("touch denied1"),
        "deny",
        "deny",
        "denied1",
        False,
        "Blocked",
        "Command blocked by PreToolUse hook: policyctl: call refused",
    ),
    Case(
        "allow-shell",
        _shell("touch allowed1"),
        "allow",
        None,
        "allowed1",
        True,
        "Completed",
        "Process exited with code 0",
    ),
    Case(
        "ask-shell",
        _shell("touch asked1"),
        "ask",
        "deny",
        "asked1",
        False,
        "Blocked",
        "needs approval",
    ),
    Case(
        "deny-patch",
        _patch("denied.txt"),
        "deny",
        "deny",
        "denied.txt",
        False,
        "Blocked",
        "Command blocked by PreToolUse hook: policyctl: call refused",
    ),
    Case(
        "allow-patch",
        _patch("allowed.txt"),
        "allow",
        None,
        "allowed.txt",
        True,
        "Completed",
        "Success",
    ),
    # Why policyctl never prints allow or ask for Codex: the host rejects both as unsupported,
    # marks the hook failed and runs the call.
    Case(
        "standin-allow-shell",
        _shell("touch allowed2"),
        None,
        "allow",
        "allowed2",
        True,
        "Failed",
        "Process exited with code 0",
    ),
    Case(
        "standin-ask-shell",
        _shell("touch asked2"),
        None,
        "ask",
        "asked2",
        True,
        "Failed",
        "Process exited with code 0",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_codex_obeys_the_hook(case: Case, tmp_path: Path) -> None:
    hook = policyctl_hook("codex", tmp_path) if case.verdict else standin_hook("codex")
    run = run_codex(tmp_path, hook, case.call)
    assert run.returncode == 0, run.stderr
    # The hook really ran, on this call, and answered what the case expects.
    [exchange] = run.exchanges
    assert exchange["stdin"]["hook_event_name"] == "PreToolUse"
    assert exchange["stdin"]["tool_name"] == ("Bash" if case.call.text is None else "apply_patch")
    said = json.loads(exchange["stdout"]) if exchange["stdout"].strip() else {}
    assert said.get("hookSpecificOutput", {}).get("permissionDecision") == case.answered
    # the log keeps the policy's verdict, and an ask Codex was told as a deny says so
    logged = [(d["verdict"], d.get("answered")) for d in decisions(tmp_path)]
    told = "deny" if case.verdict == "ask" else None
    assert logged == ([(case.verdict, told)] if case.verdict else [])
    # The decision held: the file exists exactly when the call ran.
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


def test_codex_skips_an_untrusted_hook_without_a_word(tmp_path: Path) -> None:
    """A hook nobody trusted in Codex's /hooks screen is not run, and ``codex exec`` says
    nothing about it: the denied call runs. Installing the hook is not enough for Codex."""
    run = run_codex(
        tmp_path, policyctl_hook("codex", tmp_path), _shell("touch denied1"), trust_hooks=False
    )
    assert run.returncode == 0, run.stderr
    assert run.exchanges == [] and decisions(tmp_path) == []
    assert "hook" not in run.stderr.lower()
    assert (run.workdir / "denied1").exists()
