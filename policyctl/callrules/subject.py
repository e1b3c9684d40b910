"""A call -> the parts its rules are decided on, computed once per call (not per layer).

A shell call becomes one part per simple command, one per unanalysable piece, and an access
per redirection or `tee` file (decided against the catalog's read or write tool). A path call
is one part (a patch: one per touched path), a URL call one part, and a call of a tool without
an argument kind one part that only `name(key=glob)` rules look at.

A tool the catalog relates to another (`[[relations]]`: `apply_patch` writes through `write`,
`edit` reads through `read`) also makes an access per path the relation names, decided by the
related tool's rules like a redirection: a path for `paths = "argument"`, each file a patch
touches with one of the relation's operations for `paths = "patch"`. When those paths cannot be
found, the access is unanalysable, so the related tool's rules still speak (callDefault).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..catalog.model import Relation
from .model import KEYED_ONLY, ArgumentKind, ArgumentSpec
from .patch import patch_operations
from .paths import resolve_path
from .shell import DEFAULT_LIMITS, ShellLimits, analyse
from .urls import parse_call_url, parse_normal_url
from .values import Part, ResolvedPath, Roots


@dataclass(frozen=True, slots=True)
class CallEnvironment:
    """What a decision needs besides the rules: catalog kinds, the run's roots and tools."""

    specs: Mapping[str, ArgumentSpec] = field(default_factory=dict)
    roots: Roots = field(default_factory=lambda: Roots(None, None))
    #: the catalog's tools that redirections are decided as (`read`/`write`, nanobot's
    #: `read_file`/`write_file`)
    read_tool: str | None = None
    write_tool: str | None = None
    #: the tools the run has at name level (None: not known, every tool counts as present)
    run_tools: frozenset[str] | None = None
    shell_limits: ShellLimits = DEFAULT_LIMITS
    #: tool -> the catalog relations its calls make (`Catalog.relations`)
    relations: Mapping[str, tuple[Relation, ...]] = field(default_factory=dict)

    def spec(self, tool: str) -> ArgumentSpec:
        return self.specs.get(tool, KEYED_ONLY)

    def has(self, tool: str) -> bool:
        return self.run_tools is None or tool in self.run_tools


class Subject(NamedTuple):
    # per-call value on the hot path: a NamedTuple (immutable too) is built 5x faster
    tool: str
    parts: tuple[Part, ...]
    #: (read or write tool, the part): file accesses made through a shell line
    accesses: tuple[tuple[str, Part], ...] = ()
    #: how many of `accesses`, from the start, a run without their tool refuses: a shell
    #: line's redirections, every access a catalog relation makes; a command's file operands
    #: (`cat F`, catalog-modelled) only meet the tool's rules where it has them
    redirections: int = 0


def _text_arg(args: Mapping[str, Any], key: str | None) -> str | None:
    value = args.get(key) if key else None
    return value if isinstance(value, str) else None


class _Seen:
    """What one call's subject has worked out, for its relations to reuse: each path resolved
    (a relation decides the same file again, as another tool's call) and the patch parsed."""

    __slots__ = ("operations", "paths")

    def __init__(self) -> None:
        self.paths: dict[str, ResolvedPath | str] = {}
        self.operations: tuple[tuple[str, str], ...] | str | None = None


def _path_part(
    args: Mapping[str, Any], raw: str, roots: Roots, cwd: str | None, seen: _Seen | None = None
) -> Part:
    if seen is None:
        resolved = resolve_path(raw, roots, cwd)
    else:
        found = seen.paths.get(raw)
        resolved = found if found is not None else resolve_path(raw, roots, cwd)
        seen.paths[raw] = resolved
    if isinstance(resolved, str):
        return Part(args, raw, roots, unanalysable=resolved)
    return Part(args, resolved.normal, roots, None, False, resolved)


def _cwd(args: Mapping[str, Any], spec: ArgumentSpec, roots: Roots) -> str | Part | None:
    """The call's working directory (absolute) if it sets one; a Part if it cannot be placed."""
    raw = _text_arg(args, spec.cwd_key)
    if raw is None:
        if spec.cwd_key and args.get(spec.cwd_key) is not None:
            return Part(
                args,
                str(args.get(spec.cwd_key)),
                roots,
                unanalysable="working directory is not text",
            )
        return None
    resolved = resolve_path(raw, roots, None)
    if isinstance(resolved, str):
        return Part(args, raw, roots, unanalysable=f"working directory: {resolved}")
    return resolved.real


def build_subject(tool: str, args: Mapping[str, Any], env: CallEnvironment) -> Subject:
    relations = env.relations.get(tool)
    if relations is None:  # the common case
        return _own_subject(tool, args, env)
    return _related_subject(tool, args, env, relations)


def _own_subject(
    tool: str, args: Mapping[str, Any], env: CallEnvironment, seen: _Seen | None = None
) -> Subject:
    spec = env.spec(tool)
    roots = env.roots
    if spec.kind is ArgumentKind.KEYED:
        return Subject(tool, (Part(args, "", roots),))
    raw = _text_arg(args, spec.key)
    if raw is None:
        why = f"argument {spec.key!r} is missing or not text"
        return Subject(tool, (Part(args, "", roots, unanalysable=why),))
    if spec.kind is ArgumentKind.URL:
        normal = parse_normal_url(raw)
        if normal is not None:  # the common case: the URL is its own rendering
            return Subject(tool, (Part(args, raw, roots, None, False, None, normal),))
        url = parse_call_url(raw)
        if isinstance(url, str):
            return Subject(tool, (Part(args, raw, roots, unanalysable=url),))
        return Subject(tool, (Part(args, url.render(), roots, url=url),))
    cwd = _cwd(args, spec, roots)
    if isinstance(cwd, Part):
        return Subject(tool, (cwd,))
    if spec.kind is ArgumentKind.PATH:
        return Subject(tool, (_path_part(args, raw, roots, cwd, seen),))
    if spec.kind is ArgumentKind.PATCH:
        operations = patch_operations(raw)
        if seen is not None:
            seen.operations = operations
        if isinstance(operations, str):
            return Subject(tool, (Part(args, raw[:80], roots, unanalysable=operations),))
        paths = dict.fromkeys(path for _, path in operations)
        return Subject(tool, tuple(_path_part(args, p, roots, cwd, seen) for p in paths))
    return _shell_subject(tool, args, raw, env, cwd)


def _related_subject(
    tool: str, args: Mapping[str, Any], env: CallEnvironment, relations: tuple[Relation, ...]
) -> Subject:
    """The tool's own subject, with an access per path each relation names (module doc)."""
    seen = _Seen()
    own = _own_subject(tool, args, env, seen)
    roots = env.roots
    spec = env.spec(tool)
    cwd = _cwd(args, spec, roots)
    accesses = list(own.accesses)
    operations = seen.operations
    for relation in relations:
        target = relation.acts_as
        key = env.spec(target).key or "path"
        if isinstance(cwd, Part):
            accesses.append((target, Part({}, cwd.text, roots, unanalysable=cwd.unanalysable)))
            continue
        if relation.paths == "argument":
            raw = _text_arg(args, relation.key or spec.key)
            if raw is None:
                why = f"argument {relation.key or spec.key!r} is missing or not text"
                accesses.append((target, Part({}, "", roots, unanalysable=why)))
            else:
                accesses.append((target, _path_part({key: raw}, raw, roots, cwd, seen)))
            continue
        if operations is None:
            raw = _text_arg(args, spec.key)
            operations = (
                f"argument {spec.key!r} is missing or not text"
                if raw is None
                else patch_operations(raw)
            )
        if isinstance(operations, str):
            accesses.append((target, Part({}, "", roots, unanalysable=operations)))
            continue
        wanted = relation.operations
        paths = dict.fromkeys(p for op, p in operations if wanted is None or op in wanted)
        accesses.extend((target, _path_part({key: p}, p, roots, cwd, seen)) for p in paths)
    # every access a relation makes is refused when the run lacks its tool, as a redirection
    # is (a tool that acts as another is never let through by the other's absence)
    return Subject(tool, own.parts, tuple(accesses), len(accesses))


def _shell_subject(
    tool: str, args: Mapping[str, Any], raw: str, env: CallEnvironment, cwd: str | None
) -> Subject:
    roots = env.roots
    found = analyse(raw, env.shell_limits)
    parts = [
        Part(
            args,
            c.text,
            roots,
            words=c.words,
            open_tail=c.open_tail,
            screen=c.screen,
            written=c.written,
        )
        for c in found.commands
    ]
    parts.extend(Part(args, p.text, roots, unanalysable=p.reason) for p in found.problems)
    accesses: list[tuple[str, Part]] = []
    # redirections first: `Subject.redirections` counts them
    ordered = sorted(found.accesses, key=lambda a: a.source is not None)
    redirections = 0
    for access in ordered:
        target = env.read_tool if access.mode == "read" else env.write_tool
        if target is None and access.source is not None:
            continue  # no read or write tool to decide a command's file operand with
        if target is None:
            why = f"the catalog names no {access.mode} tool to decide {access.text!r} with"
            parts.append(Part(args, access.text, roots, unanalysable=why))
            continue
        # the access is a call of the read or write tool: its rules see its own arguments
        as_call = {env.spec(target).key or "path": access.path}
        if access.path is None:
            part = Part(as_call, access.text, roots, unanalysable="the target is an expansion")
        elif found.changes_directory and not access.path.startswith(("/", "~")):
            # where the file is cannot be known, but a rule that meets it at any depth (`.env`
            # has no slash) meets it here too: the target as if the directory had not changed
            # is screened by the deny and ask rules, and the line stays unanalysable
            why = "a relative target on a line that changes directory"
            part = Part(as_call, access.path, roots, unanalysable=why)
            screened = _path_part(as_call, access.path, roots, cwd)._replace(screen=True)
            accesses.append((target, screened))
            redirections += access.source is None
        else:
            part = _path_part(as_call, access.path, roots, cwd)
        accesses.append((target, part))
        redirections += access.source is None
    return Subject(tool, tuple(parts), tuple(accesses), redirections)


def environment_for(
    catalog: Any,
    roots: Roots,
    run_tools: frozenset[str] | None = None,
    shell_limits: ShellLimits = DEFAULT_LIMITS,
) -> CallEnvironment:
    """The environment for a catalog (`policyctl.catalog.Catalog`): its tools' argument kinds."""
    specs = {
        tool.id: ArgumentSpec(ArgumentKind(tool.argument_kind), tool.argument_key, tool.cwd_key)
        for tool in catalog.tools
        if tool.argument_kind is not None
    }
    return CallEnvironment(
        specs,
        roots.resolved(),
        catalog.call_read_tool,
        catalog.call_write_tool,
        run_tools,
        shell_limits,
        catalog.relations,
    )
