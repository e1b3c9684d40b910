"""Catalogs: the data that describes core tools, and everything derived from it.

A catalog file lists tools (id, section, profiles, extra groups, flags) plus aliases, grants,
owner-only tools, provider aliases, sandbox defaults and subagent deny lists. Section groups,
`group:openclaw`-style groups and the built-in profiles are derived here, never typed twice.
An operator catalog may `extends` a built-in one to add tools and profiles.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .file import CatalogFile

from ..diagnostics import Diagnostic, PolicyError, Source, suggestion
from ..formats.files import confinement_problem, extends_error
from ..formats.read import Reader, decode, detect_format, parse_text, read_text
from ..located import flatten
from ..names import ascii_problem, fold
from ..settings import Limits, default_limits
from .model import (
    BUILTIN_CATALOGS,
    DEFAULT_CATALOG,
    FULL_PROFILE,
    Catalog,
    CatalogTool,
    Grant,
    Relation,
    data_dir,
)


def catalog_from_definition(definition: list[Mapping[str, Any]]) -> Catalog:
    """Rebuild a catalog from the data a bundle carries (no files are read)."""
    from .file import CatalogFile

    return _derive([CatalogFile.model_validate(d).model_dump() for d in definition])


def _derive(files: list[Mapping[str, Any]]) -> Catalog:
    """Fold a catalog and the catalogs it extends (base first) into one `Catalog`.

    Each file is data `CatalogFile` accepts: a validated file dumped with every field, or a
    built-in catalog's TOML as written (`_builtin_file`), whose omitted fields take the
    defaults below, the model's (tests/test_startup.py derives each built-in both ways)."""
    tools: dict[str, Mapping[str, Any]] = {}
    aliases: dict[str, str] = {}
    covers: dict[str, tuple[str, ...]] = {}
    grants: list[Mapping[str, Any]] = []
    relation_rows: list[Mapping[str, Any]] = []
    deny_implies: dict[str, tuple[str, ...]] = {}
    owner_only: set[str] = set()
    provider_aliases: dict[str, str] = {}
    profile_rows: dict[str, Mapping[str, Any]] = {}
    image_tool: str | None = None
    memory: list[str] = ["read", "write"]
    sandbox: Mapping[str, Any] = {}
    subagents: Mapping[str, Any] = {}
    call_read: str | None = None
    call_write: str | None = None
    for f in files:
        for row in f.get("tools", ()):
            tools[fold(row["id"])] = row
        aliases.update({fold(k): fold(v) for k, v in f.get("aliases", {}).items()})
        covers.update(
            {k.lower(): tuple(x.lower() for x in v) for k, v in f.get("covers", {}).items()}
        )
        grants.extend(f.get("grants", ()))
        relation_rows.extend(f.get("relations") or ())
        deny_implies.update(
            {k.lower(): tuple(x.lower() for x in v) for k, v in f.get("deny_implies", {}).items()}
        )
        owner_only.update(fold(x) for x in f.get("owner_only", ()))
        provider_aliases.update(
            {k.lower(): v.lower() for k, v in f.get("provider_aliases", {}).items()}
        )
        profile_rows.update(f.get("profiles", {}))
        image_tool = f.get("image_tool") or image_tool
        memory = list(f.get("memory_flush_tools", ["read", "write"]))
        sandbox = f.get("sandbox") or sandbox
        subagents = f.get("subagents") or subagents
        call_read = f.get("call_read_tool") or call_read
        call_write = f.get("call_write_tool") or call_write
    last = files[-1]

    def norm(name: str) -> str:
        text = fold(name)
        return aliases.get(text, text)

    rows = tuple(
        CatalogTool(
            tid,
            r["section"].lower(),
            tuple(p.lower() for p in r.get("profiles", ())),
            tuple(g.lower() for g in r.get("groups", ())),
            r.get("section_group", True),
            r.get("read_only", False),
            r.get("exclusive", False),
            frozenset(p.lower() for p in r["providers"]) if r.get("providers") else None,
            r.get("description"),
            r.get("argument_kind"),
            r.get("argument_key"),
            r.get("cwd_key"),
        )
        for tid, r in tools.items()
    )
    owner_only.update(t for t, r in tools.items() if r.get("owner_only", False))
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
        listed = prow.get("tools")
        base = list(listed) if listed is not None else profiles.get(key, [])
        profiles[key] = [*base, *(x for x in prow.get("also", ()) if x not in base)]
    profiles[FULL_PROFILE] = ["*"]
    grant_map: dict[str, list[Grant]] = {}
    for grant in grants:
        granted = norm(grant["tool"])
        grant_map.setdefault(granted, []).append(
            Grant(granted, norm(grant["when_allowed"]), grant.get("unless_denied", False))
        )
    relations: dict[str, list[Relation]] = {}
    for row in relation_rows:
        relation = _relation(row, norm)
        if relation not in relations.get(relation.tool, ()):
            relations.setdefault(relation.tool, []).append(relation)
    return Catalog(
        name=last["name"],
        description=last.get("description") or last["name"],
        provenance=last.get("provenance") or "",
        tools=rows,
        aliases=aliases,
        covers=covers,
        grants={k: tuple(v) for k, v in grant_map.items()},
        deny_implies=deny_implies,
        owner_only=frozenset(norm(x) for x in owner_only),
        image_tool=norm(image_tool) if image_tool else None,
        memory_flush_tools=tuple(norm(x) for x in memory),
        provider_aliases=provider_aliases,
        sandbox_allow=tuple(sandbox.get("allow", ())),
        sandbox_deny=tuple(sandbox.get("deny", ())),
        subagent_deny_always=tuple(subagents.get("deny_always", ())),
        subagent_deny_leaf=tuple(subagents.get("deny_leaf", ())),
        groups={k: tuple(v) for k, v in groups.items()},
        profiles={k: tuple(v) for k, v in profiles.items()},
        tool_ids=frozenset(tools),
        by_id={t.id: t for t in rows},
        files=tuple(files),
        call_read_tool=norm(call_read) if call_read else None,
        call_write_tool=norm(call_write) if call_write else None,
        relations={k: tuple(v) for k, v in relations.items()},
    )


def _relation(row: Mapping[str, Any], norm: Callable[[str], str]) -> Relation:
    """One `[[relations]]` row, its tool names normalised as the catalog's are."""
    ops = row.get("operations")
    return Relation(
        norm(row["tool"]),
        norm(row["acts_as"]),
        row["paths"],
        row.get("key"),
        frozenset(ops) if ops is not None else None,
    )


def relation_problem(relation: Relation, catalog: Catalog) -> tuple[str, str, str] | None:
    """Why a relation cannot be applied to `catalog`: (field, message, fix), or None.

    The mapped call is a path call of `acts_as`, so `acts_as` must read a path; a `patch`
    relation needs a tool whose argument is a patch, an `argument` one a path argument."""
    for name, field in ((relation.tool, "tool"), (relation.acts_as, "acts_as")):
        if name not in catalog.by_id:
            hint = suggestion(name, sorted(catalog.tool_ids))
            why = f'relation names "{name}", a tool this catalog does not have'
            return field, why, hint or "name a tool of the catalog's tools table"
    if relation.tool == relation.acts_as:
        return "acts_as", f'"{relation.tool}" is related to itself', "name another tool"
    tool, acts_as = catalog.by_id[relation.tool], catalog.by_id[relation.acts_as]
    if acts_as.argument_kind != "path":
        why = (
            f'"{acts_as.id}" takes no path argument (argument_kind = "path"): its rules '
            "cannot be read for the paths of another tool's call"
        )
        return (
            "acts_as",
            why,
            f'give "{acts_as.id}" a path argument, or relate to a tool that has one',
        )
    if relation.paths == "patch" and tool.argument_kind != "patch":
        why = f'paths = "patch" needs "{tool.id}" to take a patch (argument_kind = "patch")'
        return "paths", why, 'use paths = "argument", or declare the tool\'s argument_kind'
    if relation.paths == "argument" and (relation.key or tool.argument_key) is None:
        why = f'"{tool.id}" has no argument_key: say which argument holds the path'
        return "key", why, 'add key = "<argument name>"'
    return None


def _builtin_file(text: str) -> dict[str, Any] | None:
    """A built-in catalog's data, parsed without source positions (they only serve
    diagnostics, and locating every value costs more than the rest of reading it) and not
    validated: the built-in catalogs are policyctl's own data, each checked against
    `CatalogFile` by tests/test_startup.py, and building the model would cost every process
    more than reading the catalog. None if the TOML or a tool id has a problem after all: the
    located, validated reading then reports it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib

    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    tools = data.get("tools", [])
    ids_ok = isinstance(tools, list) and all(
        isinstance(row, dict) and isinstance(row.get("id"), str) for row in tools
    )
    if not ids_ok or any(ascii_problem(fold(row["id"])) for row in tools):
        return None
    return data


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
    relation_sources: list[tuple[int, Mapping[str, Any], Mapping[str, Source | None]]]
    | None = None,
) -> Mapping[str, Any]:
    """A catalog file as data for `_derive`; validated unless it is a built-in one. Each
    relation row of a validated file is added to `relation_sources` with where its fields are
    written, for the checks that need the whole catalog (`_check_relations`)."""
    if builtin:  # shipped with policyctl: never a file of the policy's tree or revision
        text = read_text(path, limits, shown)
    else:
        text = _catalog_text(path, limits, shown, reader, named_at, key)
    fast = _builtin_file(text) if builtin else None
    if fast is not None:
        return fast
    from pydantic import ValidationError

    from ..formats.schema_errors import diagnostics_from_validation
    from .file import CatalogFile

    located = parse_text(text, shown, detect_format(str(path)), limits)
    data, index = flatten(located)
    try:
        parsed: CatalogFile = CatalogFile.model_validate(data)
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
    dumped = parsed.model_dump()
    if relation_sources is not None:
        for i, row in enumerate(dumped["relations"]):
            where = {
                f: index.value(("relations", i, f)) or index.value(("relations", i))
                for f in ("tool", "acts_as", "paths", "key")
            }
            relation_sources.append((i, row, where))
    return dumped


@lru_cache(maxsize=8)
def builtin_catalog(name: str) -> Catalog:
    return _derive([builtin_catalog_file(name)])


def builtin_catalog_file(name: str) -> Mapping[str, Any]:
    """A built-in catalog file's content as written: tool ids in the host's own spelling
    (`Bash`), which the compiled catalog folds (`bash`); `hook doctor` matches those."""
    path = data_dir("profiles") / f"{name}.toml"
    return _read_catalog_file(path, Limits(), f"<catalog {name}>", builtin=True)


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
    (`formats.read.Reader`) reads the operator files instead of the disk, as it read the policy."""
    ref = ref or DEFAULT_CATALOG
    if ref in BUILTIN_CATALOGS:
        return builtin_catalog(ref)
    looks_like_path = any(ref.endswith(ext) for ext in (".toml", ".yaml", ".yml", ".json"))
    if not looks_like_path:
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
    chain: list[Mapping[str, Any]] = []
    related: list[tuple[int, Mapping[str, Any], Mapping[str, Source | None]]] = []
    current = _read_catalog_file(
        path, limits, str(path), False, reader, named_at, relation_sources=related
    )
    chain.append(current)
    seen = {path.resolve()}
    while current.get("extends"):
        parent: str = current["extends"]
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
            base_path,
            limits,
            shown,
            builtin,
            reader,
            Source(str(path), 1, 1),
            "extends",
            relation_sources=related,
        )
        chain.append(current)
    catalog = _derive(list(reversed(chain)))
    _check_relations(catalog, related)
    return catalog


def _check_relations(
    catalog: Catalog, rows: list[tuple[int, Mapping[str, Any], Mapping[str, Source | None]]]
) -> None:
    """An operator's relation that cannot be applied is an error where it is written (PC140),
    never a relation silently left out: it may be all that keeps a file from being written."""
    problems = []

    def norm(name: str) -> str:
        return catalog.aliases.get(fold(name), fold(name))

    for i, row, where in rows:
        relation = _relation(row, norm)
        found = relation_problem(relation, catalog)
        if found is not None:
            field, message, fix = found
            at = where.get(field)
            problems.append(Diagnostic.make("PC140", message, at, f"relations[{i}].{field}", fix))
    if problems:
        raise PolicyError(problems)


def _confine(path: Path, roots: tuple[Path, ...], named_at: Source | None) -> None:
    # A policy under review names its catalog: confined like `extends`, it cannot read a
    # file elsewhere on the machine into the policy or into its diagnostics.
    problem = confinement_problem(path, roots)
    if problem:
        raise extends_error(f"catalog: {problem}", named_at, "catalog")
