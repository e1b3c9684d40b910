"""Inventory: the tools that exist for one run before any policy is applied."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .catalog import Catalog
from .diagnostics import Diagnostic
from .names import (
    ascii_problem,
    entry_syntax,
    fold,
    mcp_tool_name,
    normalize,
    plugin_id_syntax,
)

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

    `fingerprint` is a SHA-256 digest of the content (tools, and the diagnostics building it
    produced), computed once per object: the resolver keys every per-inventory cache by it,
    so a registry rebuilt with the same tools finds the work already done, and comparing two
    inventories never walks their tools.
    """

    tools: tuple[Tool, ...]
    conflicts: tuple[Diagnostic, ...] = field(default=(), compare=False)
    names: frozenset[str] = field(default=frozenset(), compare=False)
    plugin_ids: frozenset[str] = field(default=frozenset(), compare=False)
    mcp_prefixes: frozenset[str] = field(default=frozenset(), compare=False)
    _fingerprint: bytes = field(default=b"", compare=False, repr=False)

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    @property
    def fingerprint(self) -> bytes:
        found = self._fingerprint
        if not found:
            digest = hashlib.sha256()
            for t in self.tools:
                digest.update(f"{t.name}\x1f{t.plugin_id or ''}\x1f{int(t.optional)}\x1e".encode())
            for d in self.conflicts:
                digest.update(f"\x1d{d.code}\x1f{d.message}".encode())
            found = digest.digest()
            object.__setattr__(self, "_fingerprint", found)
        return found

    @staticmethod
    def build(tools: Iterable[Tool], catalog: Catalog) -> Inventory:
        """Normalise names; a plugin tool that takes a core tool's name is dropped (PC405)."""
        kept: dict[str, Tool] = {}
        conflicts: list[Diagnostic] = []
        given = list(tools)
        core_names = catalog.tool_ids | frozenset(catalog.aliases)
        # only ids that may stand (a plugin named like a core tool is refused below)
        plugin_ids = {fold(t.plugin_id) for t in given if t.plugin_id} - core_names
        for tool in given:
            name = normalize(tool.name, catalog.aliases)
            if not name:
                continue
            bad = ascii_problem(name)
            if bad:
                # A look-alike name ("еxec" with a Cyrillic е) would dodge every rule written
                # for the real one: such a tool never enters a run.
                conflicts.append(Diagnostic.make("PC301", f'tool "{tool.name}" dropped: {bad}'))
                continue
            own = fold(tool.plugin_id) if tool.plugin_id else None
            syntax = entry_syntax(name, plugin_ids - {own} if own else plugin_ids)
            if syntax:
                # A tool named `*` or `group:plugins` would match more than itself wherever
                # a list of names is read back as entries (semantics 7.10).
                conflicts.append(
                    Diagnostic.make("PC381", f'tool "{tool.name}" dropped: its name {syntax}')
                )
                continue
            plugin = fold(tool.plugin_id) if tool.plugin_id else None
            if plugin is not None and plugin in core_names:
                # `allow: [read]` would grant every tool of a plugin whose id is `read`.
                conflicts.append(
                    Diagnostic.make(
                        "PC383",
                        f'tool "{name}" of plugin {plugin} dropped: the plugin id is the name '
                        "of a core tool",
                    )
                )
                continue
            # `bundle-mcp` is how the host marks its MCP tools (the runtime's MCP client and
            # test doubles use it), so it stands here; a policy file's declared plugins may not
            # claim it (PC385). A `group:...` or `*` id is never an MCP marker: dropped.
            reserved = (
                plugin_id_syntax(plugin) if plugin is not None and plugin != MCP_PLUGIN_ID else None
            )
            if reserved:
                conflicts.append(
                    Diagnostic.make(
                        "PC386",
                        f'tool "{name}" of plugin {plugin} dropped: the plugin id {reserved}',
                    )
                )
                continue
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
        inventory = Inventory(ordered, tuple(conflicts), frozenset(kept), plugins, prefixes)
        inventory.fingerprint  # noqa: B018 - computed once, here, off the resolve path
        return inventory

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
