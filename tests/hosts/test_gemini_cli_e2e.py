"""Gemini CLI (pinned in tests/hosts/npm) runs ``policyctl hook gemini-cli`` and obeys it, offline.

``gemini -p`` replays a scripted function call (``--fake-responses-non-strict``), so no key and
no network are used; the BeforeTool hook is policyctl under tests/hosts/policies/gemini-cli.yaml.
Headless runs drop the tools that would need a confirmation, so the shell
cases run with ``--yolo`` (every call pre-approved; the hook still decides) and the file cases
with ``--approval-mode auto_edit``. A hook ``ask`` in a headless run waits for a confirmation
nobody can give: the call never runs, and neither does the rest of the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from host_drivers import run_gemini
from host_hooks import decisions, policyctl_hook, standin_hook
from host_records import check_record

# Long enough for a loaded two-core machine to reach the hook (a normal run takes ~2 s).
ASK_WAIT = 25.0


@dataclass(frozen=True)
class Case:
    name: str
    tool: str
    args: dict[str, Any]  # "{work}" stands for the run's working directory
    mode: str
    verdict: str | None  # policyctl's verdict (None: the stand-in hook printed nothing)
    creates: str
    runs: bool
    model_sees: str  # part of the tool error reported (empty: the call succeeded)


CASES = [
    Case(
        "deny-shell",
        "run_shell_command",
        {"command": "touch denied1"},
        "--yolo",
        "deny",
        "denied1",
        False,
        "Tool execution blocked: policyctl: call refused",
    ),
    Case(
        "allow-shell",
        "run_shell_command",
        {"command": "touch allowed1"},
        "--yolo",
        "allow",
        "allowed1",
        True,
        "",
    ),
    Case(
        "deny-write",
        "write_file",
        {"file_path": "{work}/denied.txt", "content": "x"},
        "--approval-mode auto_edit",
        "deny",
        "denied.txt",
        False,
        "Tool execution blocked: policyctl: call refused",
    ),
    Case(
        "allow-write",
        "write_file",
        {"file_path": "{work}/allowed.txt", "content": "x"},
        "--approval-mode auto_edit",
        "allow",
        "allowed.txt",
        True,
        "",
    ),
    # A hook that says nothing leaves the host's own approval: --yolo runs the call.
    Case(
        "silent-shell",
        "run_shell_command",
        {"command": "touch plain1"},
        "--yolo",
        None,
        "plain1",
        True,
        "",
    ),
]


def _fill(args: dict[str, Any], work: Path) -> dict[str, Any]:
    return {k: v.replace("{work}", str(work)) if isinstance(v, str) else v for k, v in args.items()}


def _answer(exchange: dict[str, Any]) -> str | None:
    said = json.loads(exchange["stdout"]) if exchange["stdout"].strip() else {}
    return said.get("decision")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gemini_cli_obeys_the_hook(case: Case, tmp_path: Path) -> None:
    args = _fill(case.args, tmp_path / "work")
    hook = policyctl_hook("gemini-cli", tmp_path) if case.verdict else standin_hook("gemini-cli")
    run = run_gemini(tmp_path, hook, case.tool, args, case.mode)
    assert run.returncode == 0, run.stderr
    # The hook really ran, on this call, and answered with policyctl's verdict.
    [exchange] = run.exchanges
    assert exchange["stdin"]["hook_event_name"] == "BeforeTool"
    assert exchange["stdin"]["tool_name"] == case.tool
    assert exchange["stdin"]["tool_input"] == args
    assert _answer(exchange) == case.verdict
    logged = [(d["hostTool"], d["verdict"]) for d in decisions(tmp_path)]
    assert logged == ([(case.tool, case.verdict)] if case.verdict else [])
    # The decision held: the file exists exactly when the call ran, and the host counted it so.
    assert (run.workdir / case.creates).exists() is case.runs
    stats = json.loads(run.stdout)["stats"]["tools"]["byName"][case.tool]
    assert (stats["success"], stats["fail"]) == ((1, 0) if case.runs else (0, 1))
    seen = "\n".join(run.model_saw)
    assert case.model_sees in seen if case.model_sees else not seen
    check_record(
        "gemini-cli",
        "BeforeTool",
        case.name,
        exchange,
        {"ran": case.runs, "tool_error": seen or None},
        tmp_path,
    )


def test_gemini_cli_headless_ask_waits_and_the_call_does_not_run(tmp_path: Path) -> None:
    """Gemini CLI honours a hook's ``ask`` by asking; a headless run has no one to ask and
    waits (observed for over 200 s), so the call never runs and neither does the rest."""
    args = {"command": "touch asked1"}
    run = run_gemini(
        tmp_path,
        policyctl_hook("gemini-cli", tmp_path),
        "run_shell_command",
        args,
        "--yolo",
        timeout=ASK_WAIT,
    )
    [exchange] = run.exchanges
    assert _answer(exchange) == "ask"
    assert [d["verdict"] for d in decisions(tmp_path)] == ["ask"]
    assert run.timed_out, f"the run ended ({run.returncode}): {run.stderr[-2000:]}"
    assert not (run.workdir / "asked1").exists()
    check_record(
        "gemini-cli",
        "BeforeTool",
        "ask-shell",
        exchange,
        {"ran": False, "run_ended": False},
        tmp_path,
    )


def test_gemini_cli_headless_with_no_ask_refuses_and_the_run_ends(tmp_path: Path) -> None:
    """`--no-ask` (docs/hosts.md) for headless runs: the ask rule's call is refused with a
    reason that says approval is needed, and the run goes on instead of waiting."""
    args = {"command": "touch asked2"}
    hook = [*policyctl_hook("gemini-cli", tmp_path), "--no-ask"]
    run = run_gemini(tmp_path, hook, "run_shell_command", args, "--yolo", timeout=ASK_WAIT)
    assert not run.timed_out and run.returncode == 0, run.stderr[-2000:]
    [exchange] = run.exchanges
    assert _answer(exchange) == "deny"
    # docs/hosts.md: the log keeps the policy's verdict and says what the host was told
    assert [(d["verdict"], d.get("answered")) for d in decisions(tmp_path)] == [("ask", "deny")]
    assert not (run.workdir / "asked2").exists()
    seen = "\n".join(run.model_saw)
    assert "Tool execution blocked: policyctl: call needs approval" in seen, seen
    assert "--no-ask: approval is needed" in seen, seen
