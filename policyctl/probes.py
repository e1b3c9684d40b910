"""Stand-ins for the tools a runtime connects that a policy file does not declare.

`diff` compares two policies over contexts and an inventory. Plugin and MCP tools are mostly
connected at run time, so a change that only concerns them (`deny: [bundle-mcp,
group:plugins]` dropped, `github__*` allowed) would compare as "no change" over the declared
inventory alone. Both policies are therefore also resolved with stand-ins: any plugin tool, any
MCP tool, and for each entry that differs between the two files and names no core or declared
tool, a tool of its MCP server glob or other glob, or of the plugin id a literal may be. A
stand-in is named for what it stands for (`github__any`, `shelly-tool`).
"""

from __future__ import annotations

from .callchecks import layer_policies
from .compile import CompiledPolicy
from .inventory import MCP_PLUGIN_ID, Inventory, Tool
from .names import GROUP_PREFIX

#: a tool of a plugin no entry names, and an MCP tool of a server no entry names
ANY_PLUGIN_TOOL = Tool("any-plugin-tool", "any-plugin")
ANY_MCP_TOOL = Tool.mcp("any-server__any-tool")


#: stand-ins beyond the two anonymous ones: more (a change touching thousands of plugin ids)
#: and the comparison counts as sampled, which `--fail-on-widen` does not accept as a pass
MAX_PROBES = 256


def _entries(policy: CompiledPolicy) -> set[tuple[str, str, str]]:
    """(scope, list, text) of every entry a layer of the policy applies."""
    out: set[tuple[str, str, str]] = set()
    for lp in layer_policies(policy, calls_only=False):
        for kind, entries in (("allow", lp.allow), ("deny", lp.deny)):
            if entries is not None:
                out.update((lp.scope, kind, e.text) for e in entries.entries)
    return out


def probe_tools(old: CompiledPolicy, new: CompiledPolicy) -> tuple[tuple[Tool, ...], bool]:
    """The stand-ins for the entries that differ between `old` and `new` and name no core
    or declared tool, and whether there were more than MAX_PROBES of them.

    An entry written the same way in the same list of both files treats its tools as it
    treats any other plugin or MCP tool, which the two anonymous stand-ins already meet."""
    known: set[str] = set()
    for policy in (old, new):
        cat = policy.catalog
        known |= set(cat.tool_ids) | set(cat.aliases) | set(cat.groups) | set(cat.covers)
        known |= {t.name for t in policy.default_inventory.tools}
        known |= {t.plugin_id for t in policy.default_inventory.tools if t.plugin_id}
    before, after = _entries(old), _entries(new)
    # a deny dropped or an allow added can widen: those are stood in for first
    widening = {t for _, kind, t in before - after if kind == "deny"}
    widening |= {t for _, kind, t in after - before if kind == "allow"}
    changed = {text for _, _, text in before ^ after}
    ordered = [*sorted(widening - known), *sorted(changed - widening - known)]
    out: list[Tool] = []
    for text in ordered:
        if not text or text == "*" or "(" in text or text.startswith(GROUP_PREFIX):
            continue  # `*` and groups are met by the two anonymous tools and the catalog's
        if text == MCP_PLUGIN_ID:
            continue
        if "*" in text:
            name = text.replace("*", "any")
            out.append(Tool.mcp(name) if "__" in name else Tool(name, "any-plugin"))
        else:
            out.append(Tool(f"{text}-tool", text))  # every tool of a plugin with that id
    unique = list(dict.fromkeys(out))
    capped = len(unique) > MAX_PROBES
    return (ANY_PLUGIN_TOOL, ANY_MCP_TOOL, *unique[:MAX_PROBES]), capped


def with_probes(policy: CompiledPolicy, probes: tuple[Tool, ...]) -> Inventory:
    """The policy's default inventory and the stand-ins (a declared tool keeps its place)."""
    declared = list(policy.default_inventory.tools)
    names = {t.name for t in declared}
    return Inventory.of([*declared, *(p for p in probes if p.name not in names)], policy.catalog)
