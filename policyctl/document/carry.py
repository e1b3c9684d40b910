"""`extends` shadowing: a more specific scope a child adds inherits the base denies it hides.

Everything below about deny lists holds for `ask` lists too (`LISTS`): a base's ask is a
refusal only a person can lift, and its `tool(specifier)` entries travel with the list.

Merging unions deny lists key by key, but many lookups take the first, most specific hit and
ignore the rest: a `byProvider` model key before its provider key, an agent entry before
`agents.defaults.tools`, a specific group before the `*` group, an account's groups before the
channel's, a sender rule before the scope's own lists, an agent's `toolsBySender`, sandbox and
subagent lists before the global ones. A child that adds the more specific scope would make the
base's deny stop applying without deleting it. So after each merge, every scope the child
introduced gets, unioned into its `deny`, the deny lists of every base scope it can shadow:

- `byProvider: {p/m: ...}` inherits `byProvider.p` of the same tools block;
- `agents.entries.X` inherits `agents.defaults.tools` (deny, byProvider, toolsBySender,
  sandbox and subagent denies);
- a `toolsBySender` key inherits the keys of the same map that a sender could also match
  (`*` and the less specific kinds), for a group's map also the group's own `tools.deny`, and
  for an agent's map every deny of the global map;
- an agent's `sandbox.tools.deny` and `subagents.tools` inherit the global ones;
- a group `G` inherits every deny of the `*` group of the same map, and a topic or sender
  group (`C1:topic:5`) those of the groups it falls back to (`C1`);
- `accounts.A.groups` inherits every deny of each channel group, under the same group id.

This can deny more than the base did (a new sender key inherits the deny of every key the same
sender might also match), never less. The carried entries keep their base file locations, so
the audit trail points at the rule that was written.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..located import LocMap, LocSeq
from .floors import check_floors
from .keys import normal_key, sender_normal_form
from .merge import union

Path = tuple[str, ...]
Carry = tuple[Path, LocSeq]  # (a policy scope in the merged document, denies to union into it)

#: the lists carried: base denies, and base asks the same way
LISTS = ("deny", "ask")

_KIND_ORDER = {"channel": 0, "id": 1, "e164": 2, "username": 3, "name": 4, "*": 5}


def carry_base_denies(base: LocMap, merged: LocMap) -> LocMap:
    """`merged` (base + child) with the base denies of every shadowed scope carried over,
    and the base `ask` lists the same way (an ask is a refusal a person can lift: a child
    must not drop it by adding a more specific scope either).

    First, the scalars that decide whether those denies apply (sandbox mode, the main session,
    maxSpawnDepth, the catalog) must not loosen: `floors` raises `PolicyError` when they do."""
    check_floors(base, merged)
    for key in LISTS:
        for scope, denies in list(_carries(base, merged, key)):
            if denies:
                merged = _union_into(merged, scope, denies, key)
    return merged


# -- finding what shadows what ------------------------------------------------------------------


def _get(node: Any, path: Path) -> Any:
    for part in path:
        if not isinstance(node, LocMap) or part not in node:
            return None
        node = node[part]
    return node


def _keys(node: Any) -> list[str]:
    return list(node) if isinstance(node, LocMap) else []


def _deny(node: Any, key: str) -> LocSeq:
    """The deny (or ask) list of one policy scope (empty when it has none)."""
    found = node.get(key) if isinstance(node, LocMap) else None
    return found if isinstance(found, LocSeq) else LocSeq()


def _all_denies(node: Any, list_key: str) -> LocSeq:
    """Every deny (or ask) list anywhere under `node`, joined (a group with its sender rules)."""
    out = LocSeq()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, LocMap):
            for key, value in current.items():
                if key == list_key and isinstance(value, LocSeq):
                    out = union(out, value)
                elif isinstance(value, LocMap):
                    stack.append(value)
    return out


def _join(*lists: LocSeq) -> LocSeq:
    out = LocSeq()
    for seq in lists:
        out = union(out, seq)
    return out


def _tools_blocks(doc: LocMap) -> Iterator[tuple[Path, bool]]:
    """Every tools block and whether it is an agent's (or the defaults') rather than global."""
    yield ("tools",), False
    yield ("agents", "defaults", "tools"), True
    for aid in _keys(_get(doc, ("agents", "entries"))):
        yield ("agents", "entries", aid, "tools"), True


def _group_maps(doc: LocMap) -> Iterator[Path]:
    for channel in _keys(doc.get("channels")):
        yield ("channels", channel, "groups")
        for account in _keys(_get(doc, ("channels", channel, "accounts"))):
            yield ("channels", channel, "accounts", account, "groups")


def _carries(base: LocMap, merged: LocMap, key: str) -> Iterator[Carry]:
    yield from _agent_entries(base, merged, key)
    for block, is_agent in _tools_blocks(merged):
        if _get(merged, block) is None:
            continue
        yield from _provider_keys(base, merged, block, key)
        yield from _sender_keys(
            base,
            merged,
            (*block, "toolsBySender"),
            _deny(None, key),
            is_agent,
            key,
            _base_block(base, block),
        )
        if is_agent:
            for own, glob in (
                ((*block, "sandbox", "tools", key), ("tools", "sandbox", "tools")),
                ((*block, "subagents", "tools"), ("tools", "subagents", "tools")),
            ):
                if _get(merged, own) is not None and _get(base, own) is None:
                    yield own[:-1] if own[-1] == key else own, _deny(_get(base, glob), key)
    for groups in _group_maps(merged):
        yield from _groups(base, merged, groups, key)


def _agent_entries(base: LocMap, merged: LocMap, key: str) -> Iterator[Carry]:
    defaults = _get(base, ("agents", "defaults", "tools"))
    if not isinstance(defaults, LocMap):
        return
    for aid in _keys(_get(merged, ("agents", "entries"))):
        if _get(base, ("agents", "entries", aid)) is not None:
            continue
        tools: Path = ("agents", "entries", aid, "tools")
        yield tools, _deny(defaults, key)
        for name in _keys(defaults.get("byProvider")):
            yield (*tools, "byProvider", name), _deny(defaults["byProvider"][name], key)
        for name in _keys(defaults.get("toolsBySender")):
            yield (*tools, "toolsBySender", name), _deny(defaults["toolsBySender"][name], key)
        for part in ("sandbox", "subagents"):
            inner = _get(defaults, (part, "tools"))
            if isinstance(inner, LocMap) and key in inner:
                yield (*tools, part, "tools"), _deny(inner, key)


def _base_block(base: LocMap, block: Path) -> Path:
    """Where the base's rules for `block` were: an agent the base has no entry for ran under
    `agents.defaults.tools`."""
    if block[:2] == ("agents", "entries") and _get(base, block[:3]) is None:
        return ("agents", "defaults", "tools")
    return block


def _provider_keys(base: LocMap, merged: LocMap, block: Path, list_key: str) -> Iterator[Carry]:
    base_map = _get(base, (*_base_block(base, block), "byProvider"))
    by_normal = {normal_key("provider", k): k for k in _keys(base_map)}
    for key in _keys(_get(merged, (*block, "byProvider"))):
        norm = normal_key("provider", key) or ""
        if "/" not in norm or _get(base, (*block, "byProvider", key)) is not None:
            continue
        provider = by_normal.get(norm.partition("/")[0])
        if provider is not None:
            yield (*block, "byProvider", key), _deny(base_map[provider], list_key)


def _kind(key: str) -> int:
    norm = sender_normal_form(key.strip()) or ""
    return _KIND_ORDER.get(norm if norm == "*" else norm.partition(":")[0], 5)


def _sender_keys(
    base: LocMap,
    merged: LocMap,
    table: Path,
    scope_deny: LocSeq,
    agent_level: bool,
    list_key: str,
    base_block: Path | None = None,
) -> Iterator[Carry]:
    base_map = _get(base, (*base_block, "toolsBySender") if base_block else table)
    global_all = (
        _all_denies(_get(base, ("tools", "toolsBySender")), list_key) if agent_level else LocSeq()
    )
    for key in _keys(_get(merged, table)):
        if _get(base, (*table, key)) is not None:
            continue
        order = _kind(key)
        shadowed = [base_map[k] for k in _keys(base_map) if _kind(k) > order]
        yield (*table, key), _join(scope_deny, global_all, *(_deny(s, list_key) for s in shadowed))


def _groups(base: LocMap, merged: LocMap, groups: Path, key: str) -> Iterator[Carry]:
    in_account = len(groups) == 5
    channel_groups = _get(base, (*groups[:2], "groups")) if in_account else None
    new_account_map = in_account and _get(base, groups) is None
    wildcard = _get(base, (*groups, "*"))
    if new_account_map and isinstance(channel_groups, LocMap):
        # the account's groups replace the channel's: every channel group's denies come along,
        # under its own id (created when the account map does not name it)
        for gid in _keys(channel_groups):
            yield (*groups, gid, "tools"), _all_denies(channel_groups[gid], key)
        wildcard = channel_groups.get("*")
    for gid in _keys(_get(merged, groups)):
        group = (*groups, gid)
        if gid != "*" and _get(base, group) is None:
            # a new group hides the `*` group and the group ids it is a topic or sender of
            hidden = [_get(base, (*groups, g)) for g in _less_specific(gid)]
            carried = _join(*(_all_denies(h, key) for h in (*hidden, wildcard) if h is not None))
            yield (*group, "tools"), carried
            for name in _keys(_get(merged, (*group, "toolsBySender"))):
                yield (*group, "toolsBySender", name), carried
        # a sender rule the child adds to a group hides the group's own tools
        own = _deny(_get(base, (*group, "tools")), key)
        yield from _sender_keys(base, merged, (*group, "toolsBySender"), own, False, key)


def _less_specific(gid: str) -> list[str]:
    """The group ids a run in `gid` falls back to (semantics 7.4): `X:topic:T:sender:S` ->
    `X:topic:T`, `X`; `X:topic:T` -> `X`; `X:sender:S` -> `X`."""
    out = []
    if ":sender:" in gid:
        gid = gid.rsplit(":sender:", 1)[0]
        out.append(gid)
    if ":topic:" in gid:
        out.append(gid.split(":topic:", 1)[0])
    return out


# -- carrying -------------------------------------------------------------------------------------


def _union_into(doc: LocMap, scope: Path, denies: LocSeq, key: str) -> LocMap:
    """A copy of `doc` where the mapping at `scope` (created if missing) has `denies` unioned
    into its `key` list (deny or ask). Containers on the way are copied, never changed in
    place: an alias may share them with another part of the document."""

    def rebuild(node: Any, rest: Path) -> Any:
        current = node if isinstance(node, LocMap) else LocMap(getattr(node, "src", None))
        if node is not None and not isinstance(node, LocMap):
            return node  # the wrong type already: the schema reports it
        out = LocMap(current.src)
        for name, value in current.items():
            out.put(name, value, current.key_src.get(name), current.val_src.get(name))
        if not rest:
            old = current.get(key)
            if old is not None and not isinstance(old, LocSeq):
                return out
            joined = union(denies, old) if isinstance(old, LocSeq) else union(denies, LocSeq())
            out.put(key, joined, current.key_src.get(key), current.val_src.get(key))
            return out
        head = rest[0]
        out.put(
            head,
            rebuild(current.get(head), rest[1:]),
            current.key_src.get(head),
            current.val_src.get(head),
        )
        return out

    result = rebuild(doc, scope)
    assert isinstance(result, LocMap)
    return result
