"""Entries and entry lists: normalised once, expanded once, matched without scanning.

An `EntryList` is one allow or deny list after normalisation and static group expansion.
Matching a tool against it is a few dictionary lookups plus the list's globs; the entry that
decided is returned with what it expanded from, so the audit trail names the exact text an
operator wrote and where.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from .diagnostics import Source
from .names import Glob, is_glob

Origin = Literal["config", "profile", "catalog", "inherited"]
PLUGINS_GROUP = "group:plugins"


@dataclass(frozen=True, slots=True)
class Entry:
    """One string of an allow or deny list, normalised, with where it was written."""

    text: str
    raw: str
    key: str
    source: Source | None
    origin: Origin = "config"


@dataclass(frozen=True, slots=True)
class Hit:
    """The entry that matched a tool, and the group or cover it expanded from (if any)."""

    order: int
    entry: Entry
    expanded_from: str | None


@dataclass(frozen=True, slots=True)
class EntryList:
    key: str
    source: Source | None
    entries: tuple[Entry, ...]
    names: Mapping[str, Hit] = field(default_factory=dict)
    plugin_ids: Mapping[str, Hit] = field(default_factory=dict)
    all_plugins: Hit | None = None
    wildcard: Hit | None = None
    globs: tuple[tuple[Glob, Hit], ...] = ()
    #: the normalised entry texts: lists with equal signatures match the same tools
    signature: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.entries

    @property
    def restrictive(self) -> bool:
        """An allow list that actually restricts: non-empty and without `*`."""
        return bool(self.entries) and self.wildcard is None

    def match(self, name: str, plugin_id: str | None = None) -> Hit | None:
        """The earliest entry (in list order) that matches the tool, or None."""
        best = self.names.get(name)
        if self.wildcard is not None and (best is None or self.wildcard.order < best.order):
            best = self.wildcard
        for glob, hit in self.globs:
            if (best is None or hit.order < best.order) and glob.matches(name):
                best = hit
        if plugin_id is not None:
            for plugin_hit in (self.plugin_ids.get(plugin_id), self.all_plugins):
                if plugin_hit is not None and (best is None or plugin_hit.order < best.order):
                    best = plugin_hit
        return best

    def names_exactly(self, name: str, plugin_id: str | None) -> bool:
        """Whether the list names this tool, its plugin id or `group:plugins` (no globs)."""
        if name in self.names:
            return True
        return plugin_id is not None and (
            plugin_id in self.plugin_ids or self.all_plugins is not None
        )


def build_list(
    key: str,
    source: Source | None,
    entries: Iterable[Entry],
    groups: Mapping[str, tuple[str, ...]],
    covers: Mapping[str, tuple[str, ...]],
    base: EntryList | None = None,
) -> EntryList:
    """Expand static groups and covers, index literals, compile globs; first occurrence wins.

    With `base`, the result is `base`'s entries followed by `entries`, built by copying base's
    indexes rather than expanding its entries again (a profile shared by many agents)."""
    if base is not None:
        kept = list(base.entries)
        names = dict(base.names)
        plugin_ids = dict(base.plugin_ids)
        globs = list(base.globs)
        all_plugins, wildcard = base.all_plugins, base.wildcard
        seen = {e.text for e in kept}
    else:
        kept = []
        names = {}
        plugin_ids = {}
        globs = []
        all_plugins = wildcard = None
        seen = set()
    for entry in entries:
        if not entry.text or entry.text in seen:
            continue
        seen.add(entry.text)
        order = len(kept)
        kept.append(entry)
        text = entry.text
        if text == "*":
            wildcard = Hit(order, entry, None)
        elif text == PLUGINS_GROUP:
            all_plugins = Hit(order, entry, None)
        elif is_glob(text):
            globs.append((Glob.compile(text), Hit(order, entry, None)))
        elif text in groups:
            for member in groups[text]:
                names.setdefault(member, Hit(order, entry, text))
        else:
            for member in covers.get(text, (text,)):
                names.setdefault(member, Hit(order, entry, text if member != text else None))
            # A literal that is not a core tool may be a plugin id (`bundle-mcp`, `voice`).
            plugin_ids.setdefault(text, Hit(order, entry, text))
    return EntryList(
        key,
        source,
        tuple(kept),
        names,
        plugin_ids,
        all_plugins,
        wildcard,
        tuple(globs),
        tuple(e.text for e in kept),
    )
