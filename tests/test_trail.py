"""The trail tells the truth: which group rule applied and which was skipped, which list
removed a tool, and contexts that fail closed (issue: trustworthy answers, items 2, 7, 8)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyctl import RunContext, Sender, load_policy_text, resolve
from policyctl.compile.entries import GLOB_INDEX_MIN, Entry, build_list
from policyctl.names import Glob, GlobIndex

SUPPORT = """
catalog: openclaw
channels:
  slack:
    groups:
      C0SUPPORT:
        tools: {deny: [exec, write, edit, apply_patch, "github__*"]}
        toolsBySender:
          "*": {deny: [secrets, web_fetch]}
      C0OTHER:
        toolsBySender:
          "id:7": {deny: [exec]}
      "*":
        tools: {deny: [browser]}
"""


def group_layer(res: object) -> object:
    return next(t for t in res.layers if t.stage == 7)  # type: ignore[attr-defined]


def test_the_trail_names_the_group_tools_that_tools_by_sender_shadowed() -> None:
    policy = load_policy_text(SUPPORT)
    res = resolve(policy, RunContext(channel="slack", group="C0SUPPORT", sender=Sender(id="1")))
    assert res.is_allowed("exec")  # first hit wins (OpenClaw's rule) ...
    layer = group_layer(res)
    assert layer.applied  # type: ignore[attr-defined]
    # ... and the trail says so, and why
    assert layer.detail == (  # type: ignore[attr-defined]
        'group C0SUPPORT toolsBySender "*" applied; group C0SUPPORT tools skipped: '
        'group C0SUPPORT toolsBySender "*" matched first (first hit wins, rules are not merged)'
    )
    assert "detail" in layer.to_json()  # type: ignore[attr-defined]


def test_the_trail_says_why_a_sender_rule_was_passed_over() -> None:
    policy = load_policy_text(SUPPORT)
    res = resolve(policy, RunContext(channel="slack", group="C0OTHER", sender=Sender(id="2")))
    layer = group_layer(res)
    assert not res.is_allowed("browser")
    assert layer.detail == (  # type: ignore[attr-defined]
        "group C0OTHER toolsBySender: no key matches this sender; group * tools applied"
    )
    plain = resolve(policy, RunContext(channel="slack", group="C9"))
    assert group_layer(plain).detail is None  # type: ignore[attr-defined]


def test_a_deny_removal_is_labelled_with_the_deny_key() -> None:
    policy = load_policy_text("catalog: openclaw\ntools: {allow: [read, exec], deny: [exec]}\n")
    res = resolve(policy, RunContext(provider="openai"))
    assert res.removal("exec").label == "tools.deny"  # type: ignore[union-attr]
    assert res.removal("write").label == "tools.allow"  # type: ignore[union-attr]
    assert next(t for t in res.layers if t.stage == 3).label == "tools.allow"


def test_a_channel_group_without_a_session_key_is_a_group_session() -> None:
    """`--channel slack --group C1` with no key is never the main session."""
    policy = load_policy_text(
        "catalog: openclaw\nagents: {defaults: {sandbox: {mode: non-main}}}\n"
    )
    res = resolve(policy, RunContext(channel="slack", group="C1"))
    assert res.context.sandboxed
    assert not res.is_allowed("browser")  # the catalog's default sandbox deny
    main = resolve(policy, RunContext())
    assert not main.context.sandboxed and main.is_allowed("browser")


def test_no_provider_removes_provider_gated_tools() -> None:
    policy = load_policy_text("catalog: openclaw\n")
    res = resolve(policy, RunContext())
    gone = res.removal("apply_patch")
    assert gone is not None and gone.stage == 0 and gone.kind == "catalog"
    assert resolve(policy, RunContext(provider="openai")).is_allowed("apply_patch")


def test_a_cron_run_of_an_unconfigured_account_without_a_channel_fails_closed() -> None:
    policy = load_policy_text(
        "catalog: openclaw\nchannels:\n  slack:\n    accounts:\n      corp:\n"
        "        groups: {C1: {tools: {deny: [exec]}}}\n"
    )
    res = resolve(policy, RunContext(account="gone", trigger="cron"), require_tools=False)
    assert res.allowed == ()
    assert any(w.code == "PC409" for w in res.warnings)
    # a configured account, or a user run, is not failed closed
    assert resolve(policy, RunContext(account="corp", trigger="cron")).allowed
    assert resolve(policy, RunContext(account="gone")).allowed


part = st.text(alphabet="ab_*", max_size=3)
patterns = st.lists(
    st.builds(lambda a, b: f"{a}*{b}", part, part),
    min_size=GLOB_INDEX_MIN + 1,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(globs=patterns, names=st.lists(st.text(alphabet="ab_", max_size=8), max_size=12))
def test_the_glob_index_finds_the_earliest_matching_glob(
    globs: list[str], names: list[str]
) -> None:
    """Property: the combined matcher answers what matching each glob in order answers."""
    compiled = [Glob.compile(p) for p in dict.fromkeys(globs)]
    index = GlobIndex(enumerate(compiled))
    for name in names:
        expected = next((i for i, g in enumerate(compiled) if g.matches(name)), None)
        assert index.first(name) == expected, name
        # and every glob that matches, as the unknown-entry warnings ask
        every = sorted(index.matching(name))
        assert every == [i for i, g in enumerate(compiled) if g.matches(name)], name
    entries = [Entry(p, p, "deny", None) for p in dict.fromkeys(globs)]
    lst = build_list("deny", None, entries, {}, {})
    assert lst.glob_index is not None or len(lst.globs) <= GLOB_INDEX_MIN
    for name in names:
        hit = lst.match(name)
        assert (hit.order if hit else None) == next(
            (i for i, g in enumerate(compiled) if g.matches(name)), None
        )


def test_a_hundred_thousand_deny_globs_match_quickly() -> None:
    """Issue 11 item 13: 200,000 deny globs took 22 s to resolve (each tool was matched
    against each glob); the combined matcher visits a few buckets per name."""
    import time

    entries = [Entry(f"x{i}_*", f"x{i}_*", "tools.deny", None) for i in range(100_000)]
    entries += [Entry(f"*_y{i}", f"*_y{i}", "tools.deny", None) for i in range(1000)]
    lst = build_list("tools.deny", None, entries, {}, {})
    start = time.perf_counter()
    names = [f"x{i}_tool" for i in range(0, 200_000, 97)] + ["read", "a_y999", "z_y1000"]
    found = [lst.match(n) for n in names]
    took = time.perf_counter() - start
    assert [f is not None for f in found[-3:]] == [False, True, False]
    assert sum(f is not None for f in found[:-3]) == sum(
        1 for i in range(0, 200_000, 97) if i < 100_000
    )
    assert took < 2.0, took


def test_the_glob_index_with_many_middle_parts() -> None:
    globs = [Glob.compile(f"*m{i}*") for i in range(40)] + [Glob.compile("a*b*c")]
    index = GlobIndex(enumerate(globs))
    for name in ["xm7y", "m39", "abc", "axxbxxc", "m", "zzz", "m1m0"]:
        expected = next((i for i, g in enumerate(globs) if g.matches(name)), None)
        assert index.first(name) == expected, name


def test_explain_prints_the_shadowed_group_rule(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    from policyctl.cli.main import main

    path = Path(str(tmp_path)) / "policy.yaml"
    path.write_text(SUPPORT, encoding="utf-8")
    argv = ["explain", str(path), "--tool", "exec", "--channel", "slack", "--group", "C0SUPPORT"]
    assert main([*argv, "--trail"]) == 0
    out = capsys.readouterr().out
    assert "[ 7] group tools.allow: applied, kept exec" in out
    assert "group C0SUPPORT tools skipped: group C0SUPPORT toolsBySender" in out


def test_long_inventories_match_globs_by_one_scan() -> None:
    """Above 256 tools a `head*tail` glob is one anchored scan of all names; it must
    agree with matching each name."""
    from policyctl import Inventory, Tool, resolve

    policy = load_policy_text(
        "catalog: openclaw\ntools:\n  deny: ['srv1*', '*tool3', 'srv2*tool4', 'srv3__tool5']\n"
    )
    tools = [Tool.mcp(f"srv{i // 10}__tool{i % 10}") for i in range(400)]
    inv = Inventory.build(tools, policy.catalog)
    res = resolve(policy, RunContext(), inv, require_tools=False)
    globs = [Glob.compile(p) for p in ("srv1*", "*tool3", "srv2*tool4", "srv3__tool5")]
    expected = tuple(t.name for t in tools if not any(g.matches(t.name) for g in globs))
    assert res.allowed == expected
