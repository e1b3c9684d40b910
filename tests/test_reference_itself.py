"""The executable specification checked against the sentences of semantics.md it encodes,
without the engine: if the reference misread the spec the same way the engine does, the
property test could not see it, so its own readings are pinned here, one row per rule."""

from __future__ import annotations

from typing import Any

import pytest
from reference.pipeline import run

from policyctl import Capture, RunContext, Sender, Tool
from policyctl.catalog.load import builtin_catalog

OLD = builtin_catalog("openclaw-2026.4")
NEW = builtin_catalog("openclaw")


OPENAI = {"provider": "openai"}
ROWS: list[tuple[str, dict[str, Any], dict[str, Any], str, Any]] = [
    # 2: aliases map whole entries only
    ("alias BASH is exec", {"tools": {"deny": [" BASH "]}}, OPENAI, "exec", (3, "deny")),
    ("a glob is not aliased", {"tools": {"deny": ["bash*"]}}, OPENAI, "exec", None),
    # 3: `*` crosses _ - : . alike; other characters are literal
    ("star crosses underscores", {"tools": {"deny": ["s*s"]}}, OPENAI, "sessions_list", None),
    ("anchored both ends", {"tools": {"deny": ["*_list"]}}, OPENAI, "agents_list", (3, "deny")),
    ("? is literal", {"tools": {"deny": ["rea?"]}}, OPENAI, "read", None),
    # 5: deny wins; empty allow is no restriction; grants
    (
        "deny wins over allow",
        {"tools": {"allow": ["read"], "deny": ["read"]}},
        OPENAI,
        "read",
        (3, "deny"),
    ),
    ("allow [] restricts nothing", {"tools": {"allow": []}}, OPENAI, "exec", None),
    ("write grants apply_patch", {"tools": {"allow": ["write"]}}, OPENAI, "apply_patch", None),
    (
        "a grant never beats a deny",
        {"tools": {"allow": ["write"], "deny": ["apply_patch"]}},
        OPENAI,
        "apply_patch",
        (3, "deny"),
    ),
    # 6: alsoAllow alone never restricts a scope
    ("alsoAllow alone", {"tools": {"alsoAllow": ["read"]}}, OPENAI, "exec", None),
    # 7.1: agent alsoAllow replaces the global one
    (
        "agent alsoAllow replaces",
        {
            "tools": {"profile": "minimal", "alsoAllow": ["read"]},
            "agents": {"entries": {"a": {"tools": {"alsoAllow": ["exec"]}}}},
        },
        {"agent": "a", **OPENAI},
        "read",
        (1, "allow"),
    ),
    # 7.2: the model key is provider-scoped
    (
        "model key provider-scoped",
        {"tools": {"byProvider": {"anthropic": {"deny": ["exec"]}}}},
        {"provider": "openrouter", "model": "anthropic/claude-x"},
        "exec",
        None,
    ),
    # 7.4: a wildcard-group sender rule never overrides a specific group's tools
    (
        "group tools beat * sender rule",
        {
            "channels": {
                "slack": {
                    "groups": {
                        "C1": {"tools": {"deny": ["exec"]}},
                        "*": {"toolsBySender": {"id:1": {"allow": ["*"]}}},
                    }
                }
            }
        },
        {"session_key": "agent:a:slack:group:C1", "sender": Sender(id="1"), **OPENAI},
        "exec",
        (7, "deny"),
    ),
    (
        "cron on a deleted account",
        {"channels": {"slack": {"groups": {"*": {"tools": {"allow": ["*"]}}}}}},
        {"channel": "slack", "account": "gone", "trigger": "cron", **OPENAI},
        "read",
        (7, "deny"),
    ),
    # 7.5: a display name equal to an id never matches an id: key
    (
        "name is not an id",
        {"tools": {"toolsBySender": {"id:boss": {"deny": ["exec"]}}}},
        {"sender": Sender(name="boss"), **OPENAI},
        "exec",
        None,
    ),
    (
        "username strips @",
        {"tools": {"toolsBySender": {"username:ada": {"deny": ["exec"]}}}},
        {"sender": Sender(username="@Ada"), **OPENAI},
        "exec",
        (8, "deny"),
    ),
    # 7.6: an explicit alsoAllow lifts an entry out of the default deny
    (
        "sandbox alsoAllow lifts",
        {
            "agents": {"defaults": {"sandbox": {"mode": "all"}}},
            "tools": {"sandbox": {"tools": {"alsoAllow": ["browser"]}}},
        },
        OPENAI,
        "browser",
        None,
    ),
    (
        "sandbox default deny",
        {"agents": {"defaults": {"sandbox": {"mode": "all"}}}},
        OPENAI,
        "browser",
        (9, "deny"),
    ),
    (
        "non-main: main key not sandboxed",
        {"agents": {"defaults": {"sandbox": {"mode": "non-main"}}}},
        {"session_key": "agent:a:main", **OPENAI},
        "browser",
        None,
    ),
    # 7.7: the base deny is hard; a leaf loses the spawn tools
    (
        "subagent allow cannot lift",
        {"tools": {"subagents": {"tools": {"allow": ["gateway", "read"]}}}},
        {"session_key": "agent:a:subagent:x", "is_owner": True, **OPENAI},
        "gateway",
        (10, "deny"),
    ),
    (
        "leaf loses sessions_spawn",
        {},
        {"session_key": "agent:a:subagent:x", **OPENAI},
        "sessions_spawn",
        (10, "deny"),
    ),
    # 7.8: names handed down are literal; cron toolsAllow [] means no tools
    (
        "inherited * is literal",
        {},
        {"parent": Capture(("*", "read")), **OPENAI},
        "exec",
        (11, "allow"),
    ),
    (
        "empty cron cap: no tools",
        {},
        {"parent": Capture(()), "trigger": "cron", **OPENAI},
        "read",
        (11, "allow"),
    ),
    ("memory flush keeps read", {}, {"trigger": "memory", **OPENAI}, "exec", (11, "allow")),
    # 7.9: owner-only and provider-gated construction filters
    ("owner-only", {}, OPENAI, "gateway", (0, "owner-only")),
    ("no provider: gated tool removed", {}, {}, "apply_patch", (0, "catalog")),
]


@pytest.mark.parametrize(
    ("doc", "ctx", "tool", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_reference_reads_the_spec(
    doc: dict[str, Any], ctx: dict[str, Any], tool: str, expected: Any
) -> None:
    catalog = NEW if doc.get("catalog") == "openclaw" else OLD
    tools = [Tool(t.id) for t in catalog.tools]
    assert run(catalog, doc, RunContext(**ctx), tools).removed.get(tool) == expected
