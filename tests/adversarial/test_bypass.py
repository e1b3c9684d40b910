"""Bypass attempts: each one a way someone might get a tool past the policy. All refused.

Every attempt is written against a policy text and run twice: under the policy it attacks,
where it must be refused, and under an allow-everything policy, where the same assertions must
FAIL (`test_each_attempt_fails_under_an_allow_everything_policy`). An attempt that passed under
both would prove nothing about the policy. Refusals that do not depend on the policy at all
(exact-name lookup, confusable names) are at the end, checked under the allow-everything policy
with a control that shows the real tool would have run there."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policyctl import (
    Capture,
    PolicyError,
    RunContext,
    Sender,
    cap_cron_tools,
    load_policy,
    load_policy_text,
    resolve,
)
from policyctl.catalog.inventory import Tool, mcp_tools
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
# Grants every tool a policy can grant: what each attempt below must NOT survive.
ALLOW_EVERYTHING = 'tools: {allow: ["*"]}\n'


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


Attempt = Callable[[Callable[[str], str]], None]
ATTEMPTS: dict[str, Attempt] = {}


def attempt(fn: Attempt) -> Attempt:
    """Register a bypass attempt. It gets `policy(text)`: the policy text to use, which the
    meta-test swaps for ALLOW_EVERYTHING."""
    ATTEMPTS[fn.__name__] = fn
    return fn


def as_written(text: str) -> str:
    return text


def permissive(_text: str) -> str:
    return ALLOW_EVERYTHING


@attempt
def skill_command_to_a_denied_tool(policy: Callable[[str], str]) -> None:
    for call in ("exec", "gateway"):
        runtime, ran = runtime_with(["exec", "gateway", "read"], [], policy(POLICY))
        outcome = asyncio.run(runtime.run_skill_command(RunContext(is_owner=True), call, {}))
        assert not outcome.ok and ran == []


@attempt
def plugin_tool_taking_a_core_tool_name(policy: Callable[[str], str]) -> None:
    # The policy lets the plugin in and denies the core exec; the plugin's own "exec" must
    # neither stand in for the core tool nor slip past its deny.
    text = policy("tools:\n  alsoAllow: [shady]\n  deny: [exec]\n")
    res = resolve(
        load_policy_text(text),
        None,
        [Tool("read"), Tool("exec"), Tool("exec", "shady"), Tool("shady_ok", "shady")],
        require_tools=False,
    )
    assert res.allowed == ("read", "shady_ok")
    assert all(t.plugin_id is None for t in res.inventory.tools if t.name == "exec")


@attempt
def plugin_tool_named_like_a_denied_tool_in_other_case(
    policy: Callable[[str], str],
) -> None:
    # "EXEC" and "exec" + no-break space normalise to exec: the deny of exec must hold
    for name in ("EXEC", "exec\u00a0", " Exec "):
        res = resolve(load_policy_text(policy(POLICY)), None, [Tool("read"), Tool(name, "evil")])
        assert res.allowed == ("read",)


@attempt
def mcp_server_named_like_core_tools(policy: Callable[[str], str]) -> None:
    tools = mcp_tools({"exec": ["run"], "read": [""], "group:fs": ["x"]})
    names = [t.name for t in tools]
    assert names == ["exec__run", "read__tool", "group-fs__x"]
    res = resolve(
        load_policy_text(policy(POLICY)), None, [Tool("exec"), *tools], require_tools=False
    )
    # a deny of exec does not stand for an MCP tool, and an MCP tool never becomes "exec"
    assert "exec" not in res.allowed and set(names) <= set(res.allowed)


@attempt
def caller_supplied_group_picking_a_looser_group(policy: Callable[[str], str]) -> None:
    res = resolve(
        load_policy_text(policy(POLICY)),
        RunContext(session_key="agent:main:slack:group:C1", channel="slack", group="C2"),
    )
    assert "write" not in res.allowed
    assert any(w.code == "PC406" for w in res.warnings)


@attempt
def display_name_equal_to_an_owner_id(policy: Callable[[str], str]) -> None:
    text = policy(
        'tools:\n  toolsBySender:\n    "id:owner": {allow: [\'*\']}\n    "*": {deny: [write]}\n'
    )
    res = resolve(load_policy_text(text), RunContext(sender=Sender(name="owner")))
    assert "write" not in res.allowed


@attempt
def subagent_with_a_forged_parent_capture(policy: Callable[[str], str]) -> None:
    compiled = load_policy_text(policy("tools:\n  allow: [read, write, sessions_spawn]\n"))
    parent = resolve(compiled, RunContext(session_key="agent:main:main"))
    child = resolve(
        compiled, RunContext(session_key="agent:main:subagent:x", parent=parent.capture())
    )
    assert set(child.allowed) <= set(parent.allowed)
    greedy = resolve(
        compiled,
        RunContext(session_key="agent:main:subagent:y", parent=Capture(("read", "exec"))),
    )
    assert "exec" not in greedy.allowed


@attempt
def cron_job_asking_for_more_than_its_creator(policy: Callable[[str], str]) -> None:
    compiled = load_policy_text(policy("tools:\n  allow: [read, web_search]\n"))
    creator = resolve(compiled, RunContext())
    cap = cap_cron_tools(creator, ["read", "exec", "*"], compiled.catalog)
    assert "exec" in cap.dropped and "exec" not in cap.tools_allow
    job = resolve(compiled, RunContext(trigger="cron", parent=cap.capture()))
    assert "exec" not in job.allowed


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


@attempt
def extends_child_dropping_a_base_deny(policy: Callable[[str], str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "base.yaml").write_text(policy("tools:\n  deny: [exec]\n"), encoding="utf-8")
        for i, child in enumerate(
            ["tools:\n  deny: []\n", "tools:\n  allow: ['*']\n", "tools:\n  deny: [read]\n"]
        ):
            path = root / f"c{i}.yaml"
            path.write_text("extends: base.yaml\n" + child, encoding="utf-8")
            res = resolve(load_policy(path), RunContext(), require_tools=False)
            assert "exec" not in res.allowed


@pytest.mark.parametrize("name", sorted(ATTEMPTS))
def test_bypass_attempt_is_refused(name: str) -> None:
    ATTEMPTS[name](as_written)


@pytest.mark.parametrize("name", sorted(ATTEMPTS))
def test_each_attempt_fails_under_an_allow_everything_policy(name: str) -> None:
    """The attempt's assertions depend on the policy: with every tool allowed they fail."""
    with pytest.raises(AssertionError):
        ATTEMPTS[name](permissive)


def test_extends_cannot_erase_a_base_deny_with_null(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("tools:\n  deny: [exec]\n", encoding="utf-8")
    nulled = tmp_path / "null.yaml"
    nulled.write_text("extends: base.yaml\ntools:\n  deny: null\n", encoding="utf-8")
    with pytest.raises(PolicyError) as exc:
        load_policy(nulled)
    assert "PC203" in str(exc.value)


# -- refusals that do not depend on the policy: checked where the policy allows everything --


@pytest.mark.parametrize("call", ["EXEC", " exec ", "Exec", "exec\n", "bash", "BASH"])
def test_a_call_must_name_the_tool_exactly(call: str) -> None:
    runtime, ran = runtime_with(["exec", "read"], [call], ALLOW_EVERYTHING)
    asyncio.run(runtime.run_turn(RunContext(), "go"))
    assert ran == []
    control, ran = runtime_with(["exec", "read"], ["exec"], ALLOW_EVERYTHING)
    asyncio.run(control.run_turn(RunContext(), "go"))
    assert ran == ["exec"]  # the policy would have let the real name through


@pytest.mark.parametrize("name", ["\u0435xec", "ex\u200bec", "e\u0445ec"])
def test_confusable_tool_names_never_reach_a_run(name: str) -> None:
    policy = load_policy_text(ALLOW_EVERYTHING)
    res = resolve(policy, None, [Tool("read"), Tool(name, "evil"), Tool("ok", "evil")])
    assert res.allowed == ("read", "ok")  # the plugin's other tool is allowed: only the name is
    assert any(w.code == "PC301" for w in res.warnings)
    with pytest.raises(ValueError):  # and a runtime refuses to register such a name
        runtime_with(["read", name], [])
    runtime, ran = runtime_with(["read"], [name], ALLOW_EVERYTHING)
    asyncio.run(runtime.run_turn(RunContext(), "go"))
    assert ran == []


def test_confusable_entries_are_refused_at_load() -> None:
    with pytest.raises(PolicyError) as exc:
        load_policy_text('tools:\n  deny: ["\u0435xec"]\n')
    assert "PC301" in str(exc.value)
