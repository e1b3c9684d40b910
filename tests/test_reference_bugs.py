"""Where the engine contradicts semantics.md: one concrete case per known bug
(tests/reference/bugs.py), resolved by the engine and by the reference without quirks.

Each is a strict xfail: when the engine is fixed the case passes, pytest reports XPASS as a
failure, and the bug's quirk must leave bugs.py, so the property test holds the fix too."""

from __future__ import annotations

import json
from typing import Any

import pytest
from reference.bugs import KNOWN_BUGS, QUIRKS
from reference.pipeline import run

from policyctl import PolicyError, RunContext, Sender, Tool, load_policy_text, resolve
from policyctl.catalog import builtin_catalog

CASES: dict[str, tuple[dict[str, Any], RunContext]] = {
    "labels-name-the-sender-table": (
        {"agents": {"entries": {"a": {"tools": {"toolsBySender": {"*": {"deny": ["exec"]}}}}}}},
        RunContext(agent="a", provider="openai"),
    ),
    "channel-only-from-group-keys": (
        {"tools": {"toolsBySender": {"channel:slack:42": {"deny": ["exec"]}}}},
        RunContext(session_key="agent:a:slack:dm:u1", sender=Sender(id="42"), provider="openai"),
    ),
}


def view(res: Any) -> tuple[Any, ...]:
    removed = {r.tool: (r.stage, r.kind) for r in res.removed}
    return res.allowed, removed, {r.tool: r.label for r in res.removed if r.stage > 0}


def test_every_known_bug_has_a_case() -> None:
    assert set(CASES) == set(KNOWN_BUGS)


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


@pytest.mark.parametrize("bug", sorted(CASES))
def test_the_quirk_still_reproduces_the_engine(bug: str) -> None:
    """When this fails the engine changed here: if it now follows the spec, drop the quirk."""
    engine, args = _case(bug)
    quirky = run(*args, QUIRKS)
    assert engine == (quirky.allowed, quirky.removed, quirky.labels)


@pytest.mark.parametrize(
    "bug",
    [pytest.param(b, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[b])) for b in CASES],
)
def test_engine_follows_the_specification(bug: str) -> None:
    engine, args = _case(bug)
    spec = run(*args)
    assert engine == (spec.allowed, spec.removed, spec.labels)


@pytest.mark.xfail(
    strict=True,
    reason="semantics 4: groups are a closed set, so an unknown group:x in any list is a "
    "validation error. `policyctl validate` now says so (PC320), but load_policy (what a "
    "runtime and every other command use) still compiles the policy with only a warning at "
    "resolve time, so a deny of a misspelt group is a hole wherever validate was not run",
)
def test_unknown_group_is_a_validation_error() -> None:
    with pytest.raises(PolicyError):
        load_policy_text('tools:\n  deny: ["group:runtme"]\n')
