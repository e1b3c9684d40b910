"""MCP tools as runtime tools: a server's tool listing -> RuntimeTool, its results -> text.

A tool an MCP server lists (`name`, `description`, `inputSchema`, `annotations`) becomes a
`RuntimeTool` named `<server>__<tool>` (semantics 10; lowercased, as the registry requires) of
plugin `bundle-mcp`: the marker every `bundle-mcp` entry matches, which only this module gives
(the tool registry refuses any other tool carrying it: PC313). Its `inputSchema` is checked
like any tool's: a listing whose schema the runtime cannot enforce is refused (`SchemaError`),
never registered half-validated.
`readOnlyHint: true` makes it read-only, so consecutive calls may run together. A result's text
parts are joined into what the model reads (other parts are named, not inlined); `isError`
raises `MCPToolError`, which the model reads as a tool error. The gate caps the size of the
text like any result.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from ..catalog.inventory import MCP_PLUGIN_ID
from ..names import mcp_server_problem, mcp_tool_name
from .text import render_result
from .tools import RuntimeTool

MCPCall = Callable[[str, dict[str, Any]], Awaitable[Any]]

#: every tool `mcp_tool` made and that is still alive, by identity: the registry's proof that
#: a tool marked `bundle-mcp` came from here (an id is dropped when its tool dies)
_MADE: weakref.WeakValueDictionary[int, RuntimeTool] = weakref.WeakValueDictionary()


class MCPToolError(RuntimeError):
    """The MCP server answered the call with `isError: true`."""


def mcp_result_text(result: Any) -> str:
    """An MCP `tools/call` result -> the text the model reads."""
    if not isinstance(result, Mapping):
        return result if isinstance(result, str) else render_result(result)
    texts: list[str] = []
    content = result.get("content")
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            texts.append(f"[{part.get('type', 'unknown')} content not shown]")
    if not texts and "structuredContent" in result:
        texts.append(render_result(result["structuredContent"]))
    text = "\n".join(texts)
    if result.get("isError") is True:
        raise MCPToolError(text or "the MCP tool reported an error")
    return text


def mcp_tool(
    server: str, listing: Mapping[str, Any], call: MCPCall, *, taken: Iterable[str] = ()
) -> RuntimeTool:
    """One listed tool; `call(name_on_the_server, arguments)` performs `tools/call`.

    A server whose name makes `<server>__` ambiguous (PC322) is refused: another server's
    `<server>__*` rule would match its tools."""
    ambiguous = mcp_server_problem(server)
    if ambiguous:
        raise ValueError(f"MCP server {server!r} {ambiguous} (PC322): rename the server")
    remote = listing.get("name")
    if not isinstance(remote, str) or not remote.strip():
        raise ValueError(f"MCP server {server!r}: a listed tool has no name")
    schema = listing.get("inputSchema", {"type": "object"})
    annotations = listing.get("annotations")
    read_only = isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True
    description = listing.get("description")

    async def execute(**arguments: Any) -> str:
        return mcp_result_text(await call(remote, arguments))

    made = RuntimeTool(
        mcp_tool_name(server, remote, taken).lower(),
        description if isinstance(description, str) else "",
        schema,
        execute,
        read_only=read_only,
        meta={"mcp_server": server, "mcp_tool": remote},
    )
    return _marked(made)


def as_mcp_tool(tool: RuntimeTool) -> RuntimeTool:
    """A copy of `tool` marked as an MCP tool, for a host whose own MCP client makes the
    tools (`mcp_tools` is for a server's listing). Only for tools the host bridges from an
    MCP server: `allow: [bundle-mcp]` grants every one. Hand plugins a `PluginTools`
    (`policyctl.runtime.plugins`), never this function or the registry: a tool a plugin
    registers through it never carries the marker."""
    if tool.plugin_id is not None:
        raise ValueError(
            f"tool {tool.name!r} belongs to plugin {tool.plugin_id!r}: not an MCP tool"
        )
    return _marked(replace(tool))


def _marked(made: RuntimeTool) -> RuntimeTool:
    # the constructor refuses the marker to everyone: it is set here, on a new object, and
    # the object recorded
    object.__setattr__(made, "plugin_id", MCP_PLUGIN_ID)
    _MADE[id(made)] = made
    return made


def is_mcp_tool(tool: RuntimeTool) -> bool:
    """Whether this very object was made by `mcp_tool`. A copy (`dataclasses.replace`, which
    the constructor refuses anyway), a subclass, or a plugin's tool with `plugin_id`
    overwritten is not: the registry refuses those (PC313)."""
    return _MADE.get(id(tool)) is tool


def mcp_tools(
    server: str, listings: Iterable[Mapping[str, Any]], call: MCPCall, *, taken: Iterable[str] = ()
) -> list[RuntimeTool]:
    """Every listed tool of one server, names made unique against `taken` and each other."""
    used = list(taken)
    out: list[RuntimeTool] = []
    for listing in listings:
        made = mcp_tool(server, listing, call, taken=used)
        used.append(made.name)
        out.append(made)
    return out
