"""Names, entries and the verdict of one policy (semantics sections 2 to 6)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from policyctl.catalog.model import Catalog


def normal(catalog: Catalog, text: str) -> str:
    """Section 2: trim, lowercase, then map a whole-string alias."""
    name = text.strip().lower()
    return catalog.aliases.get(name, name)


def glob_matches(pattern: str, name: str) -> bool:
    """Section 3: `*` is any run of characters, everything else literal, anchored both ends.
    Written as the textbook split-on-star scan, not a regular expression."""
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return pattern == name
    first, *middle, last = pieces
    if not name.startswith(first) or len(name) < len(first) + len(last):
        return False
    if not name.endswith(last):
        return False
    at = len(first)
    end = len(name) - len(last)
    for piece in middle:
        found = name.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


@dataclass(frozen=True)
class Named:
    """One tool as the rules see it: its normalised name and its plugin id (None for core)."""

    name: str
    plugin_id: str | None


def entry_matches(catalog: Catalog, entry: str, tool: Named) -> bool:
    """Does one normalised entry stand for this tool? Section 4's groups, section 3's globs,
    a plugin id (case-insensitive, `bundle-mcp` being the MCP tools' id), a catalog cover."""
    if entry == "group:plugins":
        return tool.plugin_id is not None
    if entry.startswith("group:"):
        members = catalog.groups.get(entry)
        return members is not None and tool.name in {normal(catalog, m) for m in members}
    if tool.plugin_id is not None and entry == tool.plugin_id.strip().lower():
        return True
    if entry in catalog.covers:
        return tool.name in {normal(catalog, m) for m in catalog.covers[entry]}
    if "*" in entry:
        return glob_matches(entry, tool.name)
    return entry == tool.name


def any_matches(catalog: Catalog, entries: Sequence[str], tool: Named) -> bool:
    return any(entry_matches(catalog, e, tool) for e in entries)


@dataclass(frozen=True)
class Policy:
    """`{allow?, deny}` after section 6's conversion; entries already normalised.

    `literal` marks the inheritance layer: names handed down by a parent are names, never
    entries (a tool called `*` must not widen anything, section 7.10)."""

    allow: tuple[str, ...] | None
    deny: tuple[str, ...]
    literal: bool = False
    label: str = ""  # OpenClaw's label of the layer (semantics 7's table)

    def restrictive(self) -> bool:
        """An allow list that restricts: present, non-empty, without `*` (section 7.8)."""
        if self.literal:
            return self.allow is not None
        return bool(self.allow) and "*" not in (self.allow or ())


def make_policy(
    catalog: Catalog, allow: Sequence[str] | None, deny: Sequence[str] | None
) -> Policy:
    return Policy(
        None if allow is None else tuple(n for n in (normal(catalog, e) for e in allow) if n),
        tuple(n for n in (normal(catalog, e) for e in deny or ()) if n),
    )


def verdict(catalog: Catalog, policy: Policy, tool: Named) -> str | None:
    """Section 5 for one tool: None when allowed, else the rule kind that removed it."""
    if policy.literal:
        if tool.name in policy.deny:
            return "deny"
        if policy.allow is not None and tool.name not in policy.allow:
            return "allow"
        return None
    if any_matches(catalog, policy.deny, tool):
        return "deny"
    # Catalog data of older releases: a deny of `write` also removed `apply_patch`.
    for source in catalog.deny_implies.get(tool.name, ()):
        if any_matches(catalog, policy.deny, Named(source, None)):
            return "deny"
    if not policy.allow:
        return None
    if any_matches(catalog, policy.allow, tool):
        return None
    for grant in catalog.grants.get(tool.name, ()):
        source = Named(grant.when_allowed, None)
        if not any_matches(catalog, policy.allow, source):
            continue
        if grant.unless_denied and any_matches(catalog, policy.deny, source):
            continue
        return None
    return "allow"
