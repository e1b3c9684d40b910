"""The catalog as a value: what tools exist, and the built-in catalogs' names.

A `Catalog` is frozen and its maps read-only: one catalog object serves every policy of a
process. It is built by `catalog.load` from catalog files (`catalog.file` is their format).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..names import fold

BUILTIN_CATALOGS = ("openclaw", "openclaw-2026.4", "nanobot", "claude-code", "gemini-cli", "codex")
DEFAULT_CATALOG = "openclaw"
FULL_PROFILE = "full"


def data_dir(kind: str) -> Path:
    """`profiles/` or `schemas/`: inside an installed wheel, else beside the package."""
    package = Path(__file__).parent.parent
    packaged = package / "_data" / kind
    return packaged if packaged.is_dir() else package.parent / kind


# -- the compiled catalog --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CatalogTool:
    id: str
    section: str
    profiles: tuple[str, ...]
    groups: tuple[str, ...]
    section_group: bool
    read_only: bool
    exclusive: bool
    providers: frozenset[str] | None
    description: str | None
    argument_kind: str | None = None
    argument_key: str | None = None
    cwd_key: str | None = None


@dataclass(frozen=True, slots=True)
class Grant:
    tool: str
    when_allowed: str
    unless_denied: bool


@dataclass(frozen=True, slots=True)
class Relation:
    """Calls of `tool` are also calls of `acts_as` (catalog `[[relations]]`): the paths
    `paths` names ("argument": the one in argument `key`; "patch": each file the patch
    touches, for the patch `operations` listed, None for all) are decided by `acts_as`'s call
    rules too."""

    tool: str
    acts_as: str
    paths: str
    key: str | None = None
    operations: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Catalog:
    name: str
    description: str
    provenance: str
    tools: tuple[CatalogTool, ...]
    aliases: Mapping[str, str]
    covers: Mapping[str, tuple[str, ...]]
    grants: Mapping[str, tuple[Grant, ...]]
    deny_implies: Mapping[str, tuple[str, ...]]
    owner_only: frozenset[str]
    image_tool: str | None
    memory_flush_tools: tuple[str, ...]
    provider_aliases: Mapping[str, str]
    sandbox_allow: tuple[str, ...]
    sandbox_deny: tuple[str, ...]
    subagent_deny_always: tuple[str, ...]
    subagent_deny_leaf: tuple[str, ...]
    #: derived: `group:<name>` -> members in catalog order
    groups: Mapping[str, tuple[str, ...]]
    #: derived: profile name -> entries (`full` is `("*",)`)
    profiles: Mapping[str, tuple[str, ...]]
    tool_ids: frozenset[str]
    by_id: Mapping[str, CatalogTool]
    #: the catalog files this was derived from (base first), as data `CatalogFile` accepts
    #: (see `_derive`)
    files: tuple[Mapping[str, Any], ...] = ()
    call_read_tool: str | None = None
    call_write_tool: str | None = None
    #: tool -> the relations whose calls it makes (`Relation.tool`)
    relations: Mapping[str, tuple[Relation, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # one catalog object serves every policy of the process (built-in catalogs are made
        # once): its maps are read-only copies, so no holder of one policy can change what
        # later loads compile to
        for name in _MAPS:
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        object.__setattr__(self, "files", tuple(_frozen(f) for f in self.files))

    def canonical_provider(self, provider: str) -> str:
        key = fold(provider)
        return self.provider_aliases.get(key, key)

    @property
    def definition(self) -> tuple[dict[str, Any], ...]:
        """The catalog files as data without their defaults, base first: bundles carry it
        (`catalog_from_definition` rebuilds the catalog from it)."""
        from .file import CatalogFile

        return tuple(
            CatalogFile.model_validate(_thawed(f)).model_dump(mode="json", exclude_defaults=True)
            for f in self.files
        )


_MAPS = (
    "aliases",
    "covers",
    "grants",
    "deny_implies",
    "provider_aliases",
    "groups",
    "profiles",
    "by_id",
    "relations",
)


def _frozen(value: Any) -> Any:
    """JSON-shaped data made read-only: mappings as proxies, lists as tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _thawed(value: Any) -> Any:
    """`_frozen` undone: the dicts and lists the file model (strict) validates."""
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value
