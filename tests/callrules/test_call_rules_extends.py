"""Call rules through `extends`, `fmt` and bundles: ask unions like deny, base deny and ask
call rules are carried into the more specific scopes a child adds, callDefault only narrows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import MakePolicy, run

from policyctl import PolicyError
from policyctl.api import compile_loaded
from policyctl.compile.bundle import build_bundle, load_bundle, render_bundle
from policyctl.document.extends import load_document
from policyctl.formats.fmt import format_text

BASE = """
tools:
  deny: ["exec(rm *)"]
  ask: ["exec(git push *)"]
agents:
  defaults:
    tools:
      deny: ["exec(curl *)"]
      ask: ["web_fetch(domain:*.example.com)"]
"""


def decide(policy: object, command: str, **ctx: object) -> str:
    res = run(policy, **ctx)  # type: ignore[arg-type]
    return res.decide_call("exec", {"command": command}).effect.label


def test_child_ask_and_deny_lists_union_with_the_base(make_policy: MakePolicy) -> None:
    child = 'extends: base.yaml\ntools:\n  deny: ["exec(sudo *)"]\n  ask: ["exec(npm publish *)"]\n'
    policy = make_policy(child, base__yaml=BASE)
    assert decide(policy, "rm -rf x") == "deny"  # the base's deny survives the child's list
    assert decide(policy, "sudo ls") == "deny"
    assert decide(policy, "git push origin") == "ask"  # the base's ask too
    assert decide(policy, "npm publish .") == "ask"
    assert decide(policy, "ls") == "allow"


def test_union_compares_specifiers_case_sensitively(make_policy: MakePolicy) -> None:
    base = 'tools:\n  deny: ["exec(RM *)"]\n'
    policy = make_policy('extends: base.yaml\ntools:\n  deny: ["exec(rm *)"]\n', base__yaml=base)
    assert decide(policy, "RM x") == "deny"
    assert decide(policy, "rm x") == "deny"


def test_base_defaults_call_rules_are_carried_into_a_new_agent_entry(
    make_policy: MakePolicy,
) -> None:
    child = (
        "extends: base.yaml\nagents:\n  entries:\n    coder:\n"
        "      tools:\n        deny: [browser]\n"
    )
    policy = make_policy(child, base__yaml=BASE)
    res = run(policy, agent="coder")
    assert res.decide_call("exec", {"command": "curl x"}).effect.label == "deny"
    fetch = res.decide_call("web_fetch", {"url": "https://a.example.com/"})
    assert fetch.effect.label == "ask"
    assert fetch.verdict.source is not None and "base.yaml" in str(fetch.verdict.source)


def test_base_sender_ask_is_carried_into_a_more_specific_sender_key(
    make_policy: MakePolicy,
) -> None:
    base = 'tools:\n  toolsBySender:\n    "*": {ask: ["exec(git *)"]}\n'
    child = 'extends: base.yaml\ntools:\n  toolsBySender:\n    "id:42": {deny: [browser]}\n'
    policy = make_policy(child, base__yaml=base)
    res = run(policy, sender={"id": "42"})
    assert res.decide_call("exec", {"command": "git log"}).effect.label == "ask"


def test_call_default_narrows_but_never_widens_through_extends(make_policy: MakePolicy) -> None:
    base = 'tools:\n  allow: ["exec(git *)"]\n  callDefault: deny\n'
    with pytest.raises(PolicyError) as info:
        make_policy("extends: base.yaml\ntools:\n  callDefault: ask\n", base__yaml=base)
    [diag] = [d for d in info.value.diagnostics if d.code == "PC358"]
    assert diag.source is not None and diag.source.line == 3
    base_ask = 'tools:\n  allow: ["exec(git *)"]\n  callDefault: ask\n'
    policy = make_policy("extends: base.yaml\ntools:\n  callDefault: deny\n", base__yaml=base_ask)
    assert decide(policy, "make") == "deny"


def test_fmt_keeps_call_rules(tmp_path: Path) -> None:
    text = (
        "tools:\n"
        '  deny: ["exec(rm *)", "read(./secrets/)"]\n'
        "  ask: [exec]\n"
        '  allow: ["exec(git commit -m \\"fix bug\\")", read]\n'
        "  callDefault: ask\n"
    )
    out = format_text(text, "policy.yaml")
    for entry in ("exec(rm *)", "read(./secrets/)", 'exec(git commit -m \\"fix bug\\")'):
        assert entry in out
    assert "callDefault: ask" in out and "ask: [exec]" in out


def test_bundle_round_trip_keeps_decisions_and_locations(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(
        'tools:\n  deny: ["exec(rm *)"]\n  ask: ["exec(git push *)"]\n'
        '  allow: ["exec(git *)"]\n  callDefault: ask\n',
        encoding="utf-8",
    )
    loaded = load_document(path)
    original = compile_loaded(loaded)
    bundle_path = tmp_path / "policy.bundle.json"
    bundle_path.write_text(render_bundle(build_bundle(loaded, original)), encoding="utf-8")
    assert "callDefault" in json.loads(bundle_path.read_text())["document"]["tools"]
    loaded_back = load_bundle(bundle_path)
    for command in ("rm x", "git push o", "git log", "make"):
        a = run(original).decide_call("exec", {"command": command}).verdict
        b = run(loaded_back).decide_call("exec", {"command": command}).verdict
        assert (a.effect, a.entry) == (b.effect, b.entry), command
        if a.source is not None:
            assert b.source is not None
            assert (a.source.line, a.source.column) == (b.source.line, b.source.column)
