"""Entries and entry lists: normalised once, expanded once, matched without scanning.

An `EntryList` is one allow or deny list after normalisation and static group expansion.
Matching a tool against it is a few dictionary lookups plus the list's globs; the entry that
decided is returned with what it expanded from, so the audit trail names the exact text an
operator wrote and where.
"""

from __future__ import annotations

import weakref
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from ..diagnostics import Source
from ..names import Glob, GlobIndex, is_glob

#: above this many globs, a list matches through one combined `GlobIndex`
GLOB_INDEX_MIN = 16

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


class Signature:
    """What a list says (its normalised entry texts), hashed once: lists with equal
    signatures match the same tools, so 50,000 sender rules that all deny `exec` share one
    verdict, and looking one up never rehashes a long list."""

    __slots__ = ("__weakref__", "_hash", "texts")

    def __init__(self, texts: tuple[str, ...]) -> None:
        self.texts = texts
        self._hash = hash(texts)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Signature) and self._hash == other._hash and self.texts == other.texts
        )


EMPTY_SIGNATURE = Signature(())

#: one Signature per distinct list content while any list holds it: 100,000 sender rules
#: that deny `exec` hold one, and a verdict lookup then compares it by identity
_SIGNATURES: weakref.WeakValueDictionary[tuple[str, ...], Signature]
_SIGNATURES = weakref.WeakValueDictionary()


def signature_of(texts: tuple[str, ...]) -> Signature:
    """The shared signature of these texts (a race may make two equal ones: both are right)."""
    found = _SIGNATURES.get(texts)
    if found is None:
        found = _SIGNATURES.setdefault(texts, Signature(texts))
    return found


#: the index of a list that names nothing of that kind (one object for all of them)
NO_HITS: Mapping[str, Hit] = MappingProxyType({})


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
    signature: Signature = EMPTY_SIGNATURE
    glob_index: GlobIndex | None = None

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
        if self.glob_index is not None:
            order = self.glob_index.first(name)
            if order is not None and (best is None or order < best.order):
                best = Hit(order, self.entries[order], None)
        else:
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
    core: Container[str] = (),
) -> EntryList:
    """Expand static groups and covers, index literals, compile globs; first occurrence wins.

    `core` (the catalog's tool ids) are never indexed as plugin ids: an inventory refuses a
    plugin whose id is a core tool's name (PC383), so such an index entry could never match,
    and 100,000 sender rules that deny `exec` would each keep one.

    With `base`, the result is `base`'s entries followed by `entries`, built by copying base's
    indexes rather than expanding its entries again (a profile shared by many agents)."""
    if base is not None:
        entries = list(entries)
        base_texts = set(base.signature.texts)
        if not any(e.text and e.text not in base_texts for e in entries):
            # Nothing to add (an agent's own `profile: coding`): share the base's indexes,
            # so 10,000 agents on one profile do not hold 10,000 copies of it.
            return EntryList(
                key,
                source,
                base.entries,
                base.names,
                base.plugin_ids,
                base.all_plugins,
                base.wildcard,
                base.globs,
                base.signature,
                base.glob_index,
            )
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
            if text not in core:
                plugin_ids.setdefault(text, Hit(order, entry, text))
    return EntryList(
        key,
        source,
        tuple(kept),
        MappingProxyType(names) if names else NO_HITS,
        MappingProxyType(plugin_ids) if plugin_ids else NO_HITS,
        all_plugins,
        wildcard,
        tuple(globs),
        signature_of(tuple(e.text for e in kept)),
        GlobIndex((hit.order, glob) for glob, hit in globs)
        if len(globs) > GLOB_INDEX_MIN
        else None,
    )


#: marks a literal list's signature, so it never shares a verdict with an entry list that
#: happens to have the same texts (the name `*` is not the entry `*`)
LITERAL = "\x00literal"


def literal_list(
    key: str, source: str, names: Iterable[str], origin: Origin = "inherited"
) -> EntryList:
    """A list of tool names matched as names only: no glob, no group, no plugin id.

    Names a parent run hands down or a cron job stores (semantics 7.10) are read back with
    this, never with `build_list`: a tool called `*` or `group:plugins` stays one name."""
    kept: list[Entry] = []
    index: dict[str, Hit] = {}
    for name in names:
        if name and name not in index:
            entry = Entry(name, name, source, None, origin)
            index[name] = Hit(len(kept), entry, None)
            kept.append(entry)
    return EntryList(
        key,
        None,
        tuple(kept),
        MappingProxyType(index),
        signature=Signature((LITERAL, *(e.text for e in kept))),
    )
