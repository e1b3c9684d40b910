"""explain: every layer that removes a tool, fixes that work when applied, names as typed.

Each "apply the fix" test edits the policy exactly as the fix says, resolves again, and checks
that the tool is then allowed.
"""

from __future__ import annotations

from conftest import MakePolicy, run

from policyctl.explain.tool import decide_tool, explain_command, sandbox_refusal

THREE_BLOCKERS = """\
tools:
  deny: [exec]
agents:
  entries:
    a:
      tools:
        deny: [read, "group:runtime"]
channels:
  slack:
    groups:
      C0ENG:
        tools: {deny: [bash]}
"""


def test_every_layer_that_removes_the_tool_is_named(make_policy: MakePolicy) -> None:
    policy = make_policy(THREE_BLOCKERS)
    res = run(policy, agent="a", session_key="agent:a:slack:group:C0ENG")
    d = decide_tool(res, "exec", policy)
    assert [b.stage for b in d.blockers] == [3, 5, 7]
    assert d.removal is not None and d.removal.stage == 3
    assert len(d.fixes) == 3 and d.fix is not None and d.fix.startswith("3 edits are needed")
    assert 'remove "exec" from tools.deny' in d.fixes[0]
    assert (
        'remove "group:runtime" (it expands to exec) from agents.entries.a.tools.deny'
        in (d.fixes[1])
    )
    assert 'remove "bash" from channels.slack.groups.C0ENG.tools.deny' in d.fixes[2]
    # apply all three edits: the tool is allowed
    fixed = make_policy(
        THREE_BLOCKERS.replace("deny: [exec]", "deny: []")
        .replace('deny: [read, "group:runtime"]', "deny: [read]")
        .replace("deny: [bash]", "deny: []")
    )
    res = run(fixed, agent="a", session_key="agent:a:slack:group:C0ENG")
    assert decide_tool(res, "exec", fixed).allowed


def test_two_deny_entries_in_one_list_are_both_named(make_policy: MakePolicy) -> None:
    policy = make_policy("tools:\n  deny: [exec, 'group:runtime']\n")
    d = decide_tool(run(policy), "exec", policy)
    assert [b.entry for b in d.blockers] == ["exec", "group:runtime"]
    # each is labelled with the list it is written in, never the layer's allow label
    assert [b.label for b in d.blockers] == ["tools.deny", "tools.deny"]
    fixed = make_policy("tools:\n  deny: []\n")
    assert decide_tool(run(fixed), "exec", fixed).allowed


def test_aliases_and_did_you_mean(make_policy: MakePolicy) -> None:
    policy = make_policy("tools:\n  deny: [exec]\n")
    res = run(policy)
    d = decide_tool(res, "bash", policy)
    assert d.tool == "exec" and d.asked == "bash" and d.removal is not None
    d = decide_tool(res, "web_serach", policy)
    assert not d.known and d.fix is not None and 'did you mean "web_search"?' in d.fix


def test_profile_with_an_allow_in_the_same_scope_gets_a_fix_that_works(
    make_policy: MakePolicy,
) -> None:
    text = "tools:\n  profile: messaging\n  allow: [message, read, web_search]\n"
    policy = make_policy(text)
    d = decide_tool(run(policy), "read", policy)
    assert d.removal is not None and d.removal.stage == 1
    # alsoAllow next to allow would be PC303; the fix is to drop the profile
    assert d.fix is not None and d.fix.startswith("remove tools.profile")
    fixed = make_policy(text.replace("  profile: messaging\n", ""))
    res = run(fixed)
    assert set(res.allowed) >= {"message", "read", "web_search"}


def test_profile_fix_names_the_alsoallow_the_profile_layer_reads(make_policy: MakePolicy) -> None:
    text = (
        "tools:\n  profile: messaging\n  alsoAllow: [web_search]\n"
        "agents:\n  entries:\n    a: {tools: {alsoAllow: [web_fetch]}}\n"
    )
    policy = make_policy(text)
    d = decide_tool(run(policy, agent="a"), "read", policy)
    assert d.fix is not None and d.fix.startswith('add "read" to agents.entries.a.tools.alsoAllow')
    fixed = make_policy(text.replace("[web_fetch]", "[web_fetch, read]"))
    assert decide_tool(run(fixed, agent="a"), "read", fixed).allowed


def test_sandbox_fixes_name_real_keys_and_work(make_policy: MakePolicy) -> None:
    text = "agents:\n  defaults: {sandbox: {mode: non-main}}\n"
    policy = make_policy(text)
    res = run(policy, agent="a", session_key="agent:a:telegram:group:-100123")
    d = decide_tool(res, "browser", policy)
    refusal = sandbox_refusal(res, "browser", policy)
    assert refusal is not None and d.fix is not None
    # one fix, the same in both texts, naming the key that lifts the default deny
    assert d.fix.startswith('Add "browser" to tools.sandbox.tools.alsoAllow')
    assert f"- {d.fix}" in refusal.splitlines()
    fixed = make_policy(text + "tools:\n  sandbox: {tools: {alsoAllow: [browser]}}\n")
    res = run(fixed, agent="a", session_key="agent:a:telegram:group:-100123")
    assert decide_tool(res, "browser", fixed).allowed


def test_sandbox_mode_fix_names_the_key_that_sets_it(make_policy: MakePolicy) -> None:
    text = "agents:\n  entries:\n    a: {sandbox: {mode: all}}\n"
    policy = make_policy(text)
    res = run(policy, agent="a", session_key="agent:a:main")
    refusal = sandbox_refusal(res, "browser", policy)
    assert refusal is not None
    assert "- agents.entries.a.sandbox.mode=off (disable sandbox)" in refusal
    assert "agents.defaults.sandbox.mode" not in refusal


def test_explain_command_has_no_empty_placeholder(make_policy: MakePolicy) -> None:
    policy = make_policy("agents:\n  defaults: {sandbox: {mode: all}}\n")
    res = run(policy, agent="a", channel="slack", group="C0ENG")
    line = explain_command(res, "browser")
    assert "--session-key" not in line and "  " not in line
    assert line.endswith("--agent a --channel slack --group C0ENG --tool browser --trail")
    refusal = sandbox_refusal(res, "browser", policy)
    assert refusal is not None and "--session-key  " not in refusal


def test_a_layer_that_removes_by_deny_and_by_allow_needs_both_fixes(
    make_policy: MakePolicy,
) -> None:
    text = "tools:\n  allow: [read]\n  deny: [exec]\n"
    policy = make_policy(text)
    d = decide_tool(run(policy), "exec", policy)
    assert [(b.stage, b.kind) for b in d.blockers] == [(3, "deny"), (3, "allow")]
    assert d.fixes[1].startswith('add "exec" to tools.allow')
    fixed = make_policy("tools:\n  allow: [read, exec]\n  deny: []\n")
    assert decide_tool(run(fixed), "exec", fixed).allowed


def test_a_configured_sandbox_deny_names_its_own_key(make_policy: MakePolicy) -> None:
    text = (
        "agents:\n  defaults: {sandbox: {mode: all}}\n  entries:\n"
        "    a: {tools: {sandbox: {tools: {deny: [browser, exec]}}}}\n"
    )
    policy = make_policy(text)
    res = run(policy, agent="a", session_key="agent:a:main")
    refusal = sandbox_refusal(res, "exec", policy)
    assert refusal is not None
    assert '- Remove "exec" from agents.entries.a.tools.sandbox.tools.deny.' in refusal.splitlines()
    fixed = make_policy(text.replace("[browser, exec]", "[browser]"))
    res = run(fixed, agent="a", session_key="agent:a:main")
    assert decide_tool(res, "exec", fixed).allowed


def test_lifting_the_default_deny_names_the_alsoallow_the_agent_reads(
    make_policy: MakePolicy,
) -> None:
    text = (
        "agents:\n  defaults: {sandbox: {mode: all}}\n  entries:\n"
        "    a: {tools: {sandbox: {tools: {alsoAllow: [web_search]}}}}\n"
    )
    policy = make_policy(text)
    res = run(policy, agent="a", session_key="agent:a:main")
    d = decide_tool(res, "browser", policy)
    # the agent's own alsoAllow list is read, so the global one would change nothing
    assert d.fix is not None
    assert d.fix.startswith('Add "browser" to agents.entries.a.tools.sandbox.tools.alsoAllow')
    fixed = make_policy(text.replace("[web_search]", "[web_search, browser]"))
    res = run(fixed, agent="a", session_key="agent:a:main")
    assert decide_tool(res, "browser", fixed).allowed
