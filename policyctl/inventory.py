"""Inventory: the tools that exist for one run before any policy is applied."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .catalog import Catalog
from .diagnostics import Diagnostic
from .names import ascii_problem, mcp_tool_name, normalize

MCP_PLUGIN_ID = "bundle-mcp"


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool of the run. `plugin_id` is None for core tools."""

    name: str
    plugin_id: str | None = None
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Inventory:
    """Tools in a stable order, with the plugin ids and MCP prefixes they imply.

    Hashable by content, so per-inventory work can be memoised across runs that share it.
    """

    tools: tuple[Tool, ...]
    conflicts: tuple[Diagnostic, ...] = field(default=(), compare=False)
    names: frozenset[str] = field(default=frozenset(), compare=False)
    plugin_ids: frozenset[str] = field(default=frozenset(), compare=False)
    mcp_prefixes: frozenset[str] = field(default=frozenset(), compare=False)
    _hash: int = field(default=0, compare=False, repr=False)

    def __hash__(self) -> int:
        # an inventory is a cache key on every resolve: hash its (long) tool tuple once
        if not self._hash:
            object.__setattr__(self, "_hash", hash(self.tools) or 1)
        return self._hash

    @staticmethod
    def build(tools: Iterable[Tool], catalog: Catalog) -> Inventory:
        """Normalise names; a plugin tool that takes a core tool's name is dropped (PC405)."""
        kept: dict[str, Tool] = {}
        conflicts: list[Diagnostic] = []
        for tool in tools:
            name = normalize(tool.name, catalog.aliases)
            if not name:
                continue
            bad = ascii_problem(name)
            if bad:
                # A look-alike name ("еxec" with a Cyrillic е) would dodge every rule written
                # for the real one: such a tool never enters a run.
                conflicts.append(Diagnostic.make("PC301", f'tool "{tool.name}" dropped: {bad}'))
                continue
            plugin = tool.plugin_id.strip().lower() if tool.plugin_id else None
            if name in kept:
                first = kept[name]
                if plugin is not None or first.plugin_id is None:
                    who = f"plugin {plugin}" if plugin else "a tool"
                    owner = "is a core tool" if first.plugin_id is None else "another plugin has"
                    conflicts.append(
                        Diagnostic.make(
                            "PC405",
                            f'{who} declares "{name}", which {owner}; the second one is dropped',
                        )
                    )
                    continue
                # a core tool arriving after a plugin tool of the same name wins the name
                conflicts.append(
                    Diagnostic.make(
                        "PC405",
                        f'plugin {first.plugin_id} declares "{name}", which is a core tool; '
                        "the plugin tool is dropped",
                    )
                )
            kept[name] = Tool(name, plugin, tool.optional if plugin else False)
        ordered = tuple(kept.values())
        plugins = frozenset(t.plugin_id for t in ordered if t.plugin_id)
        prefixes = frozenset(
            t.name.split("__", 1)[0] + "__"
            for t in ordered
            if t.plugin_id == MCP_PLUGIN_ID and "__" in t.name
        )
        return Inventory(ordered, tuple(conflicts), frozenset(kept), plugins, prefixes)

    def __len__(self) -> int:
        return len(self.tools)


def core_tools(catalog: Catalog) -> list[Tool]:
    return [Tool(t.id) for t in catalog.tools]


def mcp_tools(servers: Mapping[str, Iterable[str]]) -> list[Tool]:
    """MCP tools named as semantics section 10 says, in declaration order."""
    taken: list[str] = []
    out: list[Tool] = []
    for server, names in servers.items():
        for name in names:
            full = mcp_tool_name(server, name, taken)
            taken.append(full)
            out.append(Tool(full, MCP_PLUGIN_ID))
    return out
