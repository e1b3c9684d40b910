"""Inventory: the tools that exist for one run before any policy is applied."""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

from ..bounded import BoundedCache
from ..diagnostics import Diagnostic
from ..names import (
    ascii_problem,
    entry_syntax,
    fold,
    mcp_tool_name,
    normalize,
    plugin_id_syntax,
)
from .model import Catalog

MCP_PLUGIN_ID = "bundle-mcp"


class Tool:
    """A tool of the run. `plugin_id` is None for core tools. Immutable.

    Tools are interned: while one `Tool("read")` is alive, `Tool("read")` returns that same
    object. So equal content is one object, equality and hashing are by identity (no field is
    compared), and a list of tools is recognised by its items' identities in C
    (`Inventory.of`), whichever list or registry carries them: a registry rebuilt with tools
    of the same content hands over the same objects. The intern table holds tools weakly.
    """

    __slots__ = ("__weakref__", "name", "optional", "plugin_id")
    __match_args__ = ("name", "plugin_id", "optional")

    name: str
    plugin_id: str | None
    optional: bool

    def __new__(cls, name: str, plugin_id: str | None = None, optional: bool = False) -> Tool:
        if plugin_id is not None and marks_mcp(plugin_id):
            # checked before the intern table: it would hand back a real MCP tool otherwise
            raise ValueError(
                f"tool {name!r}: the plugin id {plugin_id!r} marks MCP tools, which only "
                "Tool.mcp(name) makes (a host bridging MCP servers); a plugin needs its own id"
            )
        return cls._intern(name, plugin_id, optional)

    @classmethod
    def mcp(cls, name: str, optional: bool = False) -> Tool:
        """A tool a host bridges from an MCP server: plugin `bundle-mcp`, so every
        `bundle-mcp` entry matches it. The only way to make one (`Tool(name, "bundle-mcp")`
        is refused), so a plugin's tools never ride on those entries."""
        return cls._intern(name, MCP_PLUGIN_ID, optional)

    @classmethod
    def _intern(cls, name: str, plugin_id: str | None, optional: bool) -> Tool:
        key = (name, plugin_id, optional)
        found = _INTERNED.get(key)
        if found is None:
            with _INTERN_LOCK:  # two threads making the same tool get one object
                found = _INTERNED.get(key)
                if found is None:
                    found = object.__new__(cls)
                    object.__setattr__(found, "name", name)
                    object.__setattr__(found, "plugin_id", plugin_id)
                    object.__setattr__(found, "optional", bool(optional))
                    _INTERNED[key] = found
        return found

    def __init_subclass__(cls, **kwargs: object) -> None:
        # a subclass would share the intern table and receive base-class objects
        raise TypeError("Tool is final: it is interned by content")

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # a copy or an unpickled tool is interned again: still the one object of its content
        if self.plugin_id == MCP_PLUGIN_ID:
            return (Tool.mcp, (self.name, self.optional))
        return (Tool, (self.name, self.plugin_id, self.optional))

    @property
    def is_mcp(self) -> bool:
        """Made by `Tool.mcp`: the one tool of its content in the intern table, under the MCP
        id. A tool whose `plugin_id` was overwritten afterwards (`object.__setattr__`) is
        interned under its old key, so it is not."""
        return (
            self.plugin_id == MCP_PLUGIN_ID
            and _INTERNED.get((self.name, MCP_PLUGIN_ID, self.optional)) is self
        )

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, plugin_id={self.plugin_id!r}, optional={self.optional!r})"


_INTERNED: weakref.WeakValueDictionary[tuple[str, str | None, bool], Tool]
_INTERNED = weakref.WeakValueDictionary()
_INTERN_LOCK = threading.Lock()


def marks_mcp(plugin_id: object) -> bool:
    """Whether a plugin id reads as the MCP marker once normalised (`" Bundle-MCP"` too)."""
    return isinstance(plugin_id, str) and fold(plugin_id) == MCP_PLUGIN_ID


def genuine_mcp(tool: object) -> bool:
    """Whether a tool (or a stand-in with a `plugin_id`) that carries the MCP marker was made
    as an MCP tool (`Tool.mcp`); always True for a tool without the marker."""
    if not marks_mcp(getattr(tool, "plugin_id", None)):
        return True
    return type(tool) is Tool and tool.is_mcp


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

    def __post_init__(self) -> None:
        # made directly rather than by `build`: a tool claiming the MCP marker must still be
        # a real MCP tool, or it would ride on every `bundle-mcp` entry
        forged = [t.name for t in self.tools if not genuine_mcp(t)]
        if forged:
            raise ValueError(
                f"tools {forged[:5]} carry the MCP plugin id but were not made by Tool.mcp "
                "(PC313): refused"
            )

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
    def of(tools: Iterable[Tool], catalog: Catalog) -> Inventory:
        """`build`, remembered: the same tools in the same order through the same catalog give
        the inventory built before, found by the tools' identities (tools are interned, so a
        new list of tools with equal content is the same key). What `resolve` does with a
        plain list of tools, and what the runtime registry does after every change."""
        given = tuple(tools)
        key = (id(catalog), given)
        try:
            found = _BUILT.get(key)
        except TypeError:  # not tools (unhashable stand-ins): built, never remembered
            return Inventory.build(given, catalog)
        # the entry holds its catalog, so no other catalog can have taken its id meanwhile
        if found is not None and found[0] is catalog:
            return found[1]
        inventory = Inventory.build(given, catalog)
        # only real tools are remembered: they are immutable and compare by identity, so a
        # hit means the very same tools (a stand-in object could change after being seen)
        if all(type(t) is Tool for t in given):
            _BUILT.put(key, (catalog, inventory))
        return inventory

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
            plugin = fold(tool.plugin_id) if tool.plugin_id else None
            if plugin == MCP_PLUGIN_ID and not genuine_mcp(tool):
                # a plugin's tool with the MCP marker written in would ride on every
                # `bundle-mcp` entry: only `Tool.mcp` (the host's MCP bridge) makes one
                conflicts.append(
                    Diagnostic.make(
                        "PC313",
                        f'tool "{name}" dropped: it carries the MCP plugin id '
                        f"{tool.plugin_id!r} but was not made as an MCP tool",
                    )
                )
                continue
            # the other plugins' ids: a tool named like one would stand for all its tools
            other = name in plugin_ids and name != plugin
            syntax = entry_syntax(name, (name,) if other else ())
            if syntax:
                # A tool named `*` or `group:plugins` would match more than itself wherever
                # a list of names is read back as entries (semantics 7.10).
                conflicts.append(
                    Diagnostic.make("PC381", f'tool "{tool.name}" dropped: its name {syntax}')
                )
                continue
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
            # `bundle-mcp` is how the host marks its MCP tools (`Tool.mcp`, checked above),
            # so it stands here; a policy file's declared plugins may not claim it (PC385).
            # A `group:...` or `*` id is never an MCP marker: dropped.
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
            optional = tool.optional if plugin else False
            normal = (
                type(tool) is Tool
                and tool.name == name
                and tool.plugin_id == plugin
                and tool.optional == optional
            )
            if normal:
                kept[name] = tool
            elif plugin == MCP_PLUGIN_ID:  # a real MCP tool (checked above), renamed
                kept[name] = Tool.mcp(name, optional)
            else:
                kept[name] = Tool(name, plugin, optional)
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


#: inventories built from plain lists, per catalog: a runtime rebuilds few distinct ones, and
#: each policy version's resolver (a hot reload makes a new one) finds them already built
_BUILT: BoundedCache[tuple[int, tuple[Tool, ...]], tuple[Catalog, Inventory]] = BoundedCache(8)


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
            out.append(Tool.mcp(full))
    return out
