"""Where the engine contradicted (or contradicts) semantics.md: one concrete case per bug,
resolved by the engine and by the reference (tests/reference) without quirks.

An open bug (tests/reference/bugs.py) is a strict xfail: when the engine is fixed the case
passes, pytest reports XPASS as a failure, and the bug's quirk must leave bugs.py, so the
property test holds the fix too. A fixed bug's case stays here as a regression test."""

from __future__ import annotations

import json
from typing import Any

import pytest
from reference.bugs import KNOWN_BUGS, QUIRKS
from reference.pipeline import engine_labels, run

from policyctl import PolicyError, RunContext, Sender, Tool, load_policy_text, resolve
from policyctl.catalog.load import builtin_catalog

_SLACK_42 = {"tools": {"toolsBySender": {"channel:slack:42": {"deny": ["exec"]}}}}
_GROUP_SENDERS = {
    "channels": {"slack": {"groups": {"C1": {"toolsBySender": {"*": {"deny": ["exec"]}}}}}}
}

CASES: dict[str, tuple[dict[str, Any], RunContext]] = {
    "labels-name-the-sender-table": (
        {"agents": {"entries": {"a": {"tools": {"toolsBySender": {"*": {"deny": ["exec"]}}}}}}},
        RunContext(agent="a", provider="openai"),
    ),
    "group-sender-rule-is-labelled-as-the-group-layer": (
        _GROUP_SENDERS,
        RunContext(session_key="agent:a:slack:group:C1", provider="openai"),
    ),
    "channel-only-from-group-keys": (
        _SLACK_42,
        RunContext(session_key="agent:a:slack:dm:u1", sender=Sender(id="42"), provider="openai"),
    ),
    "a-dm-key-beats-the-caller's-channel": (
        _SLACK_42,
        RunContext(
            session_key="agent:a:slack:dm:u1",
            channel="telegram",
            sender=Sender(id="42"),
            provider="openai",
        ),
    ),
    "a-dm-key-of-an-account-names-its-channel": (
        _SLACK_42,
        RunContext(
            session_key="agent:a:slack:corp:direct:u1", sender=Sender(id="42"), provider="openai"
        ),
    ),
    "a-cron-run-in-a-dm-of-a-deleted-account-fails-closed": (
        {"channels": {"slack": {"accounts": {"corp": {"groups": {}}}}}},
        RunContext(session_key="agent:a:slack:gone:dm:u1", trigger="cron", provider="openai"),
    ),
}


def view(res: Any) -> tuple[Any, ...]:
    removed = {r.tool: (r.stage, r.kind) for r in res.removed}
    return res.allowed, removed, engine_labels(res)


def test_every_known_bug_has_a_case() -> None:
    assert set(KNOWN_BUGS) <= set(CASES)


def _case(bug: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    doc, ctx = CASES[bug]
    doc = {"catalog": "openclaw", **doc}
    catalog = builtin_catalog(doc["catalog"])
    inventory = [Tool(t.id) for t in catalog.tools]
    policy = load_policy_text(json.dumps(doc), "policy.json")
    return view(resolve(policy, ctx, inventory, require_tools=False)), (
        catalog,
        doc,
        ctx,
        inventory,
    )


@pytest.mark.parametrize("bug", sorted(KNOWN_BUGS))
def test_the_quirk_still_reproduces_the_engine(bug: str) -> None:
    """When this fails the engine changed here: if it now follows the spec, drop the quirk."""
    engine, args = _case(bug)
    quirky = run(*args, QUIRKS)
    assert engine == (quirky.allowed, quirky.removed, quirky.labels)


@pytest.mark.parametrize(
    "bug",
    [
        pytest.param(b, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[b]))
        if b in KNOWN_BUGS
        else b
        for b in CASES
    ],
)
def test_engine_follows_the_specification(bug: str) -> None:
    engine, args = _case(bug)
    spec = run(*args)
    assert engine == (spec.allowed, spec.removed, spec.labels)


def test_unknown_group_is_refused_where_the_policy_is_used(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Semantics 4: groups are a closed set. load_policy (what a runtime and every command
    use) refuses an unknown group:x as validate does (PC320), so a deny of a misspelt group
    is never a hole where validate was not run."""
    from policyctl.cli.main import main

    with pytest.raises(PolicyError) as err:
        load_policy_text('tools:\n  deny: ["group:runtme"]\n')
    [diag] = err.value.diagnostics
    assert (diag.code, diag.path, diag.fix) == (
        "PC320",
        "tools.deny[0]",
        'did you mean "group:runtime"?',
    )
    path = tmp_path / "policy.yaml"
    path.write_text('tools:\n  deny: ["group:runtme"]\n', encoding="utf-8")
    assert main(["resolve", str(path), "--provider", "openai"]) == 2
    assert "PC320" in capsys.readouterr().err
    assert main(["validate", str(path)]) == 1
    assert "PC320" in capsys.readouterr().out
