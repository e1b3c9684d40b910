"""`extends` as the README states it: mappings deep-merge, lists are replaced, `deny` lists are
unioned (base entries first), and `null` never erases a base value."""

from __future__ import annotations

from typing import Any


def merged(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in child.items():
        if key == "extends":
            continue
        if value is None:
            continue
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            out[key] = merged(old, value)
        elif key == "deny" and isinstance(old, list) and isinstance(value, list):
            out[key] = [*old, *(v for v in value if v not in old)]
        else:
            out[key] = value
    out.pop("extends", None)
    return out


# -- extends does not loosen the scalars that gate a deny layer (README "Security") ----------
#
# Sandbox mode (off < non-main < all) for the defaults and every agent entry (one the child
# adds: the base's default is its floor), the main session while an agent is non-main in both,
# maxSpawnDepth (only lowered) and the catalog (never changed). Unset: off, main, 1, openclaw.

MODES = ("off", "non-main", "all")


def _modes(doc: dict[str, Any], agents: list[str]) -> dict[str | None, str]:
    default = _at(doc, "agents", "defaults", "sandbox", "mode") or "off"
    out: dict[str | None, str] = {None: default}
    for aid in agents:
        out[aid] = _at(doc, "agents", "entries", aid, "sandbox", "mode") or default
    return out


def _main(doc: dict[str, Any]) -> str:
    if _at(doc, "session", "scope") == "global":
        return "global"
    return str(_at(doc, "session", "mainKey") or "main").lower()


def loosened(base: dict[str, Any], child: dict[str, Any]) -> list[str]:
    """The codes loading `child` (which extends `base`) must refuse with; [] when it loads."""
    out = merged(base, child)
    agents = list(_at(out, "agents", "entries") or {})
    was, now = _modes(base, agents), _modes(out, agents)
    codes = []
    looser_mode = any(MODES.index(now[a]) < MODES.index(was[a]) for a in now)
    moved_main = _main(base) != _main(out) and any(was[a] == now[a] == "non-main" for a in now)
    if looser_mode or moved_main:
        codes.append("PC359")
    depth = _at(out, "agents", "defaults", "subagents", "maxSpawnDepth") or 1
    if depth > (_at(base, "agents", "defaults", "subagents", "maxSpawnDepth") or 1):
        codes.append("PC360")
    if (out.get("catalog") or "openclaw") != (base.get("catalog") or "openclaw"):
        codes.append("PC361")
    return codes


def tightened(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """`child` with every scalar `loosened` refuses raised to the base's floor (a child that
    loads, for the rest of the comparison)."""
    fixed = _deep_copy(child)
    agents = list(_at(merged(base, fixed), "agents", "entries") or {})
    floors = _modes(base, agents)
    for aid, path in [(None, ("defaults",)), *((a, ("entries", a)) for a in agents)]:
        sandbox = _at(fixed, "agents", *path, "sandbox")
        mode = sandbox.get("mode") if isinstance(sandbox, dict) else None
        if mode is not None and MODES.index(mode) < MODES.index(floors[aid]):
            sandbox["mode"] = floors[aid]
    subagents = _at(fixed, "agents", "defaults", "subagents")
    floor = _at(base, "agents", "defaults", "subagents", "maxSpawnDepth") or 1
    if isinstance(subagents, dict) and (subagents.get("maxSpawnDepth") or 1) > floor:
        subagents["maxSpawnDepth"] = floor
    if "catalog" in fixed:
        fixed["catalog"] = base.get("catalog") or "openclaw"
    if loosened(base, fixed):  # only the main session is left: keep the base's
        fixed.pop("session", None)
    return fixed


# -- extends does not hide base denies (README "Sharing settings: extends" and "Security") --
#
# Written from the documentation's words, not from policyctl/document/carry.py: where a lookup
# takes the most specific hit, a scope the child adds (absent from the base) gets, unioned
# into its `deny`, the base denies it would otherwise hide:
#   - a `provider/model` key: the `provider` key's (same tools block);
#   - an agent entry: `agents.defaults.tools`' deny, byProvider, toolsBySender, sandbox and
#     subagents denies;
#   - a sender rule: those of the keys the same sender could also match (less specific kinds,
#     `*` last); in a group also the group's own deny, in an agent's map every global one;
#   - a group: every deny of the `*` group (a topic group `C1:topic:5` also `C1`'s), into its
#     tools and its sender rules;
#   - an account's groups (a new map): every deny of each channel group of the same id;
#   - an agent's sandbox and subagent lists: the global ones.

Doc = dict[str, Any]
_SENDER_ORDER = ("channel", "id", "e164", "username", "name")


def _at(node: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _denies_of(node: Any) -> list[str]:
    found = node.get("deny") if isinstance(node, dict) else None
    return list(found) if isinstance(found, list) else []


def _every_deny(node: Any) -> list[str]:
    """Every deny list under `node` (a group with its sender rules), in document order."""
    out: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "deny" and isinstance(value, list):
                out += value
            elif isinstance(value, dict):
                out += _every_deny(value)
    return out


def _add(doc: Doc, path: tuple[str, ...], denies: list[str]) -> None:
    if not denies:
        return
    node = doc
    for part in path:
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        if not isinstance(nxt, dict):
            return
        node = nxt
    old = node.get("deny")
    old = list(old) if isinstance(old, list) else []
    node["deny"] = [*denies, *(d for d in old if d not in denies)]


def _rank(key: str) -> int:
    """How specific a sender key is: channel, id (also an untyped key), e164, username,
    name, then `*`."""
    key = key.strip()
    if key == "*":
        return len(_SENDER_ORDER)
    kind, sep, _ = key.partition(":")
    return _SENDER_ORDER.index(kind) if sep and kind in _SENDER_ORDER else 1


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return list(value)
    return value


def extended(base: Doc, child: Doc, provider_of: Any = None) -> Doc:
    """`merged(base, child)` with the base denies of every scope the child shadows carried
    into it. `provider_of(key)` gives a provider key's normal form (aliases resolved)."""

    def norm(key: str) -> str:
        key = key.strip().lower()
        head, sep, tail = key.partition("/")
        return (provider_of(head) if provider_of else head) + sep + tail

    out = _deep_copy(merged(base, child))
    todo: list[tuple[tuple[str, ...], list[str]]] = []
    entries = _at(out, "agents", "entries") or {}
    defaults = _at(base, "agents", "defaults", "tools")
    for aid in entries:
        if isinstance(defaults, dict) and _at(base, "agents", "entries", aid) is None:
            tools = ("agents", "entries", aid, "tools")
            todo.append((tools, _denies_of(defaults)))
            for part in ("byProvider", "toolsBySender"):
                for name, scope in (defaults.get(part) or {}).items():
                    todo.append(((*tools, part, name), _denies_of(scope)))
            for part in ("sandbox", "subagents"):
                inner = _at(defaults, part, "tools")
                if isinstance(inner, dict) and "deny" in inner:
                    todo.append(((*tools, part, "tools"), _denies_of(inner)))
    blocks: list[tuple[tuple[str, ...], bool]] = [(("tools",), False)]
    blocks.append((("agents", "defaults", "tools"), True))
    blocks += [(("agents", "entries", aid, "tools"), True) for aid in entries]
    for block, is_agent in blocks:
        if _at(out, *block) is None:
            continue
        # where the base's rules for this block were: no entry in the base means the defaults
        was = block
        if block[:2] == ("agents", "entries") and _at(base, *block[:3]) is None:
            was = ("agents", "defaults", "tools")
        base_providers = {norm(k): v for k, v in (_at(base, *was, "byProvider") or {}).items()}
        for key in _at(out, *block, "byProvider") or {}:
            provider, slash, _ = norm(key).partition("/")
            if slash and _at(base, *block, "byProvider", key) is None:
                todo.append(((*block, "byProvider", key), _denies_of(base_providers.get(provider))))
        global_all = _every_deny(_at(base, "tools", "toolsBySender")) if is_agent else []
        todo += _senders(base, out, (*block, "toolsBySender"), [], global_all, was)
        if is_agent:
            for part in ("sandbox", "subagents"):
                own = _at(out, *block, part, "tools")
                if part == "sandbox":
                    present = isinstance(own, dict) and "deny" in own
                    in_base = isinstance(_at(base, *block, part, "tools"), dict) and (
                        "deny" in _at(base, *block, part, "tools")
                    )
                else:
                    present = own is not None
                    in_base = _at(base, *block, part, "tools") is not None
                if present and not in_base:
                    todo.append(
                        ((*block, part, "tools"), _denies_of(_at(base, "tools", part, "tools")))
                    )
    for channel, config in (out.get("channels") or {}).items():
        maps = [(channel, "groups")]
        maps += [(channel, "accounts", a, "groups") for a in (config or {}).get("accounts") or {}]
        for path in maps:
            todo += _group_carries(base, out, ("channels", *path))
    for path, denies in todo:
        _add(out, path, denies)
    return out


def _senders(
    base: Doc,
    out: Doc,
    table: tuple[str, ...],
    scope_deny: list[str],
    global_all: list[str],
    base_block: tuple[str, ...] | None = None,
) -> list[tuple[tuple[str, ...], list[str]]]:
    base_map = _at(base, *base_block, "toolsBySender") if base_block else _at(base, *table)
    base_map = base_map or {}
    carries = []
    for key in _at(out, *table) or {}:
        if _at(base, *table, key) is not None:
            continue
        rank = _rank(key)
        hidden = [d for k, v in base_map.items() if _rank(k) > rank for d in _denies_of(v)]
        carries.append(((*table, key), [*scope_deny, *global_all, *hidden]))
    return carries


def _fallbacks(gid: str) -> list[str]:
    """The group ids a run in `gid` falls back to (semantics 7.4)."""
    out = []
    if ":sender:" in gid:
        gid = gid.split(":sender:")[0]
        out.append(gid)
    if ":topic:" in gid:
        out.append(gid.split(":topic:")[0])
    return out


def _group_carries(
    base: Doc, out: Doc, groups: tuple[str, ...]
) -> list[tuple[tuple[str, ...], list[str]]]:
    carries: list[tuple[tuple[str, ...], list[str]]] = []
    wildcard = _at(base, *groups, "*")
    if len(groups) == 5 and _at(base, *groups) is None:  # a new account's groups
        channel_groups = _at(base, *groups[:2], "groups") or {}
        for gid, group in channel_groups.items():
            carries.append(((*groups, gid, "tools"), _every_deny(group)))
        wildcard = channel_groups.get("*")
    for gid in _at(out, *groups) or {}:
        if gid != "*" and _at(base, *groups, gid) is None:
            hidden = [_at(base, *groups, g) for g in _fallbacks(gid)] + [wildcard]
            carried = [d for h in hidden if h is not None for d in _every_deny(h)]
            carries.append(((*groups, gid, "tools"), carried))
            for name in _at(out, *groups, gid, "toolsBySender") or {}:
                carries.append(((*groups, gid, "toolsBySender", name), carried))
        own = _denies_of(_at(base, *groups, gid, "tools"))
        carries += _senders(base, out, (*groups, gid, "toolsBySender"), own, [])
    return carries
