"""Unknown-entry warnings (semantics 9): entries of an applied list that match no tool of the
run, classified as shipped-but-unavailable core tools or plugin tools not enabled."""

from __future__ import annotations

from ..catalog import Catalog
from ..diagnostics import Diagnostic
from ..entries import Entry
from ..inventory import MCP_PLUGIN_ID, Inventory
from ..names import Glob, is_glob
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


def _classify(entry: Entry, inv: Inventory, cat: Catalog) -> str:
    """ "plugin", "core", "unavailable" (a catalog tool this run lacks) or "unknown"."""
    text = entry.text
    if text in ("*", "group:plugins", MCP_PLUGIN_ID) or text in inv.plugin_ids:
        return "plugin" if text != "*" else "core"
    if any(text.startswith(prefix) for prefix in inv.mcp_prefixes):
        return "plugin"
    if is_glob(text):
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


def unknown_entry_warnings(
    applied: list[LayerPlan], inv: Inventory, cat: Catalog
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for plan in applied:
        lp = plan.policy
        assert lp is not None
        for lst, kind, code in ((lp.allow, "allowlist", "PC401"), (lp.deny, "denylist", "PC402")):
            # An allow list with "*" restricts nothing (alsoAllow alone becomes ["*", ...]);
            # its entries are analysed where they do widen, at the profile layer.
            if lst is None or lst.empty or (kind == "allowlist" and lst.wildcard is not None):
                continue
            unavailable, unknown = [], []
            for entry in lst.entries:
                if entry.origin != "config":
                    continue
                verdict = _classify(entry, inv, cat)
                if verdict == "unavailable":
                    unavailable.append(entry.text)
                elif verdict == "unknown":
                    unknown.append(entry.text)
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
            first = next(e for e in lst.entries if e.text in (unavailable + unknown))
            out.append(
                Diagnostic.make(
                    code,
                    f"tools: {plan.label} {kind} contains unknown entries ({names}). {suffix}",
                    first.source,
                    first.key,
                )
            )
    return out
