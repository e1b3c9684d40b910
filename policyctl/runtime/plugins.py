"""What a host hands a plugin so it can register its tools, and nothing more.

A plugin given the `ToolRegistry` itself could register any tool, MCP tools included
(`policyctl.runtime.mcp` is importable by anyone), and `allow: [bundle-mcp]` would then
grant them. `PluginTools` is the narrow handle instead: the plugin id is the host's choice,
fixed when the handle is made, and every tool registered through it must carry exactly that
id. So a plugin's tools match the entries written for the plugin (`allow: [voice]`), never
those written for the MCP tools, a group or a pattern.
"""

from __future__ import annotations

from ..names import fold, plugin_id_syntax
from .registry import ToolRegistry
from .tools import RuntimeTool


class PluginTools:
    """Registers the tools of one plugin (`plugin_id`) on a registry."""

    __slots__ = ("_registry", "plugin_id")

    def __init__(self, registry: ToolRegistry, plugin_id: str) -> None:
        if not isinstance(plugin_id, str) or not plugin_id or plugin_id != fold(plugin_id):
            raise ValueError(f"plugin id {plugin_id!r}: must be non-empty, lowercase and trimmed")
        reserved = plugin_id_syntax(plugin_id)
        if reserved:
            raise ValueError(f"plugin id {plugin_id!r} {reserved}: give the plugin another id")
        self._registry = registry
        self.plugin_id = plugin_id

    def register(self, tool: RuntimeTool, *, replace: bool = False) -> None:
        """Register one of the plugin's tools (made with `@tool(plugin_id=...)` of this id)."""
        if type(tool) is not RuntimeTool or tool.plugin_id != self.plugin_id:
            raise ValueError(
                f"plugin {self.plugin_id}: tool {getattr(tool, 'name', tool)!r} must be a "
                f"RuntimeTool of plugin_id {self.plugin_id!r} "
                f"(it has {getattr(tool, 'plugin_id', None)!r})"
            )
        if replace:
            owner = self._registry.get(tool.name)
            if owner is not None and owner.plugin_id != self.plugin_id:
                raise ValueError(
                    f"plugin {self.plugin_id}: cannot replace {tool.name!r}, which is not its own"
                )
        self._registry.register(tool, replace=replace)

    def unregister(self, name: str) -> None:
        """Remove one of the plugin's own tools (another's is left alone)."""
        found = self._registry.get(name)
        if found is not None and found.plugin_id == self.plugin_id:
            self._registry.unregister(name)
