"""Compile: a validated document + its catalog -> an immutable `CompiledPolicy`.

    layers       the `Layer` enum, the ordered table `LAYERS`, `LayerPolicy` and `LayerPlan`:
                 the vocabulary compile writes and resolve reads
    entries      an allow/deny list -> normalised, expanded `EntryList` (`match` -> `Hit`)
    closedgroups `group:x` naming no group is an error (PC320)
    calls        `tool(specifier)` entries, `ask`, `callDefault` -> per-tool call rules
    compiled     `CompiledPolicy` and its parts: frozen, read-only, no cache
    assemble     the layers that combine several scopes, assembled per agent and provider key
    scopes       `compile_document`: every scope indexed by what selects it
    bundle       a compiled policy as one hashed (optionally signed) JSON file;
    bundleread   reading one back, capped and located

The names below are handed on lazily: importing the compiled data does not import the
compiler (nor pydantic).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

_EXPORTS = {
    "AgentPolicy": "compiled",
    "ChannelPolicy": "compiled",
    "CompiledPolicy": "compiled",
    "GroupPolicy": "compiled",
    "ProviderScope": "compiled",
    "SandboxLists": "compiled",
    "SenderTable": "compiled",
    "ToolsScope": "compiled",
    "LayerPolicy": "layers",
    "compile_document": "scopes",
    "relative_catalog_dir": "scopes",
    "load_bundle": "bundle",
}

__all__ = [
    "AgentPolicy",
    "ChannelPolicy",
    "CompiledPolicy",
    "GroupPolicy",
    "LayerPolicy",
    "ProviderScope",
    "SandboxLists",
    "SenderTable",
    "ToolsScope",
    "compile_document",
    "load_bundle",
    "relative_catalog_dir",
]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from .bundle import load_bundle
    from .compiled import (
        AgentPolicy,
        ChannelPolicy,
        CompiledPolicy,
        GroupPolicy,
        ProviderScope,
        SandboxLists,
        SenderTable,
        ToolsScope,
    )
    from .layers import LayerPolicy
    from .scopes import compile_document, relative_catalog_dir
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS, globals())
