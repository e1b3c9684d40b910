"""The shipped examples, resolved by the engine and by the executable specification over
contexts drawn from what each example configures (its agents, providers, channels, groups,
accounts and sender keys), with the inventory the example declares."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.pipeline import engine_labels, run

from policyctl import RunContext, Sender, Tool, load_policy, resolve
from policyctl.catalog.load import builtin_catalog
from policyctl.document.extends import load_document

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ["team.yaml", "chatbot.yaml", "platform.toml"]


def mcp_name(server: str, tool: str) -> str:
    """Semantics 10 for the plain names the examples use (no collisions to number)."""

    def clean(part: str, empty: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "-", part.strip()) or empty

    name = f"{clean(server, 'mcp')[:30]}__{clean(tool, 'tool')}"
    name = name if name[0].isalpha() else f"mcp-{name}"
    return name[:64]


def declared_inventory(doc: dict[str, Any]) -> list[Tool]:
    catalog = builtin_catalog(doc.get("catalog") or "openclaw")
    inv = doc.get("inventory") or {}
    tools = [Tool(t.id) for t in catalog.tools]
    tools += [
        Tool(p["name"], p["pluginId"], p.get("optional", False)) for p in inv.get("plugins", [])
    ]
    for server, decl in (inv.get("mcp") or {}).items():
        tools += [Tool.mcp(mcp_name(server, t)) for t in decl["tools"]]
    return tools


def names_only(value: Any, key: str = "") -> Any:
    """The document as the name-level specification reads it (call-rules contract, section 2):
    an allow specifier admits its tool like the plain name, deny and ask specifiers never
    remove one, `ask` and `callDefault` decide calls only, and a list that holds only
    specifiers configures nothing at name level."""
    if isinstance(value, dict):
        out = {}
        for k, sub in value.items():
            if k in ("ask", "callDefault"):
                continue
            kept = names_only(sub, k)
            if isinstance(sub, list) and sub and not kept and k == "deny":
                continue  # only specifiers: the list is not written, at name level
            out[k] = kept
        return out
    if isinstance(value, list):
        if key == "allow":
            return [e.split("(", 1)[0] if isinstance(e, str) else e for e in value]
        if key == "deny":
            return [e for e in value if not (isinstance(e, str) and "(" in e)]
        return [names_only(v) for v in value]
    return value


def sender_ids(doc: dict[str, Any]) -> list[str]:
    """Every sender value the example writes in a key, so its rules are reached."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, sub in value.items():
                if key == "toolsBySender" and isinstance(sub, dict):
                    found.update(k.split(":")[-1].lstrip("@") for k in sub if k != "*")
                walk(sub)

    walk(doc)
    return sorted(found) or ["nobody"]


@st.composite
def example_contexts(draw: st.DrawFn, doc: dict[str, Any]) -> RunContext:
    agents = [None, *sorted((doc.get("agents") or {}).get("entries") or {})]
    channels = doc.get("channels") or {}
    channel = draw(st.sampled_from([None, *sorted(channels)]))
    groups = sorted((channels.get(channel) or {}).get("groups") or {}) if channel else []
    accounts = sorted((channels.get(channel) or {}).get("accounts") or {}) if channel else []
    group = draw(st.sampled_from([None, *groups, "other"])) if channel else None
    agent = draw(st.sampled_from(agents))
    key_kinds = ["none", "main", "subagent", "subagent2"] + (["group"] if group else [])
    kind = draw(st.sampled_from(key_kinds))
    aid = agent or "main"
    key = {
        "none": None,
        "main": f"agent:{aid}:main",
        "subagent": f"agent:{aid}:subagent:s1",
        "subagent2": f"agent:{aid}:subagent:s1:subagent:s2",
        "group": f"agent:{aid}:{channel}:group:{group}",
    }[kind]
    ids = sender_ids(doc)
    trigger = draw(st.sampled_from(["user", "cron", "skill", "spawn", "memory"]))
    sender = Sender(
        id=draw(st.sampled_from([None, *ids])),
        username=draw(st.sampled_from([None, *ids])),
        e164=draw(st.sampled_from([None, *[i for i in ids if i.startswith("+")]])),
    )
    return RunContext(
        agent=agent,
        provider=draw(st.sampled_from([None, "openai", "anthropic", "ollama", "bedrock"])),
        model=draw(st.sampled_from([None, "gpt-5.4", "gpt-5.4-mini", "claude-x"])),
        channel=channel,
        account=draw(st.sampled_from([None, *accounts, "gone"])) if channel else None,
        group=group if kind != "group" else None,
        sender=Sender() if trigger == "cron" else sender,
        is_owner=draw(st.booleans()),
        session_key=key,
        spawned_by=f"agent:{aid}:{channel}:group:{group}"
        if kind.startswith("sub") and group
        else None,
        trigger=trigger,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_agrees_with_the_specification(name: str) -> None:
    from reference.bugs import QUIRKS

    path = ROOT / "examples" / name
    doc = names_only(load_document(path).data)
    policy = load_policy(path)
    catalog = builtin_catalog(doc.get("catalog") or "openclaw")
    tools = declared_inventory(doc)

    @settings(
        max_examples=int(os.environ.get("POLICYCTL_PROPERTY_EXAMPLES", "150")),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(example_contexts(doc))
    def check(ctx: RunContext) -> None:
        res = resolve(policy, ctx, tools, require_tools=False)
        ref = run(catalog, doc, ctx, tools, QUIRKS)
        assert res.allowed == ref.allowed, ctx
        assert {r.tool: (r.stage, r.kind) for r in res.removed} == ref.removed, ctx
        assert engine_labels(res) == ref.labels, ctx

    check()
