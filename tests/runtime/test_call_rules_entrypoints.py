"""Every entry point meets the same call rules, written in real policy files (issue 14).

A normal turn, a skill command, a scheduled job (its creator's call rules travel with it) and
a spawned subagent (its parent's call rules are its inheritance layer) all decide each call in
the gate. The runtime anchors path rules at its workspace when the context does not say.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from policyctl import load_policy_text, resolve
from policyctl.context import RunContext, Sender
from policyctl.runtime import (
    Approval,
    ProviderResponse,
    Runtime,
    ScriptedProvider,
    ToolCall,
    ToolCallEvent,
    ToolRegistry,
    make_builtin_tools,
)

POLICY = """\
catalog: nanobot
tools:
  deny: ["exec(rm *)", "read_file(./secrets/)"]
  ask: ["exec(git push *)"]
"""


def runtime_for(ws: Path, text: str = POLICY, script: list[Any] | None = None, **kw: Any) -> Any:
    responses = [
        ProviderResponse(tool_calls=tuple(ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(step)))
        for step in script or []
    ]
    registry = ToolRegistry(make_builtin_tools(ws))
    return Runtime(
        load_policy_text(text), registry, ScriptedProvider(responses), workspace=ws, **kw
    )


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "secrets").mkdir(parents=True)
    (ws / "secrets" / "key").write_text("s3cret", encoding="utf-8")
    (ws / "notes.txt").write_text("buy milk", encoding="utf-8")
    return ws.resolve()


def test_a_normal_turn_decides_every_call(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    script = [
        [
            ("exec", {"command": "rm -rf secrets"}),
            ("read_file", {"path": "secrets/key"}),
            ("read_file", {"path": "notes.txt"}),
            ("exec", {"command": "git push"}),
        ]
    ]
    result = asyncio.run(runtime_for(ws, script=script).run_turn(RunContext(), "go"))
    rm, secret, notes, push = result.outcomes
    assert rm.veto is not None
    assert 'call refused: call rule "exec(rm *)" at tools.deny denies it' in rm.veto.reason
    assert json.loads(rm.content())["decidedBy"]["entry"] == "exec(rm *)"
    assert secret.veto is not None and "read_file(./secrets/)" in secret.veto.reason
    assert "s3cret" not in json.dumps(result.messages)
    assert notes.ok and notes.result == "buy milk"
    assert push.veto is not None and push.veto.kind == "approval"
    assert "no approver" in push.veto.reason
    assert (ws / "secrets" / "key").exists()
    # provenance for the operator: where the rule was written
    assert rm.veto.provenance["decidedBy"]["source"] == "policy.yaml:3:10"


def test_a_skill_command_goes_through_the_same_gate(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    runtime = runtime_for(ws)
    out = asyncio.run(runtime.run_skill_command(RunContext(), "read_file", {"path": "secrets/key"}))
    assert out.veto is not None and out.veto.kind == "policy"


def test_session_grants_last_for_the_session_only(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    asked: list[str] = []

    async def approver(event: ToolCallEvent, reason: str) -> Approval:
        asked.append(event.session_key or "")
        return Approval.SESSION

    runtime = runtime_for(ws, approver=approver)
    push = {"command": "git push"}
    for key in ("agent:main:main", "agent:main:main", "agent:main:other"):
        out = asyncio.run(runtime.run_skill_command(RunContext(session_key=key), "exec", push))
        assert out.veto is None or out.veto.kind != "approval"
    assert asked == ["agent:main:main", "agent:main:other"]


def test_session_grants_are_kept_for_the_most_recent_sessions(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    asked: list[str] = []

    async def approver(event: ToolCallEvent, reason: str) -> Approval:
        asked.append(event.session_key or "")
        return Approval.SESSION

    runtime = runtime_for(ws, approver=approver, sessions=1)
    push = {"command": "git push"}
    for key in ("agent:main:a", "agent:main:b", "agent:main:a"):
        asyncio.run(runtime.run_skill_command(RunContext(session_key=key), "exec", push))
    assert asked == ["agent:main:a", "agent:main:b", "agent:main:a"]  # a's grant was dropped


SENDER_RULE = """\
catalog: nanobot
tools:
  toolsBySender:
    "id:42": {deny: ["exec(echo *)"]}
"""


def test_a_cron_job_keeps_its_creators_call_rules(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    echo = [("exec", {"command": "echo hi"})]
    creator = RunContext(agent="main", sender=Sender(id="42"), session_key="agent:main:main")
    runtime = runtime_for(ws, SENDER_RULE, script=[echo])
    job = runtime.schedule_cron_job(creator, "say hi")
    assert job.calls  # the creator's sender rule travels with the job
    ran = asyncio.run(runtime.run_cron_job(job))
    assert ran.outcomes[0].veto is not None and "exec(echo *)" in ran.outcomes[0].veto.reason
    # a run without that sender has no such rule: the same call runs
    again = runtime_for(ws, SENDER_RULE, script=[echo])
    plain = asyncio.run(again.run_turn(RunContext(agent="main"), "say hi"))
    assert plain.outcomes[0].ok and plain.outcomes[0].result["stdout"] == "hi\n"


def test_a_subagent_meets_its_parents_call_rules(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    echo = [("exec", {"command": "echo hi"})]
    parent_policy = load_policy_text('catalog: nanobot\ntools: {deny: ["exec(echo *)"]}\n')
    runtime = runtime_for(ws, "catalog: nanobot\n", script=[echo])
    parent_ctx = RunContext(agent="main", session_key="agent:main:main", workspace=str(ws))
    registry = runtime.registry
    parent = resolve(parent_policy, parent_ctx, registry.inventory(parent_policy.catalog))
    child_ctx = runtime.subagent_context(parent_ctx, parent, "c1")
    assert child_ctx.workspace == str(ws)
    result = asyncio.run(runtime.spawn_subagent(parent_ctx, parent, "say hi", "c1"))
    veto = result.outcomes[0].veto
    assert veto is not None and "exec(echo *)" in veto.reason, result.outcomes
    assert "inherit" in veto.reason.lower()


def test_the_runtime_anchors_path_rules_at_its_workspace(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    runtime = runtime_for(ws)
    res = runtime.resolve(RunContext())
    assert res.call_environment().roots.workspace == str(ws)
    assert res.decide_call("read_file", {"path": "secrets/key"}).effect.label == "deny"
    own = runtime.resolve(RunContext(workspace=str(tmp_path)))
    assert own.call_environment().roots.workspace == str(tmp_path.resolve())  # the context wins


def test_a_runtime_without_approver_warns_once_that_asks_will_be_refused(
    tmp_path: Path, caplog: Any
) -> None:
    import logging

    ws = workspace(tmp_path)
    text = POLICY.replace('ask: ["exec(git push *)"]', 'ask: ["exec(git push --tags *)"]')
    with caplog.at_level(logging.WARNING, "policyctl.runtime"):
        runtime = runtime_for(ws, text)
        for _ in range(2):
            runtime.gate(runtime.resolve(RunContext()))
        runtime_for(ws, "catalog: nanobot\n").gate(runtime.resolve(RunContext()))
    warned = [r.getMessage() for r in caplog.records if "PC480" in r.getMessage()]
    assert len(warned) == 1 and "no approver" in warned[0]
    assert "tools.ask: exec(git push --tags *)" in warned[0]

    async def approver(event: ToolCallEvent, reason: str) -> Approval:
        return Approval.DENY

    caplog.clear()
    with caplog.at_level(logging.WARNING, "policyctl.runtime"):
        quiet = runtime_for(ws, POLICY.replace("git push", "git tag"), approver=approver)
        quiet.gate(quiet.resolve(RunContext()))
    assert not [r for r in caplog.records if "PC480" in r.getMessage()]


def _table_workspace(tmp_path: Path) -> Path:
    ws = workspace(tmp_path)
    (ws / "docs").mkdir()
    (ws / "docs" / "guide.md").write_text("guide", encoding="utf-8")
    (ws / ".env").write_text("TOKEN=1", encoding="utf-8")
    (ws / "env-link").symlink_to(ws / ".env")
    return ws


# (tools: block of the policy, tool, arguments, expected: "ok" or the veto kind)
TABLE = [
    ('deny: ["exec(rm *)"]', "exec", {"command": "rm -rf docs"}, "policy"),
    ('deny: ["exec(rm *)"]', "exec", {"command": "echo x; rm -rf docs"}, "policy"),
    ('deny: ["exec(rm *)"]', "exec", {"command": "echo rm"}, "ok"),
    ('allow: ["exec(echo *)", read_file]', "exec", {"command": "ls"}, "policy"),
    ('allow: ["exec(echo *)", read_file]', "exec", {"command": "echo hi"}, "ok"),
    ('ask: ["exec(echo *)"]', "exec", {"command": "echo hi"}, "approval"),
    ('allow: ["exec(git *)"]\n  callDefault: ask', "exec", {"command": "make"}, "approval"),
    ("ask: [read_file]", "read_file", {"path": "notes.txt"}, "approval"),
    ('deny: ["read_file(.env)"]', "read_file", {"path": ".env"}, "policy"),
    ('deny: ["read_file(.env)"]', "read_file", {"path": "env-link"}, "policy"),
    ('deny: ["read_file(.env)"]', "read_file", {"path": "docs/../.env"}, "policy"),
    ('deny: ["read_file(.env)"]', "read_file", {"path": "notes.txt"}, "ok"),
    ('allow: ["read_file(./docs/**)"]', "read_file", {"path": "docs/guide.md"}, "ok"),
    ('allow: ["read_file(./docs/**)"]', "read_file", {"path": "notes.txt"}, "policy"),
    (
        'deny: ["write_file(./secrets/)"]',
        "write_file",
        {"path": "secrets/x", "content": "x"},
        "policy",
    ),
    ('deny: ["write_file(./secrets/)"]', "write_file", {"path": "out/x", "content": "x"}, "ok"),
    (
        'deny: ["edit_file(*.md)"]',
        "edit_file",
        {"path": "docs/guide.md", "old_text": "guide", "new_text": "x"},
        "policy",
    ),
    ('deny: ["list_dir(./secrets/)"]', "list_dir", {"path": "secrets"}, "policy"),
    ('deny: ["list_dir(./secrets/)"]', "list_dir", {"path": "docs"}, "ok"),
    ("deny: [exec]", "exec", {"command": "echo hi"}, "policy"),
]


@pytest.mark.parametrize(("rules", "tool", "args", "expect"), TABLE)
def test_call_rules_from_policy_files_through_the_runtime(
    tmp_path: Path, rules: str, tool: str, args: dict[str, Any], expect: str
) -> None:
    ws = _table_workspace(tmp_path)
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and not p.is_symlink()}
    runtime = runtime_for(ws, f"catalog: nanobot\ntools:\n  {rules}\n")
    out = asyncio.run(runtime.run_skill_command(RunContext(), tool, args))
    if expect == "ok":
        assert out.ok, out
        return
    assert out.veto is not None and out.veto.kind == expect, out
    after = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and not p.is_symlink()}
    assert after == before  # a refused call changed nothing
