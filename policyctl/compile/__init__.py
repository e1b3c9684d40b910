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
}

__all__ = list(_EXPORTS)

if TYPE_CHECKING:
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

__getattr__ = lazy_exports(__name__, _EXPORTS, globals())
