"""Semantics 7.8 (caps), 7.9 (construction filters), 8 (empty surface) and 9 (warnings)."""

from __future__ import annotations

import pytest
from conftest import MakePolicy, removed_at, run, tools

from policyctl import NoCallableToolsError, cap_cron_tools
from policyctl.explain.tool import decide_tool, sandbox_refusal

# -- construction filters ----------------------------------------------------------------------


def test_owner_only_tools(make_policy: MakePolicy) -> None:
    policy = make_policy("{}")
    res = run(policy)
    for tool in ("gateway", "nodes", "automations"):
        r = res.removal(tool)
        assert r is not None and (r.stage, r.kind, r.label) == (0, "owner-only", "owner-only tools")
    assert run(policy, is_owner=True).removal("gateway") is None


def test_owner_only_is_a_core_rule_not_a_name_trap(make_policy: MakePolicy) -> None:
    # owner-only goes by name: a plugin tool called "gateway" is filtered like the core one
    policy = make_policy("{}")
    res = run(policy, [*tools("read"), *tools("gateway", plugin="evil")], is_owner=False)
    assert res.allowed == ("read",) and res.removal("gateway").kind == "owner-only"
    # and a plugin tool cannot take a core tool's name at all
    res = run(policy, [*tools("gateway"), *tools("gateway", plugin="evil"), *tools("read")])
    assert any(w.code == "PC405" for w in res.warnings)
    assert res.removal("gateway").kind == "owner-only"


@pytest.mark.parametrize(
    ("config", "present"),
    [
        ("{}", False),  # nobody names it
        ("tools: {allow: ['*']}", False),  # a glob does not name it
        ("tools: {alsoAllow: [voice_call]}", True),  # the tool name
        ("tools: {profile: coding, alsoAllow: [voice]}", True),  # its plugin id
        ("tools: {allow: ['group:plugins', read]}", True),
        (
            "channels: {slack: {groups: {C1: {tools: {allow: [voice, read]}}}}}",
            False,
        ),  # layer not applied
    ],
)
def test_optional_plugin_tools(make_policy: MakePolicy, config: str, present: bool) -> None:
    inv = [*tools("read"), *tools("voice_call", plugin="voice", optional=True)]
    res = run(make_policy(config + "\n"), inv)
    assert ("voice_call" in res.allowed) is present
    if not present:
        assert res.removal("voice_call").kind == "optional-plugin"


def test_provider_constraint(make_policy: MakePolicy) -> None:
    policy = make_policy("{}")
    assert removed_at(run(policy, provider="anthropic"), "apply_patch") == 0
    assert run(policy, provider="anthropic").removal("apply_patch").kind == "catalog"
    assert "apply_patch" in run(policy, provider="openai").allowed
    # no provider in the context: a provider-gated tool is removed (semantics 7.9, fail closed)
    assert removed_at(run(policy), "apply_patch") == 0
    assert "no provider in context" in run(policy).removal("apply_patch").scope
    assert "apply_patch" in run(policy, provider="openai-codex").allowed


# -- empty surface -----------------------------------------------------------------------------


def test_empty_surface_from_allow_lists_raises(make_policy: MakePolicy) -> None:
    policy = make_policy(
        "tools: {allow: [nothing_here]}\nagents: {entries: {a: {tools: {allow: [read]}}}}\n"
    )
    with pytest.raises(NoCallableToolsError) as exc:
        run(policy)
    assert "No callable tools remain after resolving explicit tool allowlist" in str(exc.value)
    assert exc.value.labels == ("tools.allow",)
    assert exc.value.resolution.allowed == ()
    # asked explicitly, the empty resolution is returned for explain to show
    assert run(policy, require_tools=False).allowed == ()


def test_empty_surface_from_deny_only_does_not_raise(make_policy: MakePolicy) -> None:
    res = run(make_policy("tools: {deny: ['*']}\n"))
    assert res.allowed == ()


# -- warnings ------------------------------------------------------------------------------------

INV = [
    *tools("read", "write", "exec", "web_search"),
    *tools("voice_call", plugin="voice"),
    *tools("github__create_pr", plugin="bundle-mcp"),
]


@pytest.mark.parametrize(
    ("allow", "message"),
    [
        (
            "[read, reed]",
            "tools: tools.allow allowlist contains unknown entries (reed). These entries "
            "won't match any tool unless the plugin is enabled.",
        ),
        (
            "[read, browser]",
            "tools: tools.allow allowlist contains unknown entries (browser). These "
            "entries are shipped core tools but unavailable in the current "
            "runtime/provider/model/config.",
        ),
        (
            "[read, wat, browser]",
            "tools: tools.allow allowlist contains unknown entries (browser, wat)."
            " Some entries are shipped core tools but unavailable in the current "
            "runtime/provider/model/config; other entries won't match any tool "
            "unless the plugin is enabled.",
        ),
        (
            "['nope_*', read]",
            "tools: tools.allow allowlist contains unknown entries (nope_*). "
            "These entries won't match any tool unless the plugin is enabled.",
        ),
    ],
)
def test_unknown_allow_entries(make_policy: MakePolicy, allow: str, message: str) -> None:
    res = run(make_policy(f"tools: {{allow: {allow}}}\n"), INV)
    warnings = [w for w in res.warnings if w.code == "PC401"]
    assert [w.message for w in warnings] == [message]
    assert warnings[0].source is not None and warnings[0].source.line == 1


@pytest.mark.parametrize(
    "allow",
    [
        "[read, 'web_*']",  # globs are evaluated: web_* matches web_search
        "[read, voice]",  # a plugin id
        "[read, voice_call]",  # a plugin tool name
        "[read, bundle-mcp]",
        "[read, 'group:plugins']",
        "[read, 'github__nothing_yet']",  # a declared MCP server prefix
        "[read, 'group:fs']",  # a group with members in this run
    ],
)
def test_known_entries_do_not_warn(make_policy: MakePolicy, allow: str) -> None:
    res = run(make_policy(f"tools: {{allow: {allow}}}\n"), INV)
    assert [w for w in res.warnings if w.code == "PC401"] == []


def test_deny_lists_are_analysed_too(make_policy: MakePolicy) -> None:
    res = run(make_policy("tools: {deny: [exce]}\n"), INV)
    assert [w.message for w in res.warnings] == [
        "tools: tools.allow denylist contains unknown entries (exce). These entries won't match "
        "any tool unless the plugin is enabled."
    ]


def test_profile_entries_are_not_reported(make_policy: MakePolicy) -> None:
    # coding names apply_patch, browser-less inventories etc.; only operator entries are reported
    res = run(make_policy("tools: {profile: coding}\n"), INV)
    assert res.warnings == ()


def test_identical_warnings_are_emitted_once(make_policy: MakePolicy) -> None:
    policy = make_policy(
        "tools: {allow: [read, reed]}\nagents: {defaults: {tools: {allow: [read, reed]}}}\n"
    )
    res = run(policy, INV)
    assert len([w for w in res.warnings if w.code == "PC401"]) == 2  # two layers, two labels
    assert len(set(res.warnings)) == len(res.warnings)


# -- cron caps -------------------------------------------------------------------------------------


def test_cron_cap(make_policy: MakePolicy) -> None:
    policy = make_policy("tools: {allow: [read, write, web_search]}\n")
    creator = run(policy)
    cap = cap_cron_tools(creator, ["read", "exec", "web_*"], policy.catalog)
    assert cap.tools_allow == ("read", "web_search")
    assert cap.dropped == ("exec",) and cap.warnings[0].code == "PC407"
    job = run(policy, trigger="cron", parent=cap.capture())
    assert job.allowed == ("read", "web_search")
    assert set(job.allowed) <= set(creator.allowed)


@pytest.mark.parametrize("requested", [[], ["exec"]])
def test_cron_cap_to_nothing_means_no_tools(make_policy: MakePolicy, requested: list[str]) -> None:
    policy = make_policy("tools: {allow: [read]}\n")
    cap = cap_cron_tools(run(policy), requested, policy.catalog)
    assert cap.tools_allow == ()
    with pytest.raises(NoCallableToolsError):
        run(policy, trigger="cron", parent=cap.capture())


def test_cron_cap_without_request_takes_the_creators_tools(make_policy: MakePolicy) -> None:
    policy = make_policy("tools: {allow: [read, write]}\n")
    creator = run(policy)
    assert cap_cron_tools(creator, None, policy.catalog).tools_allow == creator.allowed


# -- explain helpers -----------------------------------------------------------------------------


def test_decide_tool_fixes(make_policy: MakePolicy) -> None:
    res = run(make_policy("tools:\n  deny: ['group:runtime']\n  allow: [read, exec]\n"))
    d = decide_tool(res, "EXEC")
    assert not d.allowed and d.removal.stage == 3
    assert d.fix is not None and d.fix.startswith(
        'remove "group:runtime" (it expands to exec) from tools.deny'
    )
    d = decide_tool(res, "write")
    assert d.fix is not None and d.fix.startswith('add "write" to tools.allow')
    assert decide_tool(res, "read").allowed
    assert not decide_tool(res, "no_such_tool").known


def test_sandbox_refusal_text(make_policy: MakePolicy) -> None:
    policy = make_policy("agents: {defaults: {sandbox: {mode: non-main}}}\n")
    res = run(policy, agent="a", session_key="agent:a:telegram:group:-1001234567890")
    text = sandbox_refusal(res, "browser")
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == 'Tool "browser" blocked by sandbox tool policy (mode=non-main).'
    assert lines[1] == "Session: agent:…567890"
    assert lines[2] == "Reason: deny list"
    assert lines[3:5] == ["Fix:", "- agents.defaults.sandbox.mode=off (disable sandbox)"]
    # the deny list is the catalog default: no key to remove it from; alsoAllow lifts it
    assert lines[5].startswith('- Add "browser" to tools.sandbox.tools.alsoAllow: ')
    assert "Remove" not in text
    assert "- Use the agent main session instead of a non-main session." in lines
    assert lines[-1].startswith("Explain: policyctl explain")
    allow_text = sandbox_refusal(res, "web_search")
    assert allow_text is not None
    assert (
        '- Add "web_search" to tools.sandbox.tools.alsoAllow (a new key: the allow list is the '
        "catalog default) (or set tools.sandbox.tools.allow to [] to allow all)." in allow_text
    )
    assert sandbox_refusal(res, "read") is None
