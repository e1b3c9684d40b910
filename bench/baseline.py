"""A deliberately plain resolver, for comparison: no compilation, no indexes, no caching.

For each tool, for each layer, every entry is normalised, groups are expanded by scanning the
catalog, and `fnmatch` tests the entry against the tool name, the way a straightforward
implementation (and OpenClaw's own per-tool matcher rebuild) works. It covers the features
the benchmark scenario uses and is asserted to give the same answer as policyctl on it.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from policyctl.catalog import Catalog
from policyctl.context import RunContext, parse_session_key


def _norm(entry: str, catalog: Catalog) -> str:
    text = entry.strip().lower()
    return catalog.aliases.get(text, text)


def _expand(entries: list[str], catalog: Catalog, tools: list[tuple[str, str | None]]) -> list[str]:
    out: list[str] = []
    for raw in entries:
        entry = _norm(raw, catalog)
        if entry.startswith("group:") and entry != "group:plugins":
            section = entry[len("group:") :]
            out.extend(t.id for t in catalog.tools if t.section == section or section in t.groups)
        elif entry == "group:plugins":
            out.extend(name for name, plugin in tools if plugin)
        elif any(plugin == entry for _, plugin in tools):
            out.extend(name for name, plugin in tools if plugin == entry)
        else:
            out.append(entry)
    return out


def _matches(tool: str, entries: list[str]) -> bool:
    return any(fnmatchcase(tool, entry) for entry in entries)


def _allowed_by(
    tool: str,
    allow: list[str] | None,
    deny: list[str] | None,
    catalog: Catalog,
    tools: list[tuple[str, str | None]],
) -> bool:
    if deny and _matches(tool, _expand(deny, catalog, tools)):
        return False
    if not allow:
        return True
    expanded = _expand(allow, catalog, tools)
    if _matches(tool, expanded):
        return True
    return tool == "apply_patch" and _matches("write", expanded)


def _scope(scope: dict[str, Any] | None) -> tuple[list[str] | None, list[str] | None]:
    if not scope:
        return None, None
    allow = scope.get("allow")
    if allow is None and scope.get("alsoAllow"):
        allow = ["*", *scope["alsoAllow"]]
    return allow, scope.get("deny")


def baseline_resolve(
    doc: dict[str, Any], catalog: Catalog, ctx: RunContext, tools: list[tuple[str, str | None]]
) -> list[str]:
    """Allowed tool names in inventory order."""
    g = doc.get("tools", {})
    agents = doc.get("agents", {})
    agent = (agents.get("entries") or {}).get(ctx.agent or "", {})
    at = agent.get("tools", {})
    layers: list[tuple[list[str] | None, list[str] | None]] = []
    profile = at.get("profile") or g.get("profile")
    if profile:
        also = at.get("alsoAllow") if at.get("alsoAllow") is not None else g.get("alsoAllow", [])
        layers.append(([*catalog.profiles[profile], *also], None))
    layers.append(_scope(g))
    keys = [f"{ctx.provider}/{ctx.model}", ctx.provider or ""]
    for table in (g.get("byProvider") or {}, None):
        if table is None:
            break
        hit = next((table[k] for k in keys if k in table), None)
        layers.append(_scope(hit))
    layers.append(_scope(at))
    info = parse_session_key(ctx.spawned_by or ctx.session_key)
    groups = ((doc.get("channels") or {}).get(info.channel or "", {}) or {}).get("groups") or {}
    group = groups.get(info.group or "") or groups.get("*") or {}
    senders = group.get("toolsBySender") or {}
    sender_hit = senders.get(f"id:{ctx.sender.id}") if ctx.sender.id else None
    layers.append(_scope(sender_hit) if sender_hit is not None else _scope(group.get("tools")))
    gsenders = g.get("toolsBySender") or {}
    layers.append(_scope(gsenders.get(f"id:{ctx.sender.id}") or gsenders.get("*")))
    mode = (agent.get("sandbox") or {}).get("mode") or (
        (agents.get("defaults") or {}).get("sandbox") or {}
    ).get("mode")
    if mode == "all":
        sb = ((g.get("sandbox") or {}).get("tools")) or {}
        allow = [*catalog.sandbox_allow, *sb.get("alsoAllow", [])]
        lifted = _expand(sb.get("alsoAllow", []), catalog, tools)
        deny = sb.get("deny") or [
            d for d in catalog.sandbox_deny if not _matches(_norm(d, catalog), lifted)
        ]
        layers.append((allow, deny))
    depth = ctx.subagent_depth or 0
    if depth:
        sub = ((g.get("subagents") or {}).get("tools")) or {}
        max_depth = ((agents.get("defaults") or {}).get("subagents") or {}).get("maxSpawnDepth", 1)
        deny = [
            *catalog.subagent_deny_always,
            *(catalog.subagent_deny_leaf if depth >= max_depth else ()),
            *sub.get("deny", []),
        ]
        layers.append((sub.get("allow"), deny))
    if ctx.parent is not None and ctx.parent.allow is not None:
        layers.append((list(ctx.parent.allow), list(ctx.parent.deny)))
    out = []
    for name, _ in tools:
        if name in catalog.owner_only and not ctx.is_owner:
            continue
        if all(_allowed_by(name, allow, deny, catalog, tools) for allow, deny in layers):
            out.append(name)
    return out
