"""Masks: a layer's verdict over an inventory as a bitmask, computed once and memoised.

Bit i stands for the inventory's i-th tool. An entry list becomes the mask of the tools it
matches by looking its names up in the inventory's index (never by scanning the inventory,
except for globs, whose masks are memoised per pattern). A run's answer is then the AND of at
most a dozen such masks; which entry removed which tool is worked out only when someone reads
the trail (see `resolve.Resolution`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .catalog import Catalog
from .compile import LayerPolicy
from .entries import EntryList
from .inventory import Inventory
from .names import Glob


@dataclass(eq=False)
class InventoryIndex:
    """An inventory seen through one catalog: positions, plugin masks, and memo tables."""

    inventory: Inventory
    position: dict[str, int]
    full: int
    plugin: dict[str, int]
    all_plugins: int
    optional: int
    owner_only: int
    provider_limited: dict[str, frozenset[str]]
    names: tuple[str, ...]
    globs: dict[str, int] = field(default_factory=dict)
    verdicts: dict[tuple[object, ...], tuple[int, int]] = field(default_factory=dict)
    named: dict[int, tuple[EntryList, int]] = field(default_factory=dict)
    provider_masks: dict[str | None, int] = field(default_factory=dict)
    allowed: dict[int, tuple[str, ...]] = field(default_factory=dict)

    @staticmethod
    def build(inventory: Inventory, catalog: Catalog) -> InventoryIndex:
        position: dict[str, int] = {}
        plugin: dict[str, int] = {}
        all_plugins = optional = owner = 0
        limited: dict[str, frozenset[str]] = {}
        for i, tool in enumerate(inventory.tools):
            bit = 1 << i
            position[tool.name] = i
            if tool.plugin_id is not None:
                plugin[tool.plugin_id] = plugin.get(tool.plugin_id, 0) | bit
                all_plugins |= bit
                if tool.optional:
                    optional |= bit
            else:
                spec = catalog.by_id.get(tool.name)
                if spec is not None and spec.providers is not None:
                    limited[tool.name] = spec.providers
            if tool.name in catalog.owner_only:
                owner |= bit
        full = (1 << len(inventory.tools)) - 1
        names = tuple(t.name for t in inventory.tools)
        return InventoryIndex(
            inventory, position, full, plugin, all_plugins, optional, owner, limited, names
        )

    def bit(self, name: str) -> int:
        pos = self.position.get(name)
        return 0 if pos is None else 1 << pos

    def glob_mask(self, glob: Glob) -> int:
        found = self.globs.get(glob.pattern)
        if found is None:
            found = 0
            for i, name in enumerate(self.names):
                if glob.matches(name):
                    found |= 1 << i
            self.globs[glob.pattern] = found
        return found

    def list_mask(self, lst: EntryList) -> int:
        """The tools any entry of the list matches (semantics 4 and 5, as a set)."""
        if lst.wildcard is not None:
            return self.full
        mask = 0
        position = self.position
        for name in lst.names:
            pos = position.get(name)
            if pos is not None:
                mask |= 1 << pos
        for glob, _ in lst.globs:
            mask |= self.glob_mask(glob)
        if lst.all_plugins is not None:
            mask |= self.all_plugins
        for plugin_id in lst.plugin_ids:
            mask |= self.plugin.get(plugin_id, 0)
        return mask

    def verdict(self, policy: LayerPolicy, catalog: Catalog) -> tuple[int, int]:
        """(denied, not allowed) masks of one layer policy over this inventory; memoised.

        Memoised by what the lists say, not by which scope wrote them: 50,000 sender rules
        that all deny `exec` share one verdict."""
        deny, allow = policy.deny, policy.allow
        key = (
            allow.signature if allow is not None else None,
            deny.signature if deny is not None else None,
            policy.grants,
        )
        found = self.verdicts.get(key)
        if found is not None:
            return found
        denied = 0
        if deny is not None and deny.entries:
            denied = self.list_mask(deny)
            for tool, sources in catalog.deny_implies.items():
                if any(deny.match(source) is not None for source in sources):
                    denied |= self.bit(tool)
        missing = 0
        if allow is not None and not allow.empty:
            allowed = self.list_mask(allow)
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
        self.verdicts[key] = (denied, missing)
        return denied, missing

    def named_mask(self, lst: EntryList) -> int:
        """Tools the list names exactly (name, plugin id or group:plugins; no globs)."""
        found = self.named.get(id(lst))
        if found is not None and found[0] is lst:
            return found[1]
        mask = self.all_plugins if lst.all_plugins is not None else 0
        for name in lst.names:
            mask |= self.bit(name)
        for plugin_id in lst.plugin_ids:
            mask |= self.plugin.get(plugin_id, 0)
        self.named[id(lst)] = (lst, mask)
        return mask

    def provider_mask(self, provider: str | None) -> int:
        """Core tools this provider does not get (catalog constraints); none when unknown."""
        found = self.provider_masks.get(provider)
        if found is None:
            found = 0
            if provider is not None:
                for name, providers in self.provider_limited.items():
                    if provider not in providers:
                        found |= self.bit(name)
            self.provider_masks[provider] = found
        return found

    def names_of(self, mask: int) -> tuple[str, ...]:
        """The tools of a mask, in inventory order (memoised: many runs share one answer)."""
        found = self.allowed.get(mask)
        if found is None:
            names = self.names
            found = tuple(names[i] for i in iter_bits(mask))
            if len(self.allowed) > 4096:
                self.allowed.clear()
            self.allowed[mask] = found
        return found


def iter_bits(mask: int) -> list[int]:
    """Positions of the set bits, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
