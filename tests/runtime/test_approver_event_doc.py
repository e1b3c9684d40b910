"""The approver's event is what docs/runtime.md says it is: its fields, `meta` for a rule's
ask and for a hook's question, and the reason."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from pathlib import Path
from typing import Any

from policyctl import load_policy_text, resolve
from policyctl.context import RunContext
from policyctl.runtime import (
    Approval,
    CallGate,
    RequireApproval,
    RuntimeTool,
    ToolCallEvent,
    ToolRegistry,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"
SHELL = {"type": "object", "properties": {"command": {"type": "string"}}}


def _documented() -> tuple[set[str], str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("**The approver's event**")
    table = text[text.index("| field | what it holds |", start) :]
    rows = [row.strip() for row in table[: table.index("\n\n")].splitlines()[2:]]
    fields = {re.match(r"\| `([a-z_]+)` \|", row).group(1) for row in rows}  # type: ignore[union-attr]
    meta_row = next(row for row in rows if row.startswith("| `meta`"))
    return fields, meta_row


def _gate(seen: list[tuple[ToolCallEvent, str]], hooks: list[Any], rules: str) -> CallGate:
    async def run(**params: Any) -> str:
        return "ran"

    async def approver(event: ToolCallEvent, reason: str) -> Approval:
        seen.append((event, reason))
        return Approval.ONCE

    registry = ToolRegistry([RuntimeTool("exec", "shell", SHELL, run)])
    policy = load_policy_text(f"catalog: nanobot\n{rules}")
    ctx = RunContext(agent="coder", session_key="agent:coder:main")
    res = resolve(policy, ctx, registry.inventory(policy.catalog), require_tools=False)
    return CallGate(res, registry, hooks=hooks, approver=approver)


def test_the_documented_fields_are_the_events_fields() -> None:
    fields, _ = _documented()
    assert fields == {f.name for f in dataclasses.fields(ToolCallEvent)}


def test_a_rule_that_asks_gives_the_documented_meta_and_reason() -> None:
    _, meta_row = _documented()
    seen: list[tuple[ToolCallEvent, str]] = []
    gate = _gate(seen, [], 'tools:\n  ask: ["exec(git push *)"]\n')
    out = asyncio.run(gate.call("exec", {"command": "git push origin main"}))
    assert out.ok
    ((event, reason),) = seen
    assert event.tool == "exec" and event.params == {"command": "git push origin main"}
    assert event.session_key == "agent:coder:main" and event.agent == "coder"
    assert event.trigger == "user"
    assert set(event.meta) == {"callRule", "sessionGrantable"}
    assert event.meta["sessionGrantable"] is True
    documented_verdict = set(
        re.findall(r"`([a-z]+)`", meta_row.split("the verdict that asked")[1].split(")")[0])
    )
    assert set(event.meta["callRule"]) <= documented_verdict
    assert set(event.meta["callRule"]) >= documented_verdict - {"detail"}
    assert reason.startswith('call of exec needs approval: call rule "exec(git push *)"'), reason
    # the doc's example of the reason is this reason
    text = DOC.read_text(encoding="utf-8")
    assert " ".join(reason.split()) in " ".join(text.split()), reason


def test_a_hooks_question_alone_gives_an_empty_meta() -> None:
    async def ask(event: ToolCallEvent) -> RequireApproval:
        return RequireApproval("a person looks at every push")

    seen: list[tuple[ToolCallEvent, str]] = []
    out = asyncio.run(_gate(seen, [ask], "").call("exec", {"command": "git push"}))
    assert out.ok
    ((event, reason),) = seen
    assert event.meta == {} and reason == "a person looks at every push"


def test_a_rule_and_a_hook_asking_together_cannot_be_granted_for_the_session() -> None:
    async def ask(event: ToolCallEvent) -> RequireApproval:
        return RequireApproval("and the hook")

    seen: list[tuple[ToolCallEvent, str]] = []
    gate = _gate(seen, [ask], 'tools:\n  ask: ["exec(git push *)"]\n')
    assert asyncio.run(gate.call("exec", {"command": "git push"})).ok
    ((event, reason),) = seen
    assert event.meta["sessionGrantable"] is False and reason.endswith(
        "; and a hook asks: and the hook"
    )


def test_a_denied_call_never_reaches_the_approver() -> None:
    seen: list[tuple[ToolCallEvent, str]] = []
    gate = _gate(seen, [], 'tools:\n  deny: ["exec(rm *)"]\n  ask: ["exec(*)"]\n')
    out = asyncio.run(gate.call("exec", {"command": "rm -rf x"}))
    assert not out.ok and seen == []
