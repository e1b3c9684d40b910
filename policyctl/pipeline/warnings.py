"""Unknown-entry warnings (semantics 9): entries of an applied list that match no tool of the
run, classified as shipped-but-unavailable core tools or plugin tools not enabled."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from ..catalog import Catalog
from ..diagnostics import Diagnostic
from ..entries import Entry, EntryList
from ..inventory import MCP_PLUGIN_ID, Inventory
from ..names import Glob, GlobIndex, is_glob
from .layers import LayerPlan

_CORE_UNAVAILABLE = (
    "These entries are shipped core tools but unavailable in the current "
    "runtime/provider/model/config."
)
_PLUGIN_HINT = "These entries won't match any tool unless the plugin is enabled."
_BOTH = (
    "Some entries are shipped core tools but unavailable in the current "
    "runtime/provider/model/config; other entries won't match any tool unless the plugin "
    "is enabled."
)


def _classify(
    entry: Entry, inv: Inventory, cat: Catalog, glob_verdicts: Mapping[str, str] | None = None
) -> str:
    """ "plugin", "core", "unavailable" (a catalog tool this run lacks) or "unknown".

    `glob_verdicts` holds the verdicts of an indexed list's globs, found by matching every
    tool once against the list's index (`_glob_verdicts`)."""
    text = entry.text
    if text in ("*", "group:plugins", MCP_PLUGIN_ID) or text in inv.plugin_ids:
        return "plugin" if text != "*" else "core"
    if any(text.startswith(prefix) for prefix in inv.mcp_prefixes):
        return "plugin"
    if is_glob(text):
        if glob_verdicts is not None:
            return glob_verdicts.get(text, "unknown")
        glob = Glob.compile(text)
        for tool in inv.tools:
            if glob.matches(tool.name):
                return "plugin" if tool.plugin_id else "core"
        return "unavailable" if any(glob.matches(t) for t in cat.tool_ids) else "unknown"
    members = cat.groups.get(text) or cat.covers.get(text) or (text,)
    for member in members:
        if member in inv.names:
            for tool in inv.tools:
                if tool.name == member:
                    return "plugin" if tool.plugin_id else "core"
    if any(m in cat.tool_ids for m in members) or text in cat.groups:
        return "unavailable"
    return "unknown"


def _glob_verdicts(
    index: GlobIndex, lst: EntryList, inv: Inventory, cat: Catalog
) -> dict[str, str]:
    """What `_classify` says of each glob of an indexed list, found the other way round: each
    tool of the run, then each tool of the catalog, asks the index which globs match it, so
    200,000 deny globs cost one lookup per tool instead of 200,000 scans of the inventory."""
    found: dict[str, str] = {}
    for tool in inv.tools:  # in inventory order: the first matching tool decides, as above
        verdict = "plugin" if tool.plugin_id else "core"
        for order in index.matching(tool.name):
            found.setdefault(lst.entries[order].text, verdict)
    for tool_id in cat.tool_ids:
        for order in index.matching(tool_id):
            found.setdefault(lst.entries[order].text, "unavailable")
    return found


#: (id(list), inventory fingerprint, id(catalog)) -> (list, catalog, unavailable, unknown).
#: The list and catalog are held by the entry, so their ids cannot be reused while it lives,
#: and a hit is checked by identity. A matrix resolves the same compiled lists in thousands
#: of contexts: each list is analysed once per inventory, not once per context (finding F13).
_Analysis = tuple[EntryList, Catalog, tuple[str, ...], tuple[str, ...]]
_ANALYSES: dict[tuple[int, bytes, int], _Analysis] = {}
_ANALYSES_MAX = 4096
_ANALYSES_LOCK = threading.Lock()


def _analysis(
    lst: EntryList, inv: Inventory, cat: Catalog
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The list's config entries that are unavailable core tools, and those that are unknown."""
    key = (id(lst), inv.fingerprint, id(cat))
    found = _ANALYSES.get(key)
    if found is not None and found[0] is lst and found[1] is cat:
        return found[2], found[3]
    unavailable: list[str] = []
    unknown: list[str] = []
    verdicts: dict[str, str] = {}
    globs = None if lst.glob_index is None else _glob_verdicts(lst.glob_index, lst, inv, cat)
    for entry in lst.entries:
        if entry.origin != "config":
            continue
        verdict = verdicts.get(entry.text)
        if verdict is None:
            verdict = verdicts[entry.text] = _classify(entry, inv, cat, globs)
        if verdict == "unavailable":
            unavailable.append(entry.text)
        elif verdict == "unknown":
            unknown.append(entry.text)
    result = (tuple(unavailable), tuple(unknown))
    with _ANALYSES_LOCK:
        if len(_ANALYSES) >= _ANALYSES_MAX:
            _ANALYSES.clear()
        _ANALYSES[key] = (lst, cat, *result)
    return result


def unknown_entry_warnings(
    applied: list[LayerPlan], inv: Inventory, cat: Catalog
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for plan in applied:
        lp = plan.policy
        assert lp is not None
        ask = lp.calls.plain_ask if lp.calls is not None else None
        for lst, kind, code in (
            (lp.allow, "allowlist", "PC401"),
            (lp.deny, "denylist", "PC402"),
            (ask, "asklist", "PC460"),  # a typo there is an approval that never happens
        ):
            # An allow list with "*" restricts nothing (alsoAllow alone becomes ["*", ...]);
            # its entries are analysed where they do widen, at the profile layer.
            if lst is None or lst.empty or (kind == "allowlist" and lst.wildcard is not None):
                continue
            unavailable, unknown = _analysis(lst, inv, cat)
            if not unavailable and not unknown:
                continue
            suffix = (
                _BOTH
                if unavailable and unknown
                else _CORE_UNAVAILABLE
                if unavailable
                else _PLUGIN_HINT
            )
            names = ", ".join([*unavailable, *unknown])
            flagged = {*unavailable, *unknown}
            first = next(e for e in lst.entries if e.text in flagged)
            out.append(
                Diagnostic.make(
                    code,
                    f"tools: {plan.label} {kind} contains unknown entries ({names}). {suffix}",
                    first.source,
                    first.key,
                )
            )
    return out
