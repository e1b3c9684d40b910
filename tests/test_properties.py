"""The laws of the pipeline, checked on random policies and contexts (hypothesis)."""

from __future__ import annotations

import json
import os
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyctl import RunContext, Sender, cap_cron_tools, load_policy_text, resolve
from policyctl.catalog.inventory import Tool
from policyctl.catalog.load import builtin_catalog
from policyctl.pipeline.result import Resolution

CATALOG = builtin_catalog("openclaw-2026.4")
CORE = [t.id for t in CATALOG.tools]
PLUGIN_TOOLS = [
    Tool("voice_call", "voice"),
    Tool.mcp("gh__pr"),
    Tool.mcp("gh__merge"),
]
INVENTORY = [*(Tool(n) for n in CORE), *PLUGIN_TOOLS]
ENTRIES = [
    *CORE,
    "group:fs",
    "group:runtime",
    "group:web",
    "group:sessions",
    "group:openclaw",
    "group:plugins",
    "voice",
    "bundle-mcp",
    "gh__*",
    "web_*",
    "*",
    "sessions_*",
    "bash",
    "unknown_tool",
    "nope_*",  # matches nothing (an unknown group:x is refused when loading)
]

entry_lists = st.lists(st.sampled_from(ENTRIES), max_size=6, unique=True)
no_star_lists = st.lists(st.sampled_from([e for e in ENTRIES if e != "*"]), max_size=6, unique=True)


@st.composite
def scopes(draw: st.DrawFn, with_profile: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    mode = draw(st.sampled_from(["none", "allow", "also"]))
    if mode == "allow":
        out["allow"] = draw(entry_lists)
    elif mode == "also":
        out["alsoAllow"] = draw(entry_lists)
    if draw(st.booleans()):
        out["deny"] = draw(no_star_lists)
    if with_profile and draw(st.booleans()):
        out["profile"] = draw(st.sampled_from(["coding", "minimal", "messaging", "full"]))
    return out


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    tools = draw(scopes(with_profile=True))
    if draw(st.booleans()):
        tools["byProvider"] = {"openai": draw(scopes(with_profile=True))}
    if draw(st.booleans()):
        tools["toolsBySender"] = {"id:1": draw(scopes()), "*": draw(scopes())}
    if draw(st.booleans()):
        tools["sandbox"] = {"tools": draw(scopes())}
    if draw(st.booleans()):
        tools["subagents"] = {"tools": draw(scopes())}
    agent_tools = draw(scopes(with_profile=True))
    if draw(st.booleans()):
        agent_tools["byProvider"] = {"openai/gpt-5": draw(scopes())}
    return {
        "catalog": "openclaw-2026.4",
        "tools": tools,
        "agents": {
            "defaults": {
                "sandbox": {"mode": draw(st.sampled_from(["off", "all", "non-main"]))},
                "subagents": {"maxSpawnDepth": draw(st.integers(1, 2))},
            },
            "entries": {"a": {"tools": agent_tools}, "b": {}},
        },
        "channels": {
            "slack": {
                "groups": {
                    "C1": {"tools": draw(scopes())},
                    "*": {"toolsBySender": {"id:2": draw(scopes())}},
                }
            }
        },
    }


@st.composite
def contexts(draw: st.DrawFn) -> RunContext:
    key = draw(
        st.sampled_from(
            [
                None,
                "agent:a:main",
                "agent:a:slack:group:C1",
                "agent:a:slack:group:C2",
                "agent:a:subagent:x",
                "agent:a:subagent:x:subagent:y",
            ]
        )
    )
    return RunContext(
        agent=draw(st.sampled_from([None, "a", "b"])),
        provider=draw(st.sampled_from([None, "openai", "anthropic"])),
        model=draw(st.sampled_from([None, "gpt-5"])),
        sender=Sender(id=draw(st.sampled_from([None, "1", "2"]))),
        is_owner=draw(st.booleans()),
        session_key=key,
        spawned_by="agent:a:slack:group:C1" if key and "subagent" in key else None,
    )


def compile_doc(doc: dict[str, Any]):  # type: ignore[no-untyped-def]
    return load_policy_text(json.dumps(doc), "random.json")


def resolve_any(policy, ctx: RunContext) -> Resolution:  # type: ignore[no-untyped-def]
    return resolve(policy, ctx, INVENTORY, require_tools=False)


PROPS = settings(
    max_examples=int(os.environ.get("POLICYCTL_PROPERTY_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@PROPS
@given(documents(), contexts())
def test_each_layer_only_narrows(doc: dict[str, Any], ctx: RunContext) -> None:
    res = resolve_any(compile_doc(doc), ctx)
    alive = {t.name for t in INVENTORY} - {r.tool for r in res.removed if r.stage == 0}
    for layer in res.layers:
        removed = set(layer.removed)
        assert removed <= alive, f"layer {layer.stage} removed a tool that was already gone"
        if not layer.applied:
            assert not removed
        alive -= removed
    assert alive == set(res.allowed)
    assert len(res.removed) + len(res.allowed) == len(INVENTORY)


@PROPS
@given(documents(), contexts())
def test_deny_wins(doc: dict[str, Any], ctx: RunContext) -> None:
    policy = compile_doc(doc)
    res = resolve_any(policy, ctx)
    # A literal tool name in the global deny list is never allowed, whatever else is configured.
    denied = {
        CATALOG.aliases.get(e, e) for e in doc["tools"].get("deny", []) if e in CORE or e == "bash"
    }
    assert denied.isdisjoint(res.allowed)


@PROPS
@given(documents(), contexts(), st.randoms(use_true_random=False))
def test_entry_order_does_not_matter(
    doc: dict[str, Any], ctx: RunContext, rnd: random.Random
) -> None:
    def shuffled(value: Any) -> Any:
        if isinstance(value, dict):
            items = list(value.items())
            rnd.shuffle(items)  # mapping key order must not matter either
            return {k: shuffled(v) for k, v in items}
        if isinstance(value, list):
            copy = [shuffled(v) for v in value]
            rnd.shuffle(copy)
            return copy
        return value

    a = resolve_any(compile_doc(doc), ctx)
    b = resolve_any(compile_doc(shuffled(doc)), ctx)
    assert a.allowed == b.allowed
    assert {(r.tool, r.stage, r.kind) for r in a.removed} == {
        (r.tool, r.stage, r.kind) for r in b.removed
    }


@PROPS
@given(documents(), contexts(), st.sampled_from([None, "agent:a:subagent:x:subagent:y"]))
def test_child_is_subset_of_parent(
    doc: dict[str, Any], ctx: RunContext, child_key: str | None
) -> None:
    policy = compile_doc(doc)
    parent = resolve_any(policy, ctx)
    child_ctx = RunContext(
        agent=ctx.agent,
        provider=ctx.provider,
        model=ctx.model,
        sender=Sender(),
        session_key=child_key or f"agent:{ctx.agent or 'a'}:subagent:child",
        spawned_by=ctx.session_key,
        parent=parent.capture(),
        trigger="spawn",
        is_owner=ctx.is_owner,
    )
    child = resolve_any(policy, child_ctx)
    assert set(child.allowed) <= set(parent.allowed)


@PROPS
@given(documents(), contexts(), st.one_of(st.none(), entry_lists))
def test_cron_job_is_subset_of_creator(
    doc: dict[str, Any], ctx: RunContext, wanted: list[str] | None
) -> None:
    policy = compile_doc(doc)
    creator = resolve_any(policy, ctx)
    cap = cap_cron_tools(creator, wanted, policy.catalog)
    job = resolve_any(policy, RunContext(agent=ctx.agent, trigger="cron", parent=cap.capture()))
    assert set(job.allowed) <= set(creator.allowed)


@PROPS
@given(
    documents(),
    contexts(),
    st.sampled_from(ENTRIES),
    st.sampled_from(["tools", "agent", "group", "sender", "sandbox", "subagents"]),
)
def test_adding_a_deny_entry_never_adds_a_tool(
    doc: dict[str, Any], ctx: RunContext, entry: str, where: str
) -> None:
    scope = {
        "tools": doc["tools"],
        "agent": doc["agents"]["entries"]["a"]["tools"],
        "group": doc["channels"]["slack"]["groups"]["C1"]["tools"],
        "sender": doc["tools"].setdefault("toolsBySender", {}).setdefault("*", {}),
        "sandbox": doc["tools"].setdefault("sandbox", {}).setdefault("tools", {}),
        "subagents": doc["tools"].setdefault("subagents", {}).setdefault("tools", {}),
    }[where]
    # Configuring a sandbox deny list replaces the catalog's default deny (semantics 7.6), so
    # the law is about adding an entry to a list that exists: create it first, then compare.
    scope.setdefault("deny", [])
    before = resolve_any(compile_doc(doc), ctx)
    scope["deny"] = [*scope["deny"], entry]
    after = resolve_any(compile_doc(doc), ctx)
    assert set(after.allowed) <= set(before.allowed)
