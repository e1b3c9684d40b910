"""Matching: one tool under one layer policy (`decide`), and a whole inventory (bitmasks).

Both forms of semantics 5 live here side by side; the implied deny (`implied_deny`) and the
catalog grants (`granted`) are written once and used by both. Bit i of
a mask stands for the inventory's i-th tool; an entry list becomes the mask of the tools it
matches by looking names up in the `InventoryIndex` (globs aside). Nothing here holds state:
the memo tables a resolve fills live in the engine's per-inventory cache (`Memo`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import accumulate, chain, compress
from types import MappingProxyType
from typing import Literal, Protocol

from ..catalog.inventory import Inventory
from ..catalog.model import Catalog, Grant
from ..compile.entries import EntryList, Hit
from ..compile.layers import LayerPolicy
from ..names import Glob

RuleKind = Literal["deny", "allow", "owner-only", "optional-plugin", "catalog"]


def implied_deny(tool: str, deny: EntryList, catalog: Catalog) -> Hit | None:
    """The deny entry that removes `tool` through the catalog's `deny_implies` (a deny of
    `image` also denies `view_image`), or None."""
    for source in catalog.deny_implies.get(tool, ()):
        hit = deny.match(source)
        if hit is not None:
            return hit
    return None


def granted(grant: Grant, policy: LayerPolicy) -> bool:
    """Whether a catalog grant admits its tool under this policy (semantics 5.5: `write`
    admits `apply_patch`; `read` admits `skills_read` unless `read` is denied)."""
    allow, deny = policy.allow, policy.deny
    if not policy.grants or allow is None or allow.match(grant.when_allowed) is None:
        return False
    return not (grant.unless_denied and deny is not None and deny.match(grant.when_allowed))


def decide(
    name: str, plugin_id: str | None, policy: LayerPolicy, catalog: Catalog
) -> tuple[RuleKind, Hit | None] | None:
    """Semantics 5 for one tool and one policy: None if kept, else why it is removed."""
    deny = policy.deny
    if deny is not None and deny.entries:
        hit = deny.match(name, plugin_id) or implied_deny(name, deny, catalog)
        if hit is not None:
            return "deny", hit
    allow = policy.allow
    if allow is None or allow.empty or allow.match(name, plugin_id) is not None:
        return None
    if any(granted(grant, policy) for grant in catalog.grants.get(name, ())):
        return None
    return "allow", None


class Memo(Protocol):
    """Where the engine keeps what matching learns about one inventory."""

    def glob_mask(self, glob: Glob) -> int: ...


@dataclass(frozen=True, slots=True, eq=False)
class InventoryIndex:
    """An inventory seen through one catalog: positions and the construction masks."""

    inventory: Inventory
    position: Mapping[str, int]
    full: int
    plugin: Mapping[str, int]
    all_plugins: int
    optional: int
    owner_only: int
    #: core tools only some providers get; with no provider in the context they are removed
    provider_limited: Mapping[str, frozenset[str]]
    names: tuple[str, ...]

    @staticmethod
    def build(inventory: Inventory, catalog: Catalog) -> InventoryIndex:
        tools = inventory.tools
        size = len(tools)
        names = tuple(t.name for t in tools)
        position = dict(zip(names, range(size), strict=True))
        plugin: dict[str, list[int]] = {}
        plugins: list[int] = []
        optional: list[int] = []
        for i, tool in enumerate(tools):
            if tool.plugin_id is not None:
                plugin.setdefault(tool.plugin_id, []).append(i)
                plugins.append(i)
                if tool.optional:
                    optional.append(i)
        # By name, whoever provides it: a plugin tool called "gateway" is as dangerous as the
        # core one. The catalog's lists are short; the inventory may be long.
        owner = sorted(position[n] for n in catalog.owner_only if n in position)
        limited = {
            row.id: row.providers
            for row in catalog.tools
            if row.providers is not None
            and row.id in position
            and tools[position[row.id]].plugin_id is None
        }
        return InventoryIndex(
            inventory,
            MappingProxyType(position),
            (1 << size) - 1,
            MappingProxyType({k: mask_of(v, size) for k, v in plugin.items()}),
            mask_of(plugins, size),
            mask_of(optional, size),
            mask_of(owner, size),
            MappingProxyType(limited),
            names,
        )

    def bit(self, name: str) -> int:
        pos = self.position.get(name)
        return 0 if pos is None else 1 << pos

    def lines(self) -> tuple[str, Mapping[int, int]]:
        """The names as one text, each line between newlines (one before the first, one after
        the last), and the offset of each line's leading newline -> position (the engine keeps
        it): a glob without middle parts is then one regular-expression scan for a literal
        `\n<head>`, which the expression engine finds by a fast substring search rather than
        by trying a match at every character, as a multiline `^` would."""
        text = "\n" + "\n".join(self.names) + "\n"
        offsets = [0, *accumulate(len(n) + 1 for n in self.names)][:-1]
        return text, dict(zip(offsets, range(len(self.names)), strict=True))

    def scan(self, glob: Glob, lines: tuple[str, Mapping[int, int]] | None) -> int:
        """The tools one glob matches. With `lines` (worth building for long inventories),
        `head*tail` is one scan by an anchored expression with a single `.*` (no
        backtracking blow-up: at most one retry per character of a line); otherwise, and
        for globs with middle parts, the names are matched one by one."""
        if lines is None or glob.middle or "\n" in glob.pattern:
            hits = [i for i, name in enumerate(self.names) if glob.matches(name)]
        else:
            text, at = lines
            if glob.head == glob.pattern:  # no star: one exact name
                pos = self.position.get(glob.pattern)
                hits = [] if pos is None else [pos]
            else:
                expr = f"\n{re.escape(glob.head)}[^\n]*{re.escape(glob.tail)}(?=\n)"
                found = re.finditer(expr, text)
                # a match is the line with its leading newline
                hits = [at[m.start()] for m in found if len(m.group()) > glob.min_length]
        return mask_of(hits, len(self.names))

    def list_mask(self, lst: EntryList, memo: Memo) -> int:
        """The tools any entry of the list matches (semantics 4 and 5, as a set)."""
        if lst.wildcard is not None:
            return self.full
        mask = 0
        position = self.position
        for name in lst.names:
            pos = position.get(name)
            if pos is not None:
                mask |= 1 << pos
        if lst.glob_index is not None:
            # Many globs: ask the combined matcher once per tool, not each glob per tool.
            first = lst.glob_index.first
            hits = [i for i, name in enumerate(self.names) if first(name) is not None]
            mask |= mask_of(hits, len(self.names))
        else:
            for glob, _ in lst.globs:
                mask |= memo.glob_mask(glob)
        if lst.all_plugins is not None:
            mask |= self.all_plugins
        for plugin_id in lst.plugin_ids:
            mask |= self.plugin.get(plugin_id, 0)
        return mask

    def verdict(self, policy: LayerPolicy, catalog: Catalog, memo: Memo) -> tuple[int, int]:
        """(denied, not allowed) masks of one layer policy over this inventory: `decide` for
        every tool at once."""
        deny, allow = policy.deny, policy.allow
        denied = 0
        if deny is not None and deny.entries:
            denied = self.list_mask(deny, memo)
            for tool in catalog.deny_implies:
                if tool in self.position and implied_deny(tool, deny, catalog) is not None:
                    denied |= self.bit(tool)
        missing = 0
        if allow is not None and not allow.empty:
            allowed = self.list_mask(allow, memo)
            for tool, grants in catalog.grants.items() if policy.grants else ():
                if tool in self.position and any(granted(g, policy) for g in grants):
                    allowed |= self.bit(tool)
            missing = self.full & ~allowed
        return denied, missing

    def named_mask(self, lst: EntryList) -> int:
        """Tools the list names exactly (name, plugin id or group:plugins; no globs)."""
        mask = self.all_plugins if lst.all_plugins is not None else 0
        for name in lst.names:
            mask |= self.bit(name)
        for plugin_id in lst.plugin_ids:
            mask |= self.plugin.get(plugin_id, 0)
        return mask

    def provider_mask(self, provider: str | None) -> int:
        """Core tools this provider does not get (catalog constraints). With no provider in
        the context every provider-gated tool is removed: fail closed (semantics 7.9)."""
        found = 0
        for name, providers in self.provider_limited.items():
            if provider is None or provider not in providers:
                found |= self.bit(name)
        return found

    def names_of(self, mask: int) -> tuple[str, ...]:
        """The tools of a mask, in inventory order (a byte of flags at a time, in C)."""
        size = len(self.names)
        flags = chain.from_iterable(
            map(_BYTE_FLAGS.__getitem__, mask.to_bytes((size + 7) // 8, "little"))
        )
        return tuple(compress(self.names, flags))


def mask_of(positions: Iterable[int], size: int) -> int:
    """The mask with these (ascending) bits set. OR-ing bits one at a time into a 2,000-bit
    integer is quadratic; runs of consecutive positions (an MCP server's tools) are set in
    one operation each."""
    mask = 0
    start = end = -1
    for i in positions:
        if i == end:
            end += 1
            continue
        if start >= 0:
            mask |= ((1 << (end - start)) - 1) << start
        start, end = i, i + 1
    if start >= 0:
        mask |= ((1 << (end - start)) - 1) << start
    return mask


#: every byte value as eight 0/1 flags, lowest bit first
_BYTE_FLAGS: tuple[tuple[int, ...], ...] = tuple(
    tuple(value >> b & 1 for b in range(8)) for value in range(256)
)

#: the set bits of every byte value, ascending
_BYTE_BITS: tuple[tuple[int, ...], ...] = tuple(
    tuple(b for b in range(8) if value >> b & 1) for value in range(256)
)


def iter_bits(mask: int) -> list[int]:
    """Positions of the set bits, ascending (a byte at a time: linear in the mask's size)."""
    out: list[int] = []
    table = _BYTE_BITS
    for k, byte in enumerate(mask.to_bytes((mask.bit_length() + 7) // 8, "little")):
        if byte:
            base = k << 3
            out.extend(base + b for b in table[byte])
    return out
