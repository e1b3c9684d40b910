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

from ..catalog.inventory import MCP_PLUGIN_ID, Inventory, Tool
from ..compile.compiled import CompiledPolicy
from ..names import GROUP_PREFIX
from .call_checks import layer_policies

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
        if lp.calls is not None and lp.calls.plain_ask is not None:
            out.update((lp.scope, "ask", e.text) for e in lp.calls.plain_ask.entries)
    return out


def _call_tools(policy: CompiledPolicy) -> set[str]:
    """Every tool a call rule (a specifier, a plain `ask`) of the policy names."""
    return {
        tool for lp in layer_policies(policy) if lp.calls is not None for tool in lp.calls.tools
    }


def _named(name: str) -> Tool:
    """A stand-in for a tool of exactly this name: an MCP tool when it reads as one."""
    return Tool.mcp(name) if "__" in name else Tool(name, "any-plugin")


def probe_tools(old: CompiledPolicy, new: CompiledPolicy) -> tuple[tuple[Tool, ...], bool]:
    """The stand-ins for the entries that differ between `old` and `new` and for the tools
    their call rules name, where no core or declared tool stands already; and whether there
    were more than MAX_PROBES of them.

    An entry written the same way in the same list of both files treats its tools as it
    treats any other plugin or MCP tool, which the two anonymous stand-ins already meet. A
    literal stands for a plugin id (a new tool of that plugin, even when the policy declares
    some of its tools) and, when it reads as an MCP tool's name, for that MCP tool."""
    core: set[str] = set()
    declared: set[str] = set()
    for policy in (old, new):
        cat = policy.catalog
        core |= set(cat.tool_ids) | set(cat.aliases) | set(cat.groups) | set(cat.covers)
        declared |= {t.name for t in policy.default_inventory.tools}
    before, after = _entries(old), _entries(new)
    # a deny or ask dropped, or an allow added, can widen: those are stood in for first
    widening = {t for _, kind, t in before - after if kind in ("deny", "ask")}
    widening |= {t for _, kind, t in after - before if kind == "allow"}
    changed = {text for _, _, text in before ^ after}
    # a tool that call rules name must be in the run for the call-rule diff to compare it
    called = sorted((_call_tools(old) | _call_tools(new)) - core - declared)

    def stand_in(text: str) -> Tool | None:
        if not text or text == "*" or text == MCP_PLUGIN_ID or text.startswith(GROUP_PREFIX):
            return None  # `*` and groups are met by the two anonymous tools and the catalog's
        if text in core or "(" in text:
            return None
        if "*" in text:
            return _named(text.replace("*", "any"))
        if "__" in text and text not in declared:
            return Tool.mcp(text)  # the MCP tool of that name
        if text not in declared and text not in called:
            return Tool(f"{text}-tool", text)  # a new tool of a plugin with that id
        return None

    first = [stand_in(t) for t in sorted(widening)]
    rest = [stand_in(t) for t in sorted(changed - widening)]
    out = [t for t in (*first, *map(_named, called), *rest) if t is not None]
    unique = list(dict.fromkeys(out))
    capped = len(unique) > MAX_PROBES
    return (ANY_PLUGIN_TOOL, ANY_MCP_TOOL, *unique[:MAX_PROBES]), capped


def with_probes(policy: CompiledPolicy, probes: tuple[Tool, ...]) -> Inventory:
    """The policy's default inventory and the stand-ins (a declared tool keeps its place)."""
    declared = list(policy.default_inventory.tools)
    names = {t.name for t in declared}
    return Inventory.of([*declared, *(p for p in probes if p.name not in names)], policy.catalog)
