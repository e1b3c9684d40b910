"""Every entry point resolves with the full pipeline: a tool removed by any of the eleven layers
cannot be executed through any of them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from policyctl import Capture, RunContext, Sender, load_policy_text
from policyctl.runtime import (
    ProviderResponse,
    Runtime,
    RuntimeTool,
    ScriptedProvider,
    SpawnRefused,
    ToolCall,
    ToolRegistry,
)
from policyctl.runtime.mcp import as_mcp_tool

# t<k> is removed at layer k for the base context below; `ok` survives everything.
POLICY = """
catalog: openclaw
tools:
  profile: coding
  alsoAllow: [t2]                  # layer 1 keeps t2 (plugin lab2) and drops t1 (plugin lab)
  deny: [t3]
  byProvider:
    openai:
      profile: coding              # layer 2: coding (with bundle-mcp) but without t2
      deny: [t4]
  toolsBySender:
    "*": {deny: [t8]}
  sandbox:
    tools:
      allow: ["*"]
      deny: [t9]
  subagents:
    tools:
      deny: [t10]
agents:
  defaults:
    sandbox: {mode: all}
    subagents: {maxSpawnDepth: 3}
  entries:
    coder:
      tools:
        deny: [t5]
        byProvider:
          openai: {deny: [t6]}
channels:
  telegram:
    groups:
      "-100":
        tools: {deny: [t7]}
"""
LAYER_TOOLS = [f"t{k}" for k in range(1, 12)]


class Counter:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def tool(self, name: str, plugin: str | None) -> RuntimeTool:
        async def run(**_: Any) -> str:
            self.calls.append(name)
            return f"{name} ran"

        made = RuntimeTool(name, name, {"type": "object", "properties": {}}, run, read_only=True)
        return as_mcp_tool(made) if plugin == "bundle-mcp" else made


def setup(script: list[ProviderResponse]) -> tuple[Runtime, Counter, ScriptedProvider]:
    counter = Counter()
    tools = [
        counter.tool("t1", "lab"),
        counter.tool("t2", "lab2"),
        *(counter.tool(t, "bundle-mcp") for t in LAYER_TOOLS[2:]),
        counter.tool("ok", "bundle-mcp"),
        counter.tool("read", None),
        counter.tool("write", None),
    ]
    provider = ScriptedProvider(script)
    return Runtime(load_policy_text(POLICY), ToolRegistry(tools), provider), counter, provider


BASE = RunContext(
    agent="coder",
    provider="openai",
    sender=Sender(id="42"),
    session_key="agent:coder:subagent:s1",
    spawned_by="agent:coder:telegram:group:-100",
    subagent_depth=1,
    parent=Capture(None, ("t11",)),
)


def attempt_all() -> list[ProviderResponse]:
    calls = tuple(ToolCall(str(i), name, {}) for i, name in enumerate([*LAYER_TOOLS, "ok"]))
    return [ProviderResponse(tool_calls=calls), ProviderResponse(content="done")]


def test_base_context_removes_each_tool_at_its_layer() -> None:
    runtime, _, _ = setup([])
    res = runtime.resolve(BASE)
    for k, name in enumerate(LAYER_TOOLS, start=1):
        removal = res.removal(name)
        assert removal is not None and removal.stage == k, (name, removal)
    assert res.is_allowed("ok")


def _refused(messages: list[dict[str, Any]]) -> set[str]:
    return {
        m["name"] for m in messages if m["role"] == "tool" and '"status": "blocked"' in m["content"]
    }


def test_normal_turn() -> None:
    runtime, counter, _ = setup(attempt_all())
    result = asyncio.run(runtime.run_turn(BASE, "go"))
    assert counter.calls == ["ok"]
    assert _refused(result.messages) == set(LAYER_TOOLS)


@pytest.mark.parametrize("name", LAYER_TOOLS)
def test_skill_command_cannot_bypass_any_layer(name: str) -> None:
    # GHSA-mhm4-93fw-4qr2: a skill dispatch that applied only the owner-only filter
    runtime, counter, _ = setup([])
    outcome = asyncio.run(runtime.run_skill_command(BASE, name, {}))
    assert not outcome.ok and outcome.veto is not None and outcome.veto.kind == "policy"
    assert counter.calls == []
    assert asyncio.run(runtime.run_skill_command(BASE, "ok", {})).ok


def test_cron_job_is_capped_by_its_creator() -> None:
    runtime, counter, _ = setup(attempt_all())
    job = runtime.schedule_cron_job(BASE, "nightly", [*LAYER_TOOLS, "ok"])
    assert job.tools_allow == ("ok",)
    assert set(job.dropped) == set(LAYER_TOOLS) and job.warnings[0].code == "PC407"
    ctx = runtime.cron_context(job)
    assert ctx.sender.empty and ctx.trigger == "cron"
    result = asyncio.run(runtime.run_cron_job(job))
    assert counter.calls == ["ok"] and _refused(result.messages) == set(LAYER_TOOLS)


def test_cron_job_with_nothing_allowed_stops_before_the_model() -> None:
    runtime, counter, provider = setup(attempt_all())
    job = runtime.schedule_cron_job(BASE, "nightly", [])
    assert job.tools_allow == ()
    result = asyncio.run(runtime.run_cron_job(job))
    assert result.stopped.startswith("no-tools") and provider.requests == [] and counter.calls == []


def test_spawned_subagent() -> None:
    runtime, counter, _ = setup(attempt_all())
    parent = runtime.resolve(BASE)
    child_ctx = runtime.subagent_context(BASE, parent, "c1")
    assert child_ctx.session_key == "agent:coder:subagent:s1:subagent:c1"
    assert child_ctx.spawned_by == BASE.spawned_by and child_ctx.subagent_depth == 2
    child = runtime.resolve(child_ctx)
    assert set(child.allowed) <= set(parent.allowed)
    result = asyncio.run(runtime.spawn_subagent(BASE, parent, "help", "c1"))
    assert counter.calls == ["ok"] and _refused(result.messages) == set(LAYER_TOOLS)


def test_leaf_cannot_spawn() -> None:
    runtime, _, _ = setup([])
    leaf_ctx = RunContext(agent="coder", session_key="agent:coder:subagent:a:subagent:b:subagent:c")
    leaf = runtime.resolve(leaf_ctx)
    assert leaf.context.role == "leaf"
    with pytest.raises(SpawnRefused):
        runtime.subagent_context(leaf_ctx, leaf)


def test_memory_flush_keeps_only_read_and_write() -> None:
    calls = (
        *(ToolCall(str(i), n, {}) for i, n in enumerate([*LAYER_TOOLS, "ok"])),
        ToolCall("r", "read", {}),
        ToolCall("w", "write", {}),
    )
    runtime, counter, provider = setup(
        [ProviderResponse(tool_calls=calls), ProviderResponse(content="x")]
    )
    ctx = RunContext(
        agent="coder", provider="openai", session_key="agent:coder:main", is_owner=True
    )
    asyncio.run(runtime.run_memory_flush(ctx, "flush"))
    assert sorted(counter.calls) == ["read", "write"]
    assert [t["function"]["name"] for t in provider.requests[0][1]] == ["read", "write"]
