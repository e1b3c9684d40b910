"""Catalogs: the data that describes core tools, and everything derived from it.

A catalog file lists tools (id, section, profiles, extra groups, flags) plus aliases, grants,
owner-only tools, provider aliases, sandbox defaults and subagent deny lists. Section groups,
`group:openclaw`-style groups and the built-in profiles are derived here, never typed twice.
An operator catalog may `extends` a built-in one to add tools and profiles.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from .diagnostics import Diagnostic, PolicyError, Source
from .files import confinement_problem, extends_error
from .loader import Reader, decode, detect_format, parse_text, read_text
from .located import flatten
from .model import StrictModel as _Strict
from .names import ascii_problem, fold
from .settings import Limits, default_limits

BUILTIN_CATALOGS = ("openclaw", "openclaw-2026.4", "nanobot")
DEFAULT_CATALOG = "openclaw"
FULL_PROFILE = "full"


def data_dir(kind: str) -> Path:
    """`profiles/` or `schemas/`: inside an installed wheel, else beside the package."""
    packaged = Path(__file__).parent / "_data" / kind
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / kind


# -- the file format -------------------------------------------------------------------------


class ToolRow(_Strict):
    id: str
    section: str
    profiles: list[str] = []
    groups: list[str] = []
    section_group: bool = True
    owner_only: bool = False
    read_only: bool = False
    exclusive: bool = False
    providers: list[str] | None = None
    description: str | None = None
    #: what `tool(specifier)` call rules read (see policyctl/callrules): the argument kind
    #: and the argument that holds it; `cwd_key` is the argument naming the working directory
    argument_kind: Literal["shell", "path", "patch", "url"] | None = None
    argument_key: str | None = None
    cwd_key: str | None = None

    @model_validator(mode="after")
    def _kind_needs_key(self) -> ToolRow:
        if (self.argument_kind is None) != (self.argument_key is None):
            raise ValueError("argument_kind and argument_key go together: give both or neither")
        if self.cwd_key is not None and self.argument_kind is None:
            raise ValueError("cwd_key needs argument_kind")
        return self


class GrantRow(_Strict):
    tool: str
    when_allowed: str
    unless_denied: bool = False


class ProfileRow(_Strict):
    tools: list[str] | None = None
    also: list[str] = []


class SandboxRow(_Strict):
    allow: list[str] = []
    deny: list[str] = []


class SubagentRow(_Strict):
    deny_always: list[str] = []
    deny_leaf: list[str] = []


class CatalogFile(_Strict):
    name: str
    description: str | None = None
    provenance: str | None = None
    extends: str | None = None
    tools: list[ToolRow] = []
    aliases: dict[str, str] = {}
    covers: dict[str, list[str]] = {}
    grants: list[GrantRow] = []
    deny_implies: dict[str, list[str]] = {}
    owner_only: list[str] = []
    image_tool: str | None = None
    memory_flush_tools: list[str] = Field(default_factory=lambda: ["read", "write"])
    profiles: dict[str, ProfileRow] = {}
    provider_aliases: dict[str, str] = {}
    sandbox: SandboxRow | None = None
    subagents: SubagentRow | None = None
    #: the tools a shell line's redirections are decided as (`echo x > f` writes f)
    call_read_tool: str | None = None
    call_write_tool: str | None = None


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
    #: the catalog files this was derived from (base first), as data: bundles carry them
    definition: tuple[Mapping[str, Any], ...] = ()
    call_read_tool: str | None = None
    call_write_tool: str | None = None

    def canonical_provider(self, provider: str) -> str:
        key = fold(provider)
        return self.provider_aliases.get(key, key)


def catalog_from_definition(definition: list[Mapping[str, Any]]) -> Catalog:
    """Rebuild a catalog from the data a bundle carries (no files are read)."""
    return _derive([CatalogFile.model_validate(d) for d in definition])


def _derive(files: list[CatalogFile]) -> Catalog:
    """Fold a catalog and the catalogs it extends (base first) into one `Catalog`."""
    tools: dict[str, ToolRow] = {}
    aliases: dict[str, str] = {}
    covers: dict[str, tuple[str, ...]] = {}
    grants: list[GrantRow] = []
    deny_implies: dict[str, tuple[str, ...]] = {}
    owner_only: set[str] = set()
    provider_aliases: dict[str, str] = {}
    profile_rows: dict[str, ProfileRow] = {}
    image_tool: str | None = None
    memory: list[str] = ["read", "write"]
    sandbox = SandboxRow()
    subagents = SubagentRow()
    call_read: str | None = None
    call_write: str | None = None
    for f in files:
        for row in f.tools:
            tools[fold(row.id)] = row
        aliases.update({fold(k): fold(v) for k, v in f.aliases.items()})
        covers.update({k.lower(): tuple(x.lower() for x in v) for k, v in f.covers.items()})
        grants.extend(f.grants)
        deny_implies.update(
            {k.lower(): tuple(x.lower() for x in v) for k, v in f.deny_implies.items()}
        )
        owner_only.update(fold(x) for x in f.owner_only)
        provider_aliases.update({k.lower(): v.lower() for k, v in f.provider_aliases.items()})
        profile_rows.update(f.profiles)
        image_tool = f.image_tool or image_tool
        memory = list(f.memory_flush_tools)
        sandbox = f.sandbox or sandbox
        subagents = f.subagents or subagents
        call_read = f.call_read_tool or call_read
        call_write = f.call_write_tool or call_write
    last = files[-1]

    def norm(name: str) -> str:
        text = fold(name)
        return aliases.get(text, text)

    rows = tuple(
        CatalogTool(
            tid,
            r.section.lower(),
            tuple(p.lower() for p in r.profiles),
            tuple(g.lower() for g in r.groups),
            r.section_group,
            r.read_only,
            r.exclusive,
            frozenset(p.lower() for p in r.providers) if r.providers else None,
            r.description,
            r.argument_kind,
            r.argument_key,
            r.cwd_key,
        )
        for tid, r in tools.items()
    )
    owner_only.update(t for t, r in tools.items() if r.owner_only)
    groups: dict[str, list[str]] = {}
    for tool in rows:
        if tool.section_group:
            groups.setdefault(f"group:{tool.section}", []).append(tool.id)
        for g in tool.groups:
            groups.setdefault(f"group:{g}", []).append(tool.id)
    profiles: dict[str, list[str]] = {}
    for tool in rows:
        for p in tool.profiles:
            profiles.setdefault(p, []).append(tool.id)
    for pname, prow in profile_rows.items():
        key = fold(pname)
        base = list(prow.tools) if prow.tools is not None else profiles.get(key, [])
        profiles[key] = [*base, *(x for x in prow.also if x not in base)]
    profiles[FULL_PROFILE] = ["*"]
    grant_map: dict[str, list[Grant]] = {}
    for grant in grants:
        grant_map.setdefault(norm(grant.tool), []).append(
            Grant(norm(grant.tool), norm(grant.when_allowed), grant.unless_denied)
        )
    definition = tuple(f.model_dump(mode="json", exclude_defaults=True) for f in files)
    return Catalog(
        name=last.name,
        description=last.description or last.name,
        provenance=last.provenance or "",
        tools=rows,
        aliases=aliases,
        covers=covers,
        grants={k: tuple(v) for k, v in grant_map.items()},
        deny_implies=deny_implies,
        owner_only=frozenset(norm(x) for x in owner_only),
        image_tool=norm(image_tool) if image_tool else None,
        memory_flush_tools=tuple(norm(x) for x in memory),
        provider_aliases=provider_aliases,
        sandbox_allow=tuple(sandbox.allow),
        sandbox_deny=tuple(sandbox.deny),
        subagent_deny_always=tuple(subagents.deny_always),
        subagent_deny_leaf=tuple(subagents.deny_leaf),
        groups={k: tuple(v) for k, v in groups.items()},
        profiles={k: tuple(v) for k, v in profiles.items()},
        tool_ids=frozenset(tools),
        by_id={t.id: t for t in rows},
        definition=definition,
        call_read_tool=norm(call_read) if call_read else None,
        call_write_tool=norm(call_write) if call_write else None,
    )


def _builtin_file(text: str) -> CatalogFile | None:
    """A built-in catalog, parsed without source positions (they only serve diagnostics, and
    locating every value costs more than the rest of reading it). None if it has a problem
    after all: the located reading then reports it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib

    try:
        parsed = CatalogFile.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValidationError):
        return None
    return None if any(ascii_problem(fold(row.id)) for row in parsed.tools) else parsed


def _catalog_text(
    path: Path, limits: Limits, shown: str, reader: Reader | None, named_at: Source | None, key: str
) -> str:
    """An operator catalog file's text: from disk, or through the `reader` that read the policy
    (a git revision's files, the hot-reload store's digesting reader), so a compile reads every
    file the same way."""
    if reader is None:
        if not path.exists():
            raise PolicyError(
                [Diagnostic.make("PC101", f"catalog file {shown} does not exist", named_at, key)]
            )
        return read_text(path, limits, shown)
    try:
        return decode(reader(path).encode("utf-8"), shown, limits)
    except OSError as exc:
        raise PolicyError(
            [Diagnostic.make("PC101", f"cannot read catalog file {shown}: {exc}", named_at, key)]
        ) from None


def _read_catalog_file(
    path: Path,
    limits: Limits,
    shown: str,
    builtin: bool = False,
    reader: Reader | None = None,
    named_at: Source | None = None,
    key: str = "catalog",
) -> CatalogFile:
    from .schema_errors import diagnostics_from_validation

    if builtin:  # shipped with policyctl: never a file of the policy's tree or revision
        text = read_text(path, limits, shown)
    else:
        text = _catalog_text(path, limits, shown, reader, named_at, key)
    fast = _builtin_file(text) if builtin else None
    if fast is not None:
        return fast
    located = parse_text(text, shown, detect_format(str(path)), limits)
    data, index = flatten(located)
    try:
        parsed = CatalogFile.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(
            diagnostics_from_validation(
                exc, index, code_for_extra="PC305", model=CatalogFile, data=data
            )
        ) from None
    problems = []
    for i, row in enumerate(parsed.tools):
        bad = ascii_problem(fold(row.id))
        if bad:
            problems.append(
                Diagnostic.make(
                    "PC305",
                    f'tool id "{row.id}": {bad}',
                    index.value(("tools", i, "id")),
                    f"tools[{i}].id",
                )
            )
    if problems:
        raise PolicyError(problems)
    return parsed


@lru_cache(maxsize=8)
def builtin_catalog(name: str) -> Catalog:
    path = data_dir("profiles") / f"{name}.toml"
    return _derive([_read_catalog_file(path, Limits(), f"<catalog {name}>", builtin=True)])


def load_catalog(
    ref: str | None,
    relative_to: Path | None = None,
    named_at: Source | None = None,
    limits: Limits | None = None,
    roots: tuple[Path, ...] | None = None,
    reader: Reader | None = None,
) -> Catalog:
    """A built-in catalog by name, or an operator catalog file (which may extend a built-in).

    With `roots` (`files.policy_roots` of the policy naming the catalog), the catalog file and
    every file it extends must lie under them, as `extends` targets must (PC113). `reader`
    (`loader.Reader`) reads the operator files instead of the disk, as it read the policy."""
    ref = ref or DEFAULT_CATALOG
    if ref in BUILTIN_CATALOGS:
        return builtin_catalog(ref)
    looks_like_path = any(ref.endswith(ext) for ext in (".toml", ".yaml", ".yml", ".json"))
    if not looks_like_path:
        from .diagnostics import suggestion

        raise PolicyError(
            [
                Diagnostic.make(
                    "PC304",
                    f'unknown catalog "{ref}"',
                    named_at,
                    "catalog",
                    suggestion(ref, BUILTIN_CATALOGS)
                    or f"use one of {', '.join(BUILTIN_CATALOGS)} or a path to a catalog file",
                )
            ]
        )
    limits = limits or default_limits()
    path = (relative_to / ref) if relative_to else Path(ref)
    if roots is not None:
        _confine(path, roots, named_at)
    chain: list[CatalogFile] = []
    current: CatalogFile = _read_catalog_file(path, limits, str(path), False, reader, named_at)
    chain.append(current)
    seen = {path.resolve()}
    while current.extends:
        parent = current.extends
        if parent in BUILTIN_CATALOGS:
            base_path = data_dir("profiles") / f"{parent}.toml"
            shown = f"<catalog {parent}>"
        else:
            base_path = path.parent / parent
            shown = str(base_path)
            if base_path.resolve() in seen:
                raise PolicyError(
                    [
                        Diagnostic.make(
                            "PC109", f"catalog extends cycle at {parent}", Source(str(path), 1, 1)
                        )
                    ]
                )
            seen.add(base_path.resolve())
            if roots is not None:
                _confine(base_path, roots, Source(str(path), 1, 1))
        builtin = parent in BUILTIN_CATALOGS
        current = _read_catalog_file(
            base_path, limits, shown, builtin, reader, Source(str(path), 1, 1), "extends"
        )
        chain.append(current)
    return _derive(list(reversed(chain)))


def _confine(path: Path, roots: tuple[Path, ...], named_at: Source | None) -> None:
    # A policy under review names its catalog: confined like `extends`, it cannot read a
    # file elsewhere on the machine into the policy or into its diagnostics.
    problem = confinement_problem(path, roots)
    if problem:
        raise extends_error(f"catalog: {problem}", named_at, "catalog")
