"""Extends: a policy file and every file it `extends` -> one merged, located document.

Each file is read by `formats.read`; per file, the legacy `agents.list` is migrated and
colliding keys reported (`keys`), sizes are checked (`sizes`); files merge deep (`merge`) and a
child's more specific scopes inherit the base denies they would hide (`carry`, after `floors`
refused a child that loosens a scalar gating a deny layer).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path as FsPath
from typing import Any

from ..diagnostics import Diagnostic, PolicyError, Severity, Source
from ..formats.files import confinement_problem, extends_error, policy_roots
from ..formats.read import Reader, decode, detect_format, fail, parse_text, read_text
from ..located import LocationIndex, LocMap, flatten
from ..settings import Limits, default_limits
from .carry import carry_base_denies
from .keys import collisions, migrate_legacy
from .lookalike import lookalike_ids
from .merge import merge
from .sizes import size_problems


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """A policy document after `extends` merging: plain data plus where each value was written."""

    data: dict[str, Any]
    locations: LocationIndex
    root: str
    files: tuple[str, ...]
    #: warnings of the merge (legacy shapes migrated, keys spelled differently across files)
    diagnostics: tuple[Diagnostic, ...] = ()


def load_document(
    path: str | FsPath,
    limits: Limits | None = None,
    text: str | None = None,
    reader: Reader | None = None,
    tried: list[str] | None = None,
    problems: list[Diagnostic] | None = None,
) -> LoadedDocument:
    """Read a policy file and everything it `extends`, merged, with locations kept.

    `reader` replaces reading from disk (for every file, the root included unless `text` is
    given): `policyctl diff HEAD~1:policy.yaml ...` reads a revision's files through git.
    `extends` may only name policy files under the root file's directory (or a directory of
    `limits.extends_roots`). `tried` receives every file the load tried to read, also when it
    fails (the hot-reload store watches them: a missing `extends` target may appear).
    `problems` collects duplicate keys instead of refusing the file (see `parse_text`), and
    the merge's errors (colliding keys) instead of raising them."""
    limits = limits or default_limits()
    root = FsPath(path)
    roots = policy_roots(root, limits.extends_roots)
    loading = _Loading(limits, roots, reader, problems)
    try:
        merged = loading.load(root, (), text, None)
    finally:
        if tried is not None:
            tried.extend(loading.tried)
    if len(loading.files) > 1:  # each file was within the limits: so must their sum be
        over = size_problems(merged, limits)
        if over:
            raise PolicyError(over)
    loading.diagnostics.extend(lookalike_ids(merged))  # after merging: across `extends` too
    errors = [d for d in loading.diagnostics if d.severity is Severity.ERROR]
    if errors and problems is None:
        raise PolicyError(loading.diagnostics)
    if problems is not None:
        problems.extend(errors)
        loading.diagnostics = [d for d in loading.diagnostics if d not in errors]
    data, index = flatten(merged)
    return LoadedDocument(data, index, str(root), tuple(loading.files), tuple(loading.diagnostics))


class _Loading:
    """One `load_document` call: the files read so far and the warnings of the merge."""

    def __init__(
        self,
        limits: Limits,
        roots: tuple[FsPath, ...],
        reader: Reader | None,
        problems: list[Diagnostic] | None,
    ) -> None:
        self.limits = limits
        self.roots = roots
        self.reader = reader
        self.problems = problems
        self.files: list[str] = []
        self.tried: list[str] = []
        self.diagnostics: list[Diagnostic] = []

    def load(
        self, path: FsPath, chain: tuple[FsPath, ...], text: str | None, named_at: Source | None
    ) -> LocMap:
        limits = self.limits
        real = path.resolve()
        if real in chain:
            cycle = " -> ".join(p.name for p in (*chain, real))
            raise fail("PC109", f"extends cycle: {cycle}", named_at)
        if len(chain) > limits.max_extends:
            raise fail("PC109", f"more than {limits.max_extends} levels of extends", named_at)
        shown = str(path)
        if named_at is not None:
            problem = confinement_problem(path, self.roots)
            if problem:
                raise extends_error(f"extends: {problem}", named_at)
        try:
            doc = self._parse(path, shown, text, named_at)
        except PolicyError as exc:
            if named_at is None:
                raise
            # The file did not parse as a policy: it may be any file (a `.env`), so its lines
            # are never quoted in the diagnostics.
            raise PolicyError([replace(d, quote=False) for d in exc.diagnostics]) from None
        over = size_problems(doc, limits)
        if over:  # before any more work on a file this large
            raise PolicyError(over)
        doc = migrate_legacy(doc, self.diagnostics)
        self.diagnostics.extend(collisions(doc))
        parents = doc.pop("extends", None)
        if parents is None:
            return doc
        where = doc.val_src.get("extends") or doc.src
        items: list[tuple[Any, Source | None]]
        if isinstance(parents, str):
            items = [(parents, where)]
        elif isinstance(parents, list):
            items = list(
                zip(parents, getattr(parents, "item_src", [where] * len(parents)), strict=False)
            )
        else:
            raise fail("PC202", "extends must be a path or a list of paths", where, path="extends")
        base: LocMap | None = None
        for item, item_src in items:
            if not isinstance(item, str) or not item.strip():
                raise fail(
                    "PC202", "extends entries must be non-empty paths", item_src, path="extends"
                )
            loaded = self.load(path.parent / item, (*chain, real), None, item_src)
            base = loaded if base is None else self._merge(base, loaded)
        assert base is not None or not items
        return self._merge(base, doc) if base is not None else doc

    def _merge(self, base: LocMap, over: LocMap) -> LocMap:
        """`over` on top of `base`; the base's denies follow into scopes `over` adds that would
        shadow them (see `carry`)."""
        return carry_base_denies(base, merge(base, over, self.diagnostics))

    def _parse(self, path: FsPath, shown: str, text: str | None, named_at: Source | None) -> LocMap:
        self.tried.append(shown)
        if text is None and self.reader is not None:
            try:
                text = decode(self.reader(path).encode("utf-8"), shown, self.limits)
            except OSError as exc:
                raise fail("PC101", f"cannot read {shown}: {exc}", named_at) from None
        if text is None:
            if not path.exists():
                raise fail("PC101", f"{shown} does not exist", named_at)
            text = read_text(path, self.limits, shown)
        self.files.append(shown)
        if self.problems is None:
            return parse_text(text, shown, detect_format(shown), self.limits)
        found: list[Diagnostic] = []
        doc = parse_text(text, shown, detect_format(shown), self.limits, found)
        # an extended file's lines are never quoted (it may be any file of the tree)
        self.problems.extend(d if named_at is None else replace(d, quote=False) for d in found)
        return doc
