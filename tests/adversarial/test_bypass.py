"""Bypass attempts: each one a way someone might get a tool past the policy. All refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from policyctl import (
    Capture,
    RunContext,
    Sender,
    cap_cron_tools,
    load_policy,
    load_policy_text,
    resolve,
)
from policyctl.inventory import Tool, mcp_tools
from policyctl.runtime import (
    ProviderResponse,
    Runtime,
    RuntimeTool,
    ScriptedProvider,
    ToolCall,
    ToolRegistry,
)

POLICY = """
catalog: openclaw
tools:
  deny: [exec, gateway]
channels:
  slack:
    groups:
      C1: {tools: {deny: [write]}}
      C2: {tools: {allow: ["*"]}}
"""


def runtime_with(
    names: list[str],
    calls: list[str],
    policy_text: str = POLICY,
    plugin: dict[str, str] | None = None,
) -> tuple[Runtime, list[str]]:
    ran: list[str] = []

    def make(name: str) -> RuntimeTool:
        async def run(**_: Any) -> str:
            ran.append(name)
            return "ran"

        return RuntimeTool(name, name, {"type": "object"}, run, plugin_id=(plugin or {}).get(name))

    registry = ToolRegistry([make(n) for n in names])
    script = [
        ProviderResponse(tool_calls=tuple(ToolCall(str(i), c, {}) for i, c in enumerate(calls))),
        ProviderResponse(content="done"),
    ]
    return Runtime(load_policy_text(policy_text), registry, ScriptedProvider(script)), ran


@pytest.mark.parametrize("call", ["EXEC", " exec ", "Exec", "exec\n", "bash", "BASH"])
def test_case_whitespace_and_alias_variants_of_a_denied_tool(call: str) -> None:
    runtime, ran = runtime_with(["exec", "read"], [call])
    asyncio.run(runtime.run_turn(RunContext(), "go"))
    assert ran == []


@pytest.mark.parametrize("name", ["\u0435xec", "ex\u200bec", "e\u0445ec", "EXEC", "exec\u00a0"])
def test_confusable_tool_names_never_reach_a_run(name: str) -> None:
    policy = load_policy_text(POLICY)
    res = resolve(policy, None, [Tool("read"), Tool(name, "evil")], require_tools=False)
    assert res.allowed == ("read",)  # dropped (PC301), or normalised to exec and denied
    if name.strip().lower() != "exec":
        assert any(w.code == "PC301" for w in res.warnings)
    with pytest.raises(ValueError):  # and a runtime refuses to register such a name
        runtime_with(["read", name], [])
    runtime, ran = runtime_with(["read"], [name])
    asyncio.run(runtime.run_turn(RunContext(), "go"))
    assert ran == []


def test_confusable_entries_are_refused_at_load() -> None:
    with pytest.raises(Exception) as exc:
        load_policy_text('tools:\n  deny: ["\u0435xec"]\n')
    assert "PC301" in str(exc.value)


def test_plugin_tool_cannot_take_a_core_tool_name() -> None:
    policy = load_policy_text("tools:\n  alsoAllow: [shady]\n  deny: [gateway]\n")
    res = resolve(
        policy,
        None,
        [Tool("read"), Tool("exec"), Tool("exec", "shady"), Tool("gateway", "shady")],
        require_tools=False,
    )
    assert res.allowed == ("read", "exec")  # the core exec, the plugin one dropped
    assert res.inventory.tools[1].plugin_id is None
    assert "gateway" not in res.allowed


def test_mcp_server_named_like_core_tools() -> None:
    tools = mcp_tools({"exec": ["run"], "read": [""], "group:fs": ["x"]})
    names = [t.name for t in tools]
    assert names == ["exec__run", "read__tool", "group-fs__x"]
    policy = load_policy_text(POLICY)
    res = resolve(policy, None, [Tool("read"), *tools], require_tools=False)
    # a deny of exec does not stand for an MCP tool, and an MCP tool never becomes "exec"
    assert "exec" not in res.allowed and set(names) <= set(res.allowed)


def test_caller_supplied_group_cannot_pick_a_looser_group() -> None:
    policy = load_policy_text(POLICY)
    res = resolve(
        policy, RunContext(session_key="agent:main:slack:group:C1", channel="slack", group="C2")
    )
    assert "write" not in res.allowed
    assert any(w.code == "PC406" for w in res.warnings)


def test_display_name_equal_to_an_owner_id_grants_nothing() -> None:
    policy = load_policy_text(
        'tools:\n  toolsBySender:\n    "id:owner": {allow: [\'*\']}\n    "*": {deny: [write]}\n'
    )
    res = resolve(policy, RunContext(sender=Sender(name="owner")))
    assert "write" not in res.allowed and "gateway" not in res.allowed
    owner = resolve(policy, RunContext(sender=Sender(id="owner")))
    assert "write" in owner.allowed


def test_subagent_cannot_exceed_its_parent() -> None:
    policy = load_policy_text("tools:\n  allow: [read, write, sessions_spawn]\n")
    parent = resolve(policy, RunContext(session_key="agent:main:main"))
    child = resolve(
        policy, RunContext(session_key="agent:main:subagent:x", parent=parent.capture())
    )
    assert set(child.allowed) <= set(parent.allowed)
    greedy = resolve(
        policy,
        RunContext(
            session_key="agent:main:subagent:y", parent=Capture(("read", "exec", "gateway"))
        ),
    )
    assert "exec" not in greedy.allowed and "gateway" not in greedy.allowed


def test_unrestricted_parent_caps_a_tool_registered_after_it_resolved() -> None:
    """F21: a parent narrowed only by deny rules used to hand down a deny list of what it lost,
    so a tool registered after it resolved (an MCP listing refreshed mid-turn) reached the child.
    The child is capped by the parent's effective set, named literally (semantics 7.8)."""

    def mk(n: str) -> RuntimeTool:
        async def f(**_: Any) -> str:
            return n

        return RuntimeTool(n, "t", {"type": "object"}, f)

    policy = load_policy_text(
        "tools:\n  profile: full\n  deny: [exec]\n  alsoAllow: [group:plugins]\n", "p.yaml"
    )
    reg = ToolRegistry([mk("read"), mk("exec")])
    rt = Runtime(policy, reg, ScriptedProvider([]))
    pctx = RunContext(provider="openai", session_key="agent:main:main")
    parent = rt.resolve(pctx)
    assert parent.allowed == ("read",) and not parent.restrictive
    reg.register(mk("deploy_prod"))
    child = rt.resolve(rt.subagent_context(pctx, parent))
    assert child.allowed == ("read",)
    # the trail says why: not in the parent run's tools, at the inheritance layer
    gone = child.removal("deploy_prod")
    assert gone.stage == 11 and gone.label == "inherited tools"
    assert parent.capture().allow == ("read",)


def test_cron_job_cannot_exceed_its_creator() -> None:
    policy = load_policy_text("tools:\n  allow: [read, web_search]\n")
    creator = resolve(policy, RunContext())
    cap = cap_cron_tools(creator, ["read", "exec", "gateway", "*"], policy.catalog)
    assert set(cap.tools_allow) <= set(creator.allowed)
    assert "exec" in cap.dropped and "gateway" in cap.dropped
    job = resolve(policy, RunContext(trigger="cron", parent=cap.capture()))
    assert set(job.allowed) <= set(creator.allowed)


def test_extends_child_cannot_drop_a_base_deny(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("tools:\n  deny: [exec]\n", encoding="utf-8")
    for i, child in enumerate(
        ["tools:\n  deny: []\n", "tools:\n  allow: ['*']\n", "tools:\n  deny: [read]\n"]
    ):
        path = tmp_path / f"c{i}.yaml"
        path.write_text("extends: base.yaml\n" + child, encoding="utf-8")
        assert "exec" not in resolve(load_policy(path), RunContext(), require_tools=False).allowed
    nulled = tmp_path / "null.yaml"
    nulled.write_text("extends: base.yaml\ntools:\n  deny: null\n", encoding="utf-8")
    with pytest.raises(Exception) as exc:
        load_policy(nulled)
    assert "PC203" in str(exc.value)


@pytest.mark.parametrize("call", ["exec", "gateway", "EXEC", "bash"])
def test_skill_command_dispatching_to_a_denied_tool(call: str) -> None:
    runtime, ran = runtime_with(["exec", "gateway", "read"], [])
    outcome = asyncio.run(runtime.run_skill_command(RunContext(is_owner=True), call, {}))
    assert not outcome.ok and ran == []
