"""The context matrix is complete: every context resolves like its matrix representative.

Random policies mention agents, providers and models, channels with accounts and groups,
sender keys of every kind, sandbox modes and spawn depths; random contexts use those values,
others the policy never mentions, session keys of every shape, owners and every trigger.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyctl import CompiledPolicy, RunContext, Sender, load_policy_text, resolve
from policyctl.analysis.matrix import Dimensions, representative
from policyctl.context import TRIGGERS

TOOLS = [
    "exec",
    "read",
    "write",
    "browser",
    "gateway",
    "nodes",
    "message",
    "web_search",
    "sessions_send",
    "apply_patch",
    "group:fs",
]
SENDER_KEYS = [
    "id:1",
    "id:2",
    "e164:+15550001",
    "username:ada",
    "name:bob",
    "channel:slack:1",
    "channel:telegram:3",
    "*",
]
GROUP_IDS = ["C1", "C2", "C1:topic:9", "*"]

tool_lists = st.lists(st.sampled_from(TOOLS), max_size=4, unique=True)


@st.composite
def scopes(draw: st.DrawFn, profile: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["allow"] = draw(tool_lists)
    if draw(st.booleans()):
        out["deny"] = draw(tool_lists)
    if profile and draw(st.booleans()):
        out["profile"] = draw(st.sampled_from(["coding", "minimal", "messaging", "full"]))
    return out


@st.composite
def sender_maps(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(SENDER_KEYS), max_size=4, unique=True))
    return {k: draw(scopes()) for k in keys}


@st.composite
def tools_blocks(draw: st.DrawFn) -> dict[str, Any]:
    out = draw(scopes(profile=True))
    keys = draw(st.lists(st.sampled_from(["openai", "anthropic/claude-x", "ollama"]), unique=True))
    if keys:
        out["byProvider"] = {k: draw(scopes(profile=True)) for k in keys}
    if draw(st.booleans()):
        out["toolsBySender"] = draw(sender_maps())
    if draw(st.booleans()):
        out["sandbox"] = {"tools": draw(scopes())}
    return out


@st.composite
def group_maps(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for gid in draw(st.lists(st.sampled_from(GROUP_IDS), max_size=3, unique=True)):
        group: dict[str, Any] = {}
        if draw(st.booleans()):
            group["tools"] = draw(scopes())
        if draw(st.booleans()):
            group["toolsBySender"] = draw(sender_maps())
        out[gid] = group
    return out


MODES = st.sampled_from(["off", "all", "non-main"])


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    for agent in draw(st.lists(st.sampled_from(["a", "b"]), unique=True)):
        entry: dict[str, Any] = {}
        if draw(st.booleans()):
            entry["tools"] = draw(tools_blocks())
        if draw(st.booleans()):
            entry["sandbox"] = {"mode": draw(MODES)}
        entries[agent] = entry
    slack: dict[str, Any] = {"groups": draw(group_maps())}
    if draw(st.booleans()):
        slack["accounts"] = {"ops": {"groups": draw(group_maps())}, "bare": {}}
    doc: dict[str, Any] = {
        "catalog": "openclaw-2026.4",
        "tools": draw(tools_blocks()),
        "agents": {
            "defaults": {
                "sandbox": {"mode": draw(MODES)},
                "subagents": {"maxSpawnDepth": draw(st.integers(1, 3))},
            },
            "entries": entries,
        },
        "channels": {"slack": slack},
    }
    if draw(st.booleans()):
        doc["channels"]["telegram"] = {"groups": draw(group_maps())}
    if draw(st.booleans()):
        doc["session"] = {
            "mainKey": "home",
            "scope": draw(st.sampled_from(["per-sender", "global"])),
        }
    return doc


def _key(agent: str, rest: str) -> str:
    return f"agent:{agent}:{rest}"


@st.composite
def contexts(draw: st.DrawFn) -> RunContext:
    agent = draw(st.sampled_from([None, "a", "b", "ghost"]))
    channel = draw(st.sampled_from([None, "slack", "telegram", "discord"]))
    account = draw(st.sampled_from([None, "ops", "bare", "gone"]))
    group = draw(st.sampled_from([None, "C1", "C2", "C1:topic:9", "C1:topic:9:sender:4", "zz"]))
    who = agent or "a"
    where = f"{channel or 'slack'}:{account + ':' if account else ''}group:{group or 'C1'}"
    shape = draw(
        st.sampled_from(
            ["none", "main", "home", "global", "group", "dm", "cron", "sub", "sub2", "sub3"]
        )
    )
    key = {
        "none": None,
        "main": _key(who, "main"),
        "home": draw(st.sampled_from([_key(who, "home"), "home"])),
        "global": "global",
        "group": _key(who, where),
        "dm": _key(who, "dm:someone"),
        "cron": _key(who, "cron:job1"),
        "sub": _key(who, "subagent:x"),
        "sub2": _key(who, "subagent:x:subagent:y"),
        "sub3": _key(who, "subagent:x:subagent:y:subagent:z"),
    }[shape]
    spawned_by = None
    if shape.startswith("sub"):
        spawned_by = draw(st.sampled_from([_key(who, "main"), _key(who, where), None]))
    if key is None and group is not None:
        # A group named without a session key is a group session (semantics 7.6); give it
        # the key it would have so the case does not depend on how the engine reads it.
        key = _key(who, where)
    return RunContext(
        agent=agent,
        provider=draw(
            st.sampled_from(
                [None, "openai", "openai-codex", "anthropic", "ollama", "mistral", "bedrock"]
            )
        ),
        model=draw(st.sampled_from([None, "claude-x", "gpt-5"])),
        channel=channel,
        account=account,
        group=group,
        sender=Sender(
            id=draw(st.sampled_from([None, "1", "2", "3", "99"])),
            e164=draw(st.sampled_from([None, "+15550001", "+15559999"])),
            username=draw(st.sampled_from([None, "ada", "@Ada", "eve"])),
            name=draw(st.sampled_from([None, "bob", "1"])),
        ),
        is_owner=draw(st.booleans()),
        session_key=key,
        spawned_by=spawned_by,
        trigger=draw(st.sampled_from(TRIGGERS)),  # type: ignore[arg-type]
    )


def _compile(doc: dict[str, Any]) -> CompiledPolicy:
    return load_policy_text(json.dumps(doc), "random.json")


PROPS = settings(
    max_examples=int(os.environ.get("POLICYCTL_PROPERTY_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@PROPS
@given(documents(), contexts())
def test_every_context_resolves_like_its_matrix_cell(doc: dict[str, Any], ctx: RunContext) -> None:
    policy = _compile(doc)
    rep = representative(policy, ctx)
    got = resolve(policy, ctx, require_tools=False)
    want = resolve(policy, rep.context, require_tools=False)
    assert got.allowed == want.allowed, (rep.label, got.context, want.context)
    # and every other tool is removed at the same layer, which is what `matrix` shows
    stages = {r.tool: r.stage for r in got.removed}
    assert stages == {r.tool: r.stage for r in want.removed}, rep.label
    # the representative is a cell of the matrix, not a context made up for the occasion
    dims = Dimensions(policy)
    index = dims.index_of(dims.cell_of(want.context))
    assert dims.context_at(index).label == rep.label
