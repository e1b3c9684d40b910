"""Matching: one tool under one layer policy (`decide`), and a whole inventory (bitmasks).

Both forms of semantics 5 live here side by side, so the deny, the implied deny (`deny_implies`)
and the catalog grants are written once for each and can be read against each other. Bit i of
a mask stands for the inventory's i-th tool; an entry list becomes the mask of the tools it
matches by looking names up in the `InventoryIndex` (globs aside). Nothing here holds state:
the memo tables a resolve fills live in the engine's per-inventory cache (`Memo`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, Protocol

from ..catalog import Catalog
from ..compiled import LayerPolicy
from ..entries import EntryList, Hit
from ..inventory import Inventory
from ..names import Glob

RuleKind = Literal["deny", "allow", "owner-only", "optional-plugin", "catalog"]


def decide(
    name: str, plugin_id: str | None, policy: LayerPolicy, catalog: Catalog
) -> tuple[RuleKind, Hit | None] | None:
    """Semantics 5 for one tool and one policy: None if kept, else why it is removed."""
    deny = policy.deny
    if deny is not None and deny.entries:
        hit = deny.match(name, plugin_id)
        if hit is not None:
            return "deny", hit
        for source in catalog.deny_implies.get(name, ()):
            hit = deny.match(source)
            if hit is not None:
                return "deny", hit
    allow = policy.allow
    if allow is None or allow.empty or allow.match(name, plugin_id) is not None:
        return None
    for grant in catalog.grants.get(name, ()) if policy.grants else ():
        if allow.match(grant.when_allowed) is not None and not (
            grant.unless_denied and deny is not None and deny.match(grant.when_allowed)
        ):
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
        position: dict[str, int] = {}
        plugin: dict[str, list[int]] = {}
        plugins: list[int] = []
        optional: list[int] = []
        owner: list[int] = []
        limited: dict[str, frozenset[str]] = {}
        by_id = catalog.by_id
        owner_only = catalog.owner_only
        for i, tool in enumerate(inventory.tools):
            position[tool.name] = i
            if tool.plugin_id is not None:
                plugin.setdefault(tool.plugin_id, []).append(i)
                plugins.append(i)
                if tool.optional:
                    optional.append(i)
            else:
                spec = by_id.get(tool.name)
                if spec is not None and spec.providers is not None:
                    limited[tool.name] = spec.providers
            if tool.name in owner_only:
                owner.append(i)
        size = len(inventory.tools)
        names = tuple(t.name for t in inventory.tools)
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

    def sorted_names(self) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """The names in sorted order and their positions (the engine keeps it)."""
        names = self.names
        order = sorted(range(len(names)), key=names.__getitem__)
        return tuple(names[i] for i in order), tuple(order)

    def scan(self, glob: Glob, ordered: tuple[tuple[str, ...], tuple[int, ...]]) -> int:
        """The tools one glob matches: the names that start with its literal head (found by
        bisection in `ordered`, from `sorted_names`), each matched in full."""
        head = glob.head
        if head:
            sorted_names, order = ordered
            start = bisect_left(sorted_names, head)
            hits = []
            for k in range(start, len(sorted_names)):
                name = sorted_names[k]
                if not name.startswith(head):
                    break
                if glob.matches(name):
                    hits.append(order[k])
        else:
            hits = [i for i, name in enumerate(self.names) if glob.matches(name)]
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
            for tool, sources in catalog.deny_implies.items():
                if any(deny.match(source) is not None for source in sources):
                    denied |= self.bit(tool)
        missing = 0
        if allow is not None and not allow.empty:
            allowed = self.list_mask(allow, memo)
            if policy.grants:
                for tool, grants in catalog.grants.items():
                    for grant in grants:
                        if allow.match(grant.when_allowed) is not None and not (
                            grant.unless_denied
                            and deny is not None
                            and deny.match(grant.when_allowed) is not None
                        ):
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
        names = self.names
        return tuple(names[i] for i in iter_bits(mask))


def mask_of(positions: Iterable[int], size: int) -> int:
    """The mask with these bits set, in time linear in `size` (OR-ing bits one at a time
    into a 2,000-bit integer is quadratic)."""
    packed = bytearray((size + 7) // 8)
    for i in positions:
        packed[i >> 3] |= 1 << (i & 7)
    return int.from_bytes(packed, "little")


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
