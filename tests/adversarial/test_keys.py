"""Normalised keys (issue 11, items 2 and 3): keys that mean the same never overwrite each other,
within a file or across `extends`, and the legacy `agents.list` merges like `agents.entries`."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzz import documents, shaped

from policyctl import PolicyError, RunContext, Sender, load_policy, resolve
from policyctl.document.extends import load_document


def _write(folder: Path, name: str, data: dict[str, Any]) -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# -- the reproductions from the issue -------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["Slack", "SLACK ", " slack"])
def test_a_respelled_channel_keeps_the_base_deny(tmp_path: Path, spelling: str) -> None:
    base = {"channels": {"slack": {"groups": {"C1": {"tools": {"deny": ["exec", "write"]}}}}}}
    child = {"extends": "base.json", "channels": {spelling: {"groups": {"C1": {"tools": {}}}}}}
    _write(tmp_path, "base.json", base)
    policy = load_policy(_write(tmp_path, "child.json", child))
    run = resolve(policy, RunContext(session_key="agent:main:slack:group:C1", provider="openai"))
    assert "exec" not in run.allowed and "write" not in run.allowed
    assert [d.code for d in policy.diagnostics if d.code == "PC420"] == ["PC420"]


def test_two_spellings_in_one_file_are_an_error(tmp_path: Path) -> None:
    doc = {"channels": {"slack": {"groups": {"C1": {"tools": {"deny": ["exec"]}}}}, "Slack": {}}}
    with pytest.raises(PolicyError) as exc:
        load_policy(_write(tmp_path, "p.json", doc))
    assert [d.code for d in exc.value.diagnostics] == ["PC311"]


def test_a_legacy_agents_list_in_the_child_merges_with_the_base_entries(tmp_path: Path) -> None:
    base = {"agents": {"entries": {"coder": {"tools": {"deny": ["exec", "secrets"]}}}}}
    child = {"extends": "base.json", "agents": {"list": [{"id": "coder"}, {"id": "docs"}]}}
    _write(tmp_path, "base.json", base)
    policy = load_policy(_write(tmp_path, "child.json", child))
    run = resolve(policy, RunContext(agent="coder", provider="openai", sender=Sender(id="1")))
    assert "exec" not in run.allowed and "secrets" not in run.allowed
    assert {"coder", "docs"} <= set(policy.agents)
    assert "PC408" in {d.code for d in policy.diagnostics}


def test_a_legacy_list_in_the_base_keeps_its_deny_under_a_child_entry(tmp_path: Path) -> None:
    base = {"agents": {"list": [{"id": "Coder", "tools": {"deny": ["exec"]}}]}}
    child = {"extends": "base.json", "agents": {"entries": {"coder": {"tools": {"deny": []}}}}}
    _write(tmp_path, "base.json", base)
    policy = load_policy(_write(tmp_path, "child.json", child))
    run = resolve(policy, RunContext(agent="coder", provider="openai", sender=Sender(id="1")))
    assert "exec" not in run.allowed


# -- the class: every normalised map, in one file and across extends -----------------------------

# (kind, build a document whose normalised map holds `key` with a deny of exec)
Builder = Callable[[str, list[str]], dict[str, Any]]
MAPS: dict[str, Builder] = {
    "channel": lambda k, d: {"channels": {k: {"groups": {"C1": {"tools": {"deny": d}}}}}},
    "account": lambda k, d: {
        "channels": {"slack": {"accounts": {k: {"groups": {"C1": {"tools": {"deny": d}}}}}}}
    },
    "agent": lambda k, d: {"agents": {"entries": {k: {"tools": {"deny": d}}}}},
    "provider": lambda k, d: {"tools": {"byProvider": {k: {"deny": d}}}},
    "agent provider": lambda k, d: {
        "agents": {"entries": {"a": {"tools": {"byProvider": {k: {"deny": d}}}}}}
    },
    "sender": lambda k, d: {"tools": {"toolsBySender": {k: {"deny": d}}}},
    "group sender": lambda k, d: {
        "channels": {"slack": {"groups": {"C1": {"toolsBySender": {k: {"deny": d}}}}}}
    },
    "agent sender": lambda k, d: {
        "agents": {"entries": {"a": {"tools": {"toolsBySender": {k: {"deny": d}}}}}}
    },
}

key_text = st.text(alphabet="abcdefghxyz0123456789", min_size=1, max_size=8).filter(
    lambda k: k[0].isalpha()
)
respell = st.sampled_from(
    [str.upper, str.title, lambda k: f" {k}", lambda k: f"{k} ", lambda k: f" {k.upper()} "]
)


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, dict) and k in out else v
    return out


def _denies(value: Any) -> list[list[str]]:
    """Every deny list anywhere in the plain document."""
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k == "deny" and isinstance(v, list)]
        return found + [d for v in value.values() for d in _denies(v)]
    return []


#: how a key of the sender maps is written: typed, legacy untyped, with a leading `@`
SENDER_FORMS = ("id:{}", "username:@{}", "e164:{}", "channel:slack:{}", "{}")


@given(
    kind=st.sampled_from(sorted(MAPS)),
    key=key_text,
    change=respell,
    form=st.sampled_from(SENDER_FORMS),
)
def test_normalised_keys_never_collide_silently(
    kind: str, key: str, change: Any, form: str
) -> None:
    if "sender" in kind:
        key = form.format(key)
    other = change(key)
    if kind == "account" and other.strip() != key:
        return  # account ids are case-sensitive (matched as written): `Acme` is another account
    build = MAPS[kind]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        if other.strip().lower() != key.lower() or other == key:
            return
        # within one file: an error, never a silent replacement
        both = _deep_merge(build(key, ["exec"]), build(other, []))
        with pytest.raises(PolicyError) as exc:
            load_document(_write(tmp, "both.json", both))
        assert [d.code for d in exc.value.errors] == ["PC311"], kind
        # across extends: merged on the normal form, the base's deny kept
        _write(tmp, "base.json", build(key, ["exec"]))
        child = {"extends": "base.json", **build(other, ["write"])}
        loaded = load_document(_write(tmp, "child.json", child))
        denies = _denies(loaded.data)
        assert denies == [["exec", "write"]], (kind, loaded.data)
        assert [d.code for d in loaded.diagnostics] == ["PC420"]


@given(key=key_text, change=respell)
def test_mcp_servers_and_plugin_tools_collide_loudly(key: str, change: Any) -> None:
    other = change(key)
    if other.strip().lower() != key.lower() or other == key:
        return
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for doc in (
            {"inventory": {"mcp": {key: {"tools": ["a"]}, other: {"tools": ["b"]}}}},
            {
                "inventory": {
                    "plugins": [
                        {"name": key, "pluginId": "p"},
                        {"name": other, "pluginId": "q"},
                    ]
                }
            },
        ):
            with pytest.raises(PolicyError) as exc:
                load_document(_write(tmp, "p.json", doc))
            assert [d.code for d in exc.value.errors] == ["PC311"]


@settings(max_examples=150, deadline=None)
@given(base=st.one_of(documents, shaped), child=st.one_of(documents, shaped))
def test_random_extends_pairs_load_or_fail_with_diagnostics(base: Any, child: Any) -> None:
    # the merge, key normalisation, legacy migration and deny carrying over arbitrary shapes
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        _write(tmp, "base.json", base if isinstance(base, dict) else {"x": base})
        doc = {**(child if isinstance(child, dict) else {}), "extends": "base.json"}
        try:
            load_policy(_write(tmp, "child.json", doc))
        except PolicyError as exc:
            assert exc.diagnostics


def test_account_ids_are_case_sensitive_and_never_merged_by_case(tmp_path: Path) -> None:
    # the resolver matches account ids as written: Acme and acme are two accounts
    base = {"channels": {"slack": {"accounts": {"acme": {"groups": {"C1": {"tools": {}}}}}}}}
    child = {
        "extends": "base.json",
        "channels": {
            "slack": {"accounts": {"Acme": {"groups": {"*": {"tools": {"deny": ["exec"]}}}}}}
        },
    }
    _write(tmp_path, "base.json", base)
    # two accounts, never merged (no PC420); and since they read as one, an error (PC312)
    with pytest.raises(PolicyError) as exc:
        load_document(_write(tmp_path, "child.json", child))
    assert [d.code for d in exc.value.diagnostics] == ["PC312"]
    assert exc.value.diagnostics[0].path == "channels.slack.accounts.Acme"
