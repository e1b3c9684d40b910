"""Semantics 7: each of the eleven layers, its selection rules and its precedence edges."""

from __future__ import annotations

import pytest
from conftest import MakePolicy, removed_at, run

from policyctl import Capture

# -- layer 1: profile ----------------------------------------------------------------------------

PROFILES = """
tools:
  profile: coding
  alsoAllow: [browser]
agents:
  entries:
    chat:
      tools:
        profile: messaging
    canvasser:
      tools:
        alsoAllow: [canvas]
    everything:
      tools:
        profile: full
"""


@pytest.mark.parametrize(
    ("agent", "tool", "stage"),
    [
        (None, "exec", None),  # in coding
        (None, "browser", None),  # global alsoAllow widens the profile
        (None, "message", 1),  # not in coding
        ("chat", "message", None),  # agent profile replaces the global one
        ("chat", "exec", 1),
        ("chat", "browser", None),  # global alsoAllow still applies (agent has none)
        ("canvasser", "canvas", None),
        ("canvasser", "browser", 1),  # the agent's alsoAllow replaces the global list
        ("everything", "message", None),
        ("everything", "nodes", 0),  # full profile, but nodes is owner-only
    ],
)
def test_profile_layer(
    make_policy: MakePolicy, agent: str | None, tool: str, stage: int | None
) -> None:
    res = run(make_policy(PROFILES), agent=agent)
    assert removed_at(res, tool) == stage
    assert res.layers[0].applied


def test_profile_labels_and_skips(make_policy: MakePolicy) -> None:
    res = run(make_policy(PROFILES), agent="everything")
    assert res.layers[0].label == "tools.profile (full)" and res.layers[0].removed == ()
    res = run(make_policy("tools: {deny: [exec]}\n"))
    assert not res.layers[0].applied and res.layers[0].skip_reason == "no profile configured"


def test_profile_entries_keep_their_origin(make_policy: MakePolicy) -> None:
    res = run(make_policy("tools:\n  profile: coding\n"))
    r = res.removal("message")
    assert r.kind == "allow" and r.label == "tools.profile (coding)" and r.source.line == 2


# -- layers 2, 4, 6: byProvider ------------------------------------------------------------------

PROVIDERS = """
tools:
  byProvider:
    openai:
      profile: minimal
      alsoAllow: [read]
    openai/gpt-5.4:
      deny: [exec]
    amazon-bedrock:
      deny: [web_search]
    anthropic:
      deny: [write]
agents:
  entries:
    coder:
      tools:
        byProvider:
          openai:
            profile: coding
            deny: [process]
"""


@pytest.mark.parametrize(
    ("ctx", "tool", "stage"),
    [
        ({"provider": "openai"}, "exec", 2),  # minimal profile
        ({"provider": "openai"}, "read", None),  # + alsoAllow
        ({"provider": "OpenAI", "model": "gpt-4o"}, "exec", 2),  # falls back to the provider key
        # the full model key wins and entries are never merged: no profile here
        ({"provider": "openai", "model": "GPT-5.4"}, "exec", 4),
        ({"provider": "openai", "model": "gpt-5.4"}, "web_search", None),
        ({"provider": "bedrock"}, "web_search", 4),  # provider alias
        # openrouter + anthropic/... is provider-scoped: it cannot select the anthropic entry
        ({"provider": "openrouter", "model": "anthropic/claude-x"}, "write", None),
        ({"provider": "anthropic", "model": "claude-x"}, "write", 4),
        # the agent's byProvider: its profile wins at layer 2, its deny applies at layer 6
        ({"provider": "openai", "agent": "coder"}, "exec", None),
        ({"provider": "openai", "agent": "coder"}, "process", 6),
        ({"provider": "openai", "agent": "coder"}, "message", 2),
        ({}, "exec", None),
    ],
)
def test_provider_layers(
    make_policy: MakePolicy, ctx: dict[str, str], tool: str, stage: int | None
) -> None:
    res = run(make_policy(PROVIDERS), require_tools=False, **ctx)
    assert removed_at(res, tool) == stage


def test_provider_layer_skip_reasons(make_policy: MakePolicy) -> None:
    res = run(make_policy(PROVIDERS))
    assert res.layers[1].skip_reason == "no provider in context"
    assert res.layers[3].skip_reason == "no provider in context"
    res = run(make_policy(PROVIDERS), provider="mistral")
    assert res.layers[3].skip_reason == "no matching tools.byProvider entry"


# -- layers 3 and 5: global and agent ------------------------------------------------------------


def test_global_and_agent_layers(make_policy: MakePolicy) -> None:
    policy = make_policy("""
        tools:
          deny: [browser]
        agents:
          entries:
            Coder:
              tools:
                allow: [read, write, exec, browser]
          defaults:
            tools:
              deny: [exec]
        """)
    res = run(policy, agent="coder")  # agent ids are case-insensitive
    assert removed_at(res, "browser") == 3
    assert removed_at(res, "web_search") == 5 and res.removal("web_search").kind == "allow"
    assert res.layers[4].label == "agents.coder.tools.allow"
    # an agent without an entry falls back to agents.defaults.tools
    res = run(policy, agent="stranger")
    assert removed_at(res, "exec") == 5
    res = run(policy)
    assert removed_at(res, "exec") == 5


def test_legacy_agents_list_is_accepted(make_policy: MakePolicy) -> None:
    policy = make_policy("agents:\n  list:\n    - id: coder\n      tools: {deny: [exec]}\n")
    assert removed_at(run(policy, agent="coder"), "exec") == 5
    assert [d.code for d in policy.diagnostics] == ["PC408"]


# -- layer 7: groups ----------------------------------------------------------------------------

GROUPS = """
channels:
  slack:
    groups:
      C1:
        tools: {deny: [exec]}
        toolsBySender:
          "id:boss": {deny: [write]}
      "*":
        tools: {deny: [process]}
        toolsBySender:
          "username:intern": {deny: [read]}
    accounts:
      corp:
        groups:
          C9:
            tools: {deny: [edit]}
  telegram:
    groups:
      "-100":
        tools: {deny: [web_search]}
      "-100:topic:7":
        tools: {deny: [web_fetch]}
"""


@pytest.mark.parametrize(
    ("ctx", "tool", "stage"),
    [
        ({"channel": "slack", "group": "C1"}, "exec", 7),
        ({"channel": "slack", "group": "C1"}, "process", None),  # specific group beats "*"
        ({"channel": "slack", "group": "C1", "sender": {"id": "boss"}}, "write", 7),
        (
            {"channel": "slack", "group": "C1", "sender": {"id": "boss"}},
            "exec",
            None,
        ),  # sender rule wins
        ({"channel": "slack", "group": "C2"}, "process", 7),  # wildcard group
        ({"channel": "slack", "group": "C2", "sender": {"username": "@Intern"}}, "read", 7),
        # a wildcard-group sender rule never overrides a specific group's tools
        ({"channel": "slack", "group": "C1", "sender": {"username": "intern"}}, "read", None),
        ({"channel": "slack", "group": "C1", "sender": {"username": "intern"}}, "exec", 7),
        # account groups replace channel groups
        ({"channel": "slack", "account": "corp", "group": "C9"}, "edit", 7),
        ({"channel": "slack", "account": "corp", "group": "C1"}, "exec", None),
        # candidates: topic -> base
        ({"channel": "telegram", "group": "-100:topic:7"}, "web_fetch", 7),
        ({"channel": "telegram", "group": "-100:topic:7"}, "web_search", None),
        ({"channel": "telegram", "group": "-100:topic:8"}, "web_search", 7),
        ({"channel": "telegram", "group": "-100:topic:7:sender:5"}, "web_fetch", 7),
        ({"channel": "telegram", "group": "-100:sender:5"}, "web_search", 7),
        # group ids are case-sensitive
        ({"channel": "slack", "group": "c1"}, "exec", None),
        ({"channel": "discord", "group": "C1"}, "exec", None),
    ],
)
def test_group_layer(
    make_policy: MakePolicy, ctx: dict[str, object], tool: str, stage: int | None
) -> None:
    res = run(make_policy(GROUPS), **ctx)
    assert removed_at(res, tool) == stage


def test_session_key_decides_the_group(make_policy: MakePolicy) -> None:
    policy = make_policy(GROUPS)
    # the caller says C2 (looser); the session key says C1: C1 applies and a warning says why
    res = run(policy, session_key="agent:main:slack:group:C1", channel="slack", group="C2")
    assert removed_at(res, "exec") == 7
    assert any(w.code == "PC406" for w in res.warnings)
    # a DM key names no group: a caller-supplied group only adds its policy (the narrower
    # reading, PC440); tests/test_context_disagreements.py has every such pair
    res = run(policy, session_key="agent:main:slack:dm:u1", channel="slack", group="C1")
    assert removed_at(res, "exec") == 7
    assert any(w.code == "PC440" for w in res.warnings)
    # a DM key names its channel: a caller's other channel is ignored, with a diagnostic
    res = run(policy, session_key="agent:main:slack:dm:u1", channel="telegram")
    assert res.context.channel == "slack"
    assert any(w.code == "PC406" and "telegram" in w.message for w in res.warnings)
    # a spawned run takes channel and group from the spawning session's key
    res = run(policy, session_key="agent:main:subagent:x", spawned_by="agent:main:slack:group:C1")
    assert removed_at(res, "exec") == 7
    # account from the session key
    res = run(policy, session_key="agent:main:slack:corp:group:C9")
    assert removed_at(res, "edit") == 7


def test_cron_run_with_unconfigured_account_fails_closed(make_policy: MakePolicy) -> None:
    policy = make_policy(GROUPS)
    res = run(
        policy, channel="slack", account="deleted", group="C1", trigger="cron", require_tools=False
    )
    assert res.allowed == ()
    assert any(w.code == "PC409" for w in res.warnings)
    assert {r.stage for r in res.removed if r.stage} == {7}
    # a user run with an unknown account just uses the channel's groups
    res = run(policy, channel="slack", account="deleted", group="C1")
    assert removed_at(res, "exec") == 7 and "read" in res.allowed


# -- layer 8: senders ---------------------------------------------------------------------------

SENDERS = """
tools:
  toolsBySender:
    "channel:telegram:42": {deny: [exec]}
    "id:42": {deny: [write]}
    "e164:+15550001": {deny: [edit]}
    "username:ada": {deny: [read]}
    "name:ada lovelace": {deny: [process]}
    "*": {deny: [web_search]}
    legacy7: {deny: [browser]}
agents:
  entries:
    quiet:
      tools:
        toolsBySender:
          "id:42": {}
"""


@pytest.mark.parametrize(
    ("ctx", "removed"),
    [
        ({"channel": "telegram", "sender": {"id": "42"}}, "exec"),
        ({"channel": "slack", "sender": {"id": "42"}}, "write"),
        ({"sender": {"id": "42", "e164": "+15550001"}}, "write"),  # id before e164
        ({"sender": {"id": "43", "e164": "+15550001"}}, "edit"),
        ({"sender": {"username": "@ADA"}}, "read"),  # @ and case stripped
        ({"sender": {"name": " Ada Lovelace "}}, "process"),
        ({"sender": {"name": "42"}}, "web_search"),  # a display name never matches an id: key
        ({"sender": {"id": "legacy7"}}, "browser"),  # untyped legacy key = sender id
        ({}, "web_search"),  # no identity at all: only "*"
        ({"trigger": "cron"}, "web_search"),
    ],
)
def test_sender_layer(make_policy: MakePolicy, ctx: dict[str, object], removed: str) -> None:
    res = run(make_policy(SENDERS), **ctx)
    assert res.layers[7].removed == (removed,)


def test_agent_sender_match_wins_even_when_empty(make_policy: MakePolicy) -> None:
    policy = make_policy(SENDERS)
    res = run(policy, agent="quiet", sender={"id": "42"})
    assert not res.layers[7].applied and "has no policy" in (res.layers[7].skip_reason or "")
    assert "write" in res.allowed
    # no agent match: the global table applies
    res = run(policy, agent="quiet", sender={"id": "7"})
    assert res.layers[7].removed == ("web_search",)


def test_legacy_sender_key_warns(make_policy: MakePolicy) -> None:
    policy = make_policy(SENDERS)
    legacy = [d for d in policy.diagnostics if d.code == "PC403"]
    assert len(legacy) == 1 and legacy[0].fix == 'write "id:legacy7"'


# -- layer 9: sandbox ---------------------------------------------------------------------------

SANDBOX = """
session:
  mainKey: home
agents:
  defaults:
    sandbox: {mode: non-main}
  entries:
    always:
      sandbox: {mode: all}
    never:
      sandbox: {mode: "off"}
    lifted:
      tools:
        sandbox:
          tools:
            alsoAllow: [browser, web_search]
    open:
      tools:
        sandbox:
          tools:
            allow: []
    strict:
      tools:
        sandbox:
          tools:
            allow: [read]
            deny: []
"""


@pytest.mark.parametrize(
    ("agent", "key", "sandboxed"),
    [
        ("x", "agent:x:slack:group:C1", True),  # group sessions are non-main
        ("x", "agent:x:main", False),
        ("x", "agent:x:home", False),  # configured mainKey
        ("x", "home", False),
        ("x", "main", False),
        ("x", None, False),  # no session key
        ("always", "agent:always:main", True),
        ("never", "agent:never:slack:group:C1", False),
    ],
)
def test_sandbox_mode(
    make_policy: MakePolicy, agent: str, key: str | None, sandboxed: bool
) -> None:
    res = run(make_policy(SANDBOX), agent=agent, session_key=key)
    assert res.context.sandboxed is sandboxed
    assert res.layers[8].applied is sandboxed


def test_global_session_scope_main_key(make_policy: MakePolicy) -> None:
    policy = make_policy(
        "session: {scope: global}\nagents: {defaults: {sandbox: {mode: non-main}}}\n"
    )
    assert not run(policy, agent="a", session_key="global").context.sandboxed
    assert run(policy, agent="a", session_key="agent:a:slack:group:1").context.sandboxed


@pytest.mark.parametrize(
    ("agent", "tool", "stage"),
    [
        ("always", "exec", None),  # default allow
        ("always", "web_search", 9),  # not in default allow
        ("always", "browser", 9),  # default deny
        ("always", "view_image", None),  # the image tool is always in a non-empty allow
        ("lifted", "browser", None),  # alsoAllow lifts it out of the default deny
        ("lifted", "web_search", None),
        ("lifted", "canvas", 9),
        ("open", "web_search", None),  # allow [] = allow everything
        ("open", "browser", 9),  # ... the default deny still applies
        ("strict", "exec", 9),
        ("strict", "view_image", None),  # image tool appended to [read]
    ],
)
def test_sandbox_policy(make_policy: MakePolicy, agent: str, tool: str, stage: int | None) -> None:
    res = run(
        make_policy(SANDBOX),
        agent=agent,
        session_key=f"agent:{agent}:slack:group:C1",
        is_owner=True,
    )
    assert removed_at(res, tool) == stage


def test_configured_empty_sandbox_deny_replaces_the_default(make_policy: MakePolicy) -> None:
    res = run(make_policy(SANDBOX), agent="strict", session_key="agent:strict:slack:group:C1")
    # browser is gone only because [read] does not allow it, not by the default deny
    assert res.removal("browser").kind == "allow"
    assert res.layers[8].label == "sandbox tools.allow"


def test_sandbox_fields_fall_back_one_by_one(make_policy: MakePolicy) -> None:
    policy = make_policy("""
        tools:
          sandbox:
            tools:
              deny: [exec]
        agents:
          defaults: {sandbox: {mode: all}}
          entries:
            a:
              tools:
                sandbox:
                  tools:
                    allow: [exec, read, browser]
        """)
    res = run(policy, agent="a")
    assert removed_at(res, "exec") == 9  # global deny (agent set no deny)
    assert res.removal("exec").kind == "deny"
    assert removed_at(res, "browser") is None  # explicit deny replaced the default deny
    assert removed_at(res, "write") == 9


def test_explicit_sandbox_deny_is_never_lifted(make_policy: MakePolicy) -> None:
    policy = make_policy(
        "tools:\n  sandbox:\n    tools:\n      alsoAllow: [browser]\n      deny: [browser]\n"
        "agents: {defaults: {sandbox: {mode: all}}}\n"
    )
    assert removed_at(run(policy), "browser") == 9


def test_legacy_image_deny_also_denies_view_image(make_policy: MakePolicy) -> None:
    policy = make_policy(
        "tools:\n  sandbox:\n    tools:\n      deny: [image]\n"
        "agents: {defaults: {sandbox: {mode: all}}}\n"
    )
    assert removed_at(run(policy), "view_image") == 9


# -- layer 10: subagents ------------------------------------------------------------------------

SUBAGENTS = """
tools:
  subagents:
    tools:
      alsoAllow: [gateway, sessions_send]
      deny: [browser]
agents:
  defaults:
    subagents: {maxSpawnDepth: 2}
"""


@pytest.mark.parametrize(
    ("key", "depth", "role"),
    [
        ("agent:a:main", 0, "main"),
        ("agent:a:subagent:x", 1, "orchestrator"),
        ("agent:a:subagent:x:subagent:y", 2, "leaf"),
        ("subagent:x", 1, "orchestrator"),
    ],
)
def test_subagent_roles(make_policy: MakePolicy, key: str, depth: int, role: str) -> None:
    res = run(make_policy(SUBAGENTS), session_key=key, is_owner=True)
    assert (res.context.subagent_depth, res.context.role) == (depth, role)
    assert res.layers[9].applied is (depth > 0)


@pytest.mark.parametrize(
    ("depth", "tool", "stage"),
    [
        (1, "gateway", 10),  # base deny is hard: alsoAllow cannot lift it
        (1, "sessions_send", 10),
        (1, "message", 10),
        (1, "conversations_turn", 10),
        (1, "automations", 10),
        (1, "browser", 10),  # configured deny appended
        (1, "sessions_spawn", None),  # orchestrators may spawn
        (2, "sessions_spawn", 10),  # leaves may not
        (2, "subagents", 10),
        (1, "exec", None),
    ],
)
def test_subagent_policy(make_policy: MakePolicy, depth: int, tool: str, stage: int | None) -> None:
    res = run(
        make_policy(SUBAGENTS),
        session_key="agent:a:subagent:x",
        subagent_depth=depth,
        is_owner=True,
    )
    assert removed_at(res, tool) == stage


def test_subagent_allow_is_a_final_filter(make_policy: MakePolicy) -> None:
    policy = make_policy("tools:\n  subagents:\n    tools:\n      allow: [read, gateway]\n")
    res = run(policy, session_key="agent:a:subagent:x", is_owner=True)
    assert res.allowed == ("read", "skills_read")
    assert res.removal("gateway").kind == "deny"


def test_default_max_spawn_depth_is_one(make_policy: MakePolicy) -> None:
    res = run(make_policy("{}"), session_key="agent:a:subagent:x")
    assert res.context.role == "leaf" and removed_at(res, "sessions_spawn") == 10


# -- layer 11: inheritance ----------------------------------------------------------------------


def test_inheritance_layer(make_policy: MakePolicy) -> None:
    policy = make_policy("{}")
    res = run(policy, parent=Capture(("read", "exec", "write")))
    assert res.allowed == ("read", "write", "exec")
    assert res.removal("edit").stage == 11 and res.removal("edit").label == "inherited tools"
    res = run(policy, parent=Capture(None, ("exec",)))
    assert removed_at(res, "exec") == 11 and "read" in res.allowed
    assert not run(policy).layers[10].applied


def test_memory_flush_keeps_only_read_and_write(make_policy: MakePolicy) -> None:
    res = run(make_policy("{}"), trigger="memory")
    assert res.allowed == ("read", "write")
    res = run(make_policy("{}"), trigger="memory", parent=Capture(("read", "exec")))
    assert res.allowed == ("read",)


def test_memory_flush_runs_without_a_parent_share_one_inheritance_policy(
    make_policy: MakePolicy,
) -> None:
    # built once per catalog, not once per context (validate's matrix has a memory-flush twin
    # of every context); the shared plan says what a fresh one would
    policy = make_policy("agents: {entries: {a: {}, b: {}}}")
    first = run(policy, trigger="memory", agent="a")
    other = run(policy, trigger="memory", agent="b", is_owner=True)
    assert first.plans[10] is other.plans[10]
    layer = first.layers[10]
    assert (layer.applied, layer.label, layer.scope, layer.restrictive) == (
        True,
        "inherited tools",
        "memory flush",
        True,
    )
    assert first.allowed == other.allowed == ("read", "write")
    assert first.plans[10].policy.grants is False  # type: ignore[union-attr]


def test_layers_are_all_reported_in_order(make_policy: MakePolicy) -> None:
    res = run(make_policy("{}"))
    assert [layer.stage for layer in res.layers] == list(range(1, 12))
    assert [layer.name for layer in res.layers] == [
        "profile",
        "provider profile",
        "global",
        "global by provider",
        "agent",
        "agent by provider",
        "group",
        "sender",
        "sandbox",
        "subagent",
        "inheritance",
    ]
    assert all(not layer.applied and layer.skip_reason for layer in res.layers)
