"""Normalised keys: which maps of a policy are looked up by a normal form, what that form is,
and the two load-time rules that follow from it.

Channels, accounts, agents, providers, sender keys and MCP servers are matched after
normalising their keys (trimmed; lowercased except account ids; more for sender keys and MCP
servers), so
two keys with the same normal form would silently overwrite each other: `Slack:` next to
`slack:`, or `"SLACK "` in a file that extends one with `slack:`. Within one file that is an
error (PC311); across `extends`, `merge` joins the two on the normal form (a warning, PC420,
names both spellings), so the extended file's deny lists still apply.

The legacy `agents.list: [{id: ...}]` shape is rewritten into `agents.entries` here, per file
and before merging, so a child's `agents.list` merges with the base's agents by id under the
same deny-union rule instead of replacing them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics import Diagnostic, Source
from ..located import LocMap, LocSeq, format_path
from ..names import fold, mcp_tool_name

KeyPath = tuple[str, ...]

_SENDER_KINDS = ("channel", "id", "e164", "username", "name")


def map_kind(path: KeyPath) -> str | None:
    """What the keys of the mapping at `path` name, when they are matched normalised."""
    if not path:
        return None
    last = path[-1]
    if last == "byProvider" and len(path) >= 2 and path[-2] == "tools":
        return "provider"
    if last == "toolsBySender":
        return "sender"
    if path == ("channels",):
        return "channel"
    if len(path) == 3 and path[0] == "channels" and last == "accounts":
        return "account"
    if path == ("agents", "entries"):
        return "agent"
    if path == ("inventory", "mcp"):
        return "mcp server"
    return None


def normal_key(kind: str, key: str) -> str | None:
    """The normal form a key of a `kind` map is matched by (None: not a valid key, which the
    compiler reports). Group ids are matched exactly (semantics 7.4) and have no entry here."""
    text = key.strip()
    if kind == "sender":
        return sender_normal_form(text)
    if kind == "mcp server":
        # the server part of the tool names this server's tools get (semantics 10)
        return mcp_tool_name(text, "t")[: -len("__t")].lower()
    if kind == "provider":
        provider, slash, model = text.lower().partition("/")
        return f"{provider.strip()}/{model.strip()}" if slash else provider
    if kind == "account":
        return text or None  # account ids are matched as written, only trimmed
    return text.lower() or None


def sender_normal_form(text: str) -> str | None:
    """`Username:@Ada` -> `username:ada`; an untyped key is a sender id (semantics 7.5)."""
    if text == "*":
        return "*"
    kind, sep, value = text.partition(":")
    kind = kind.lower()
    if sep and kind in _SENDER_KINDS:
        value = fold(value)
        if kind == "username":
            value = value.removeprefix("@")
        if kind == "channel":
            channel, _, sender_id = value.partition(":")
            if not channel.strip() or not sender_id.strip():
                return None
            return f"channel:{channel.strip()}:{sender_id.strip()}"
        return f"{kind}:{value}" if value else None
    return f"id:{text.lower()}" if text else None


def _maps(doc: LocMap) -> Iterator[tuple[KeyPath, LocMap]]:
    """Every mapping of the document with its key path (an explicit stack: no recursion)."""
    stack: list[tuple[KeyPath, Any]] = [((), doc)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, LocMap):
            yield path, node
            stack.extend(((*path, k), v) for k, v in node.items() if isinstance(k, str))
        elif isinstance(node, LocSeq) and path == ("agents", "list"):
            stack.extend(((*path, str(i)), v) for i, v in enumerate(node))


def collisions(doc: LocMap) -> list[Diagnostic]:
    """PC311 for every key of one file that repeats another key's normal form."""
    found: list[Diagnostic] = []
    for path, mapping in _maps(doc):
        kind = map_kind(path)
        if kind is None:
            continue
        first: dict[str, str] = {}
        for key in mapping:
            norm = normal_key(kind, key)
            if norm is None:
                continue
            if norm in first:
                found.append(_collision(kind, key, first[norm], norm, path, mapping))
            else:
                first[norm] = key
    inventory = doc.get("inventory")
    plugins = inventory.get("plugins") if isinstance(inventory, LocMap) else None
    if isinstance(plugins, LocSeq):
        found.extend(_plugin_collisions(plugins))
    return found


def _collision(
    kind: str, key: str, other: str, norm: str, path: KeyPath, mapping: LocMap
) -> Diagnostic:
    earlier = mapping.key_src.get(other)
    where = f" (line {earlier.line})" if earlier else ""
    return Diagnostic.make(
        "PC311",
        f'{kind} key "{key}" and "{other}"{where} are both "{norm}"; one would silently '
        "replace the other",
        mapping.key_src.get(key) or mapping.src,
        path=format_path((*path, key)),
        fix=f'merge the two into one "{other}" entry',
    )


def _plugin_collisions(plugins: LocSeq) -> list[Diagnostic]:
    found = []
    seen: dict[str, int] = {}
    for i, item in enumerate(plugins):
        name = item.get("name") if isinstance(item, LocMap) else None
        if not isinstance(name, str) or not name.strip():
            continue
        norm = fold(name)
        if norm in seen:
            found.append(
                Diagnostic.make(
                    "PC311",
                    f'plugin tool "{name}" repeats plugin tool {seen[norm]} ("{norm}")',
                    item.val_src.get("name") or plugins.item_src[i],
                    path=f"inventory.plugins[{i}].name",
                    fix="declare each plugin tool once",
                )
            )
        else:
            seen[norm] = i
    return found


def migrate_legacy(doc: LocMap, diagnostics: list[Diagnostic]) -> LocMap:
    """`agents.list: [{id: a, ...}]` -> `agents.entries: {a: {...}}`, locations kept (PC408).

    A list that is not all mappings with a text `id` is left alone for the schema to report.
    """
    agents = doc.get("agents")
    if not isinstance(agents, LocMap) or not isinstance(agents.get("list"), LocSeq):
        return doc
    items: LocSeq = agents["list"]
    if not all(isinstance(i, LocMap) and isinstance(i.get("id"), str) for i in items):
        return doc
    entries = agents.get("entries")
    if entries is not None and not isinstance(entries, LocMap):
        return doc
    new_entries = LocMap(entries.src if entries is not None else agents.val_src.get("list"))
    taken: dict[str, str] = {}
    existing = entries if entries is not None else LocMap()
    for key, value in existing.items():
        new_entries.put(key, value, existing.key_src.get(key), existing.val_src.get(key))
        taken[fold(key)] = key
    for item, item_src in zip(items, items.item_src, strict=False):
        aid: str = item["id"]
        id_src = item.val_src.get("id") or item_src
        norm = fold(aid)
        if norm in taken:
            diagnostics.append(
                Diagnostic.make(
                    "PC306",
                    f'agent "{aid}" is defined twice',
                    item.src or item_src,
                    path="agents.list",
                )
            )
            continue
        body = LocMap(item.src)
        for key, value in item.items():
            if key != "id":
                body.put(key, value, item.key_src.get(key), item.val_src.get(key))
        new_entries.put(aid, body, id_src, item_src)
        taken[norm] = aid
    diagnostics.append(
        Diagnostic.make(
            "PC408",
            "agents.list is the legacy shape of agents.entries",
            agents.key_src.get("list") or _src(agents),
            path="agents.list",
            fix="run `policyctl fmt --migrate`",
        )
    )
    out = LocMap(agents.src)
    for key, value in agents.items():
        if key != "list":
            out.put(key, value, agents.key_src.get(key), agents.val_src.get(key))
    out.put(
        "entries",
        new_entries,
        agents.key_src.get("entries") or agents.key_src.get("list"),
        new_entries.src,
    )
    migrated = LocMap(doc.src)
    for key, value in doc.items():
        kept = out if key == "agents" else value
        migrated.put(key, kept, doc.key_src.get(key), doc.val_src.get(key))
    return migrated


def _src(value: Any) -> Source | None:
    return getattr(value, "src", None)


def own_session_kind(key: str) -> str | None:
    """What kind of session `key` names when it is one with a key of its own (semantics 7.6):
    "group", "channel", "direct-message" or "subagent"; None for any other key. Such a
    session is never the main session, whatever `session.mainKey` says."""
    from ..context import parse_session_key

    info = parse_session_key(key)
    if info.is_subagent or info.subagent_depth:
        return "subagent"
    if info.channel is None:
        return None
    if info.group is None:
        return "direct-message"
    lowered = [part.strip().lower() for part in key.split(":")]
    return "channel" if "channel" in lowered and "group" not in lowered else "group"
