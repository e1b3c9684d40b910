"""Semantics 4 (groups), 5 (matching one policy) and 6 (scope -> policy), table-driven."""

from __future__ import annotations

import pytest
from conftest import MakePolicy, removed_at, run, tools

from policyctl import PolicyError

CORE = tools(
    "read",
    "write",
    "edit",
    "apply_patch",
    "exec",
    "process",
    "web_search",
    "web_fetch",
    "skills_read",
    "browser",
    "canvas",
    "show_widget",
)
PLUGINS = [
    *tools("voice_call", plugin="voice"),
    *tools("github__create_pr", "github__merge_pr", plugin="bundle-mcp"),
]
INVENTORY = [*CORE, *PLUGINS]


def allowed(make_policy: MakePolicy, tools_yaml: str, inventory=INVENTORY) -> list[str]:  # type: ignore[no-untyped-def]
    policy = make_policy("tools:\n" + "".join(f"  {line}\n" for line in tools_yaml.splitlines()))
    # a provider that gets apply_patch: these cases are about matching, not construction
    return list(run(policy, inventory, provider="openai", require_tools=False).allowed)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        # semantics 5.1: no policy -> everything
        ("", [t.name for t in INVENTORY]),
        # allow [] is the same as no allow list
        ("allow: []", [t.name for t in INVENTORY]),
        # allow ["*"] admits everything not denied
        ("allow: ['*']\ndeny: [exec]", [t.name for t in INVENTORY if t.name != "exec"]),
        # deny ["*"] removes everything (even with allow *)
        ("allow: ['*']\ndeny: ['*']", []),
        # deny wins over allow of the same tool
        ("allow: [exec, read]\ndeny: [exec]", ["read", "skills_read"]),
        # a glob
        ("allow: ['web_*']", ["web_search", "web_fetch"]),
        # core group expansion
        ("allow: ['group:fs']", ["read", "write", "edit", "apply_patch", "skills_read"]),
        (
            "deny: ['group:runtime', 'group:fs']",
            [
                "web_search",
                "web_fetch",
                "skills_read",
                "browser",
                "canvas",
                "show_widget",
                "voice_call",
                "github__create_pr",
                "github__merge_pr",
            ],
        ),
        # plugin groups: group:plugins, plugin id, bundle-mcp, server glob
        ("allow: ['group:plugins']", ["voice_call", "github__create_pr", "github__merge_pr"]),
        ("allow: [voice]", ["voice_call"]),
        ("allow: [VOICE]", ["voice_call"]),
        ("allow: [bundle-mcp]", ["github__create_pr", "github__merge_pr"]),
        ("allow: ['github__*']\ndeny: [github__merge_pr]", ["github__create_pr"]),
        # aliases apply to whole entries
        ("allow: [BASH]", ["exec"]),
        ("allow: ['bash*']", []),
        # grants: write -> apply_patch; read -> skills_read (unless read is denied)
        ("allow: [write]", ["write", "apply_patch"]),
        ("allow: [write]\ndeny: [apply_patch]", ["write"]),
        ("allow: [read]", ["read", "skills_read"]),
        ("allow: [read, '*_read']\ndeny: [read]", ["skills_read"]),
        # later OpenClaw: a write deny does not remove apply_patch
        (
            "deny: [write]\nallow: [write, apply_patch, read]",
            ["read", "apply_patch", "skills_read"],
        ),
        # canvas also covers show_widget
        ("deny: [canvas]\nallow: [browser, canvas, show_widget]", ["browser"]),
        # a glob that matches nothing (an unknown group:x is refused when loading)
        ("allow: ['nope_*', read]", ["read", "skills_read"]),
    ],
)
def test_one_policy(make_policy: MakePolicy, config: str, expected: list[str]) -> None:
    got = allowed(make_policy, config)
    assert got == [n for n in [t.name for t in INVENTORY] if n in expected]


def test_deny_entry_that_expands_records_what_it_came_from(make_policy: MakePolicy) -> None:
    policy = make_policy("tools:\n  deny: ['group:runtime']\n")
    res = run(policy, INVENTORY)
    r = res.removal("exec")
    assert r is not None and r.kind == "deny" and r.entry == "group:runtime"
    assert r.expanded_from == "group:runtime" and r.source is not None and r.source.line == 2


def test_written_alias_is_kept_in_the_trail(make_policy: MakePolicy) -> None:
    res = run(make_policy("tools:\n  deny: [' Bash ']\n"), INVENTORY)
    r = res.removal("exec")
    assert r is not None and r.entry == "exec" and r.written_as == " Bash "


def test_earliest_matching_entry_decides(make_policy: MakePolicy) -> None:
    res = run(make_policy("tools:\n  deny: ['web_*', web_search]\n"), INVENTORY)
    assert res.removal("web_search").entry == "web_*"
    res = run(make_policy("tools:\n  deny: [web_search, 'web_*']\n"), INVENTORY)
    assert res.removal("web_search").entry == "web_search"


def test_allow_removal_points_at_the_allow_list(make_policy: MakePolicy) -> None:
    res = run(make_policy("tools:\n  allow:\n    - read\n"), INVENTORY)
    r = res.removal("exec")
    assert r is not None and r.kind == "allow" and r.entry is None
    assert r.scope == "tools.allow" and r.source is not None and r.source.line == 3


# -- semantics 6: scope conversion --------------------------------------------------------------


def test_allow_and_also_allow_in_one_scope_is_an_error(make_policy: MakePolicy) -> None:
    with pytest.raises(PolicyError) as exc:
        make_policy("tools:\n  allow: [read]\n  alsoAllow: [exec]\n")
    d = exc.value.diagnostics[0]
    assert d.code == "PC303" and d.source.line == 3
    assert "merge alsoAllow into allow" in (d.fix or "")


def test_empty_lists_do_not_conflict(make_policy: MakePolicy) -> None:
    make_policy("tools:\n  allow: []\n  alsoAllow: [exec]\n")  # no error: allow is empty


def test_also_allow_alone_never_restricts(make_policy: MakePolicy) -> None:
    got = allowed(make_policy, "alsoAllow: [exec]")
    assert got == [t.name for t in INVENTORY]


def test_scope_with_neither_allow_nor_deny_is_no_policy(make_policy: MakePolicy) -> None:
    policy = make_policy("agents:\n  entries:\n    a:\n      tools: {}\n")
    res = run(policy, INVENTORY, agent="a")
    layer = res.layers[4]
    assert not layer.applied and layer.skip_reason == "agent has no tools policy"


def test_confusable_entries_are_errors(make_policy: MakePolicy) -> None:
    with pytest.raises(PolicyError) as exc:
        make_policy('tools:\n  deny: ["\u0435xec", "ex\u200bec"]\n')
    codes = [(d.code, d.source.line, d.source.column) for d in exc.value.diagnostics]
    assert codes == [("PC301", 2, 10), ("PC301", 2, 18)]


def test_unknown_profile_is_an_error(make_policy: MakePolicy) -> None:
    with pytest.raises(PolicyError) as exc:
        make_policy("tools:\n  profile: codng\n")
    d = exc.value.diagnostics[0]
    assert d.code == "PC302" and d.fix == 'did you mean "coding"?'
    assert (d.source.line, d.source.column) == (2, 12)


def test_removal_is_order_independent_of_entries(make_policy: MakePolicy) -> None:
    a = allowed(make_policy, "allow: [read, exec, 'web_*']\ndeny: [web_fetch, exec]")
    b = allowed(make_policy, "allow: ['web_*', exec, read]\ndeny: [exec, web_fetch]")
    assert a == b == ["read", "web_search", "skills_read"]


def test_policy_never_raises_on_messy_tool_names(make_policy: MakePolicy) -> None:
    res = run(
        make_policy("tools:\n  deny: [exec]\n"),
        tools(" EXEC ", "Bash", "Read"),
        require_tools=False,
    )
    # names are normalised like entries: " EXEC " and "Bash" are both exec, and exec is denied
    assert res.allowed == ("read",)
    assert removed_at(res, "exec") == 3
