"""Names handed down to a child run or stored for a cron job are literal names, never entries
(semantics 7.10), and a tool whose name reads as an entry, or whose plugin id is a core
tool's name, never enters a run."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from policyctl import Capture, RunContext, Sender, cap_cron_tools, load_policy_text, resolve
from policyctl.catalog.inventory import Inventory, Tool

GUEST = """
catalog: openclaw
tools:
  toolsBySender:
    "id:guest": {allow: [read, group:plugins]}
"""

INVENTORY = [
    Tool("read"),
    Tool("write"),
    Tool("exec"),
    Tool("voice_call", "voice"),
    Tool.mcp("github__create_pr"),
    Tool.mcp("github__merge_pr"),
]
ENTRY_SYNTAX = ["*", "ex*", "group:plugins", "group:fs", "bundle-mcp", "voice", "github__*"]


def test_a_plugin_tool_named_star_does_not_widen_a_cron_job() -> None:
    """The review's reproduction: a guest allowed [read, group:plugins] with a plugin tool
    named `*` had ('read', '*'); its cron job then resolved to read, exec, write, *."""
    policy = load_policy_text(GUEST)
    tools = [Tool("read"), Tool("write"), Tool("exec"), Tool("*", "evil")]
    creator = resolve(policy, RunContext(sender=Sender(id="guest")), tools)
    assert creator.allowed == ("read",)  # the tool named `*` is refused outright
    assert any(w.code == "PC381" for w in creator.warnings)
    # even a stored list that does say "*" (an older job) is read back literally
    job = cap_cron_tools(creator, ["read", "*"], policy.catalog)
    run = resolve(policy, RunContext(trigger="cron", parent=job.capture()), tools)
    assert run.allowed == ("read",)
    forged = Capture(("read", "*"), (), "cron job toolsAllow")
    run = resolve(policy, RunContext(trigger="cron", parent=forged), tools)
    assert run.allowed == ("read",)


def test_inherited_entry_syntax_matches_nothing_but_itself() -> None:
    policy = load_policy_text("catalog: openclaw\n")
    cap = Capture(("read", *ENTRY_SYNTAX), ())
    res = resolve(policy, RunContext(parent=cap), INVENTORY)
    assert res.allowed == ("read",)
    # and an inherited deny of "*" removes no tool (no tool is called "*")
    res = resolve(policy, RunContext(parent=Capture(None, ("*", "group:fs"))), INVENTORY)
    assert res.allowed == tuple(t.name for t in INVENTORY)


def test_entry_syntax_tool_names_are_refused_by_the_inventory() -> None:
    policy = load_policy_text("catalog: openclaw\n")
    tools = [Tool(name, "plug") for name in ["*", "ex*", "group:plugins", "bundle-mcp"]]
    tools += [Tool("voice", "other"), Tool("voice_call", "voice"), Tool("weather", "weather")]
    inv = Inventory.build(tools, policy.catalog)
    # a plugin may name a tool after itself; never after another plugin or an entry
    assert [t.name for t in inv.tools] == ["voice_call", "weather"]
    assert sum(d.code == "PC381" for d in inv.conflicts) == 5


def test_a_plugin_id_equal_to_a_core_tool_name_is_refused() -> None:
    """A plugin with id `read` got every tool of it through `allow: [read]`."""
    policy = load_policy_text("catalog: openclaw\ntools: {allow: [read]}\n")
    tools = [Tool("read"), Tool("notes_delete", "read"), Tool("shell_run", "BASH")]
    res = resolve(policy, RunContext(), tools)
    assert res.allowed == ("read",)
    assert res.inventory.names == frozenset({"read"})
    assert sum(w.code == "PC383" for w in res.warnings) == 2


def test_a_plugin_id_that_is_entry_syntax_is_refused() -> None:
    """F8: a plugin with id `bundle-mcp` got its tools through every `bundle-mcp` entry."""
    from policyctl.diagnostics import PolicyError

    text = (
        "catalog: openclaw\ntools: {profile: coding, allow: [read, bundle-mcp]}\n"
        "inventory: {plugins: [{name: deploy_prod, pluginId: bundle-mcp}], "
        "mcp: {github: {tools: [create_pr]}}}\n"
    )
    try:
        load_policy_text(text)
    except PolicyError as exc:
        assert any(d.code == "PC385" for d in exc.diagnostics)
    else:
        raise AssertionError("a plugin id bundle-mcp compiled")
    # an entry `group:x` naming such a plugin id is refused when loading (PC320, groups are a
    # closed set); even `group:plugins`, which names every plugin tool, does not admit them
    try:
        load_policy_text("catalog: openclaw\ntools: {allow: [read, 'group:x']}\n")
    except PolicyError as exc:
        assert [d.code for d in exc.diagnostics] == ["PC320"]
    else:
        raise AssertionError("an unknown group compiled")
    policy = load_policy_text(
        "catalog: openclaw\ntools: {allow: [read, bundle-mcp, 'group:plugins']}\n"
    )
    tools = [
        Tool("read"),
        Tool.mcp("deploy_prod"),
        Tool.mcp("github__create_pr"),
    ]
    tools += [Tool("x_tool", "group:x"), Tool("star_tool", "st*")]
    res = resolve(policy, RunContext(), tools)
    # at run time `bundle-mcp` is the host's MCP marker; group and glob ids are dropped
    assert res.allowed == ("read", "deploy_prod", "github__create_pr")
    assert sum(w.code == "PC386" for w in res.warnings) == 2


names = st.lists(
    st.sampled_from([t.name for t in INVENTORY] + ENTRY_SYNTAX + ["nothing_like_it"]),
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(allow=st.one_of(st.none(), names), deny=names)
def test_inherited_lists_are_literal(allow: list[str] | None, deny: list[str]) -> None:
    """Property: a child's tools are exactly the inventory's tools that the parent's lists
    name literally, whatever the names say as entries."""
    policy = load_policy_text("catalog: openclaw\n")
    cap = Capture(tuple(allow) if allow is not None else None, tuple(deny))
    res = resolve(policy, RunContext(parent=cap), INVENTORY, require_tools=False)
    expected = tuple(
        t.name for t in INVENTORY if (allow is None or t.name in allow) and t.name not in deny
    )
    assert res.allowed == expected
