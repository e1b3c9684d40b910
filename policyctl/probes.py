"""Stand-ins for the tools a runtime connects that a policy file does not declare.

`diff` compares two policies over contexts and an inventory. Plugin and MCP tools are mostly
connected at run time, so a change that only concerns them (`deny: [bundle-mcp,
group:plugins]` dropped, `github__*` allowed) would compare as "no change" over the declared
inventory alone. Both policies are therefore also resolved with one stand-in per kind of tool
their entries can name: any plugin tool, any MCP tool, a tool of each MCP server glob and of
each other glob, and a tool of each plugin id a literal entry may be. A stand-in is named for
what it stands for (`github__any`, `shelly-tool`), so a gain reads as "every tool of ...".
"""

from __future__ import annotations

from collections.abc import Iterable

from .callchecks import layer_policies
from .compile import CompiledPolicy
from .inventory import MCP_PLUGIN_ID, Inventory, Tool
from .names import GROUP_PREFIX

#: a tool of a plugin no entry names, and an MCP tool of a server no entry names
ANY_PLUGIN_TOOL = Tool("any-plugin-tool", "any-plugin")
ANY_MCP_TOOL = Tool("any-server__any-tool", MCP_PLUGIN_ID)


def _entry_texts(policy: CompiledPolicy) -> set[str]:
    texts: set[str] = set()
    for lp in layer_policies(policy, calls_only=False):
        for entries in (lp.allow, lp.deny):
            if entries is not None:
                texts.update(e.text for e in entries.entries)
    return texts


def probe_tools(policies: Iterable[CompiledPolicy]) -> tuple[Tool, ...]:
    """The stand-ins for the entries of `policies` that name no core or declared tool."""
    policies = list(policies)
    known: set[str] = set()
    texts: set[str] = set()
    for policy in policies:
        cat = policy.catalog
        known |= set(cat.tool_ids) | set(cat.aliases) | set(cat.groups) | set(cat.covers)
        known |= {t.name for t in policy.default_inventory.tools}
        known |= {t.plugin_id for t in policy.default_inventory.tools if t.plugin_id}
        texts |= _entry_texts(policy)
    out = [ANY_PLUGIN_TOOL, ANY_MCP_TOOL]
    for text in sorted(texts - known):
        if not text or text == "*" or "(" in text or text.startswith(GROUP_PREFIX):
            continue  # `*` and groups are met by the two anonymous tools and the catalog's
        if text == MCP_PLUGIN_ID:
            continue
        if "*" in text:
            name = text.replace("*", "any")
            out.append(Tool(name, MCP_PLUGIN_ID if "__" in name else "any-plugin"))
        else:
            out.append(Tool(f"{text}-tool", text))  # every tool of a plugin with that id
    return tuple(dict.fromkeys(out))


def with_probes(policy: CompiledPolicy, probes: tuple[Tool, ...]) -> Inventory:
    """The policy's default inventory and the stand-ins (a declared tool keeps its place)."""
    declared = list(policy.default_inventory.tools)
    names = {t.name for t in declared}
    return Inventory.of([*declared, *(p for p in probes if p.name not in names)], policy.catalog)
