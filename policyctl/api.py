"""The Python API an embedding agent reads: load a policy, resolve a run, ask why."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from .catalog.load import load_catalog
from .compile.compiled import CompiledPolicy
from .compile.scopes import compile_document, relative_catalog_dir
from .diagnostics import Diagnostic, PolicyError
from .document.extends import LoadedDocument, load_document
from .document.validate import validate_document
from .formats.files import policy_roots
from .formats.read import Reader
from .settings import Limits, default_limits


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Compiling builds many long-lived, acyclic objects; the cyclic collector would scan them
    again and again as they accumulate (half the compile time of a 100,000-sender policy).
    Reference counting still frees garbage meanwhile; the collector resumes afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def compile_loaded(
    loaded: LoadedDocument, limits: Limits | None = None, reader: Reader | None = None
) -> CompiledPolicy:
    """Compile a loaded document. `reader` reads its operator catalog files as `load_document`
    read the policy (give the same one): a revision's catalog comes from that revision, and
    the hot-reload store digests and watches every file the compile read."""
    with _gc_paused():
        try:
            return _compile_loaded(loaded, limits, reader)
        except PolicyError as exc:
            raise _unquoted_outside(exc, loaded.root) from None


def _unquoted_outside(exc: PolicyError, root: str) -> PolicyError:
    """The errors of a policy that failed, with the lines of every file but the root left
    unquoted: a file an `extends` named may be any file of the tree, and a policy that does
    not compile must not make CI print its lines (the location is still given)."""
    return PolicyError(
        [
            replace(d, quote=False) if d.source is not None and d.source.file != root else d
            for d in exc.diagnostics
        ]
    )


def _compile_loaded(
    loaded: LoadedDocument, limits: Limits | None, reader: Reader | None
) -> CompiledPolicy:
    doc = validate_document(loaded)
    catalog = load_catalog(
        doc.catalog,
        relative_catalog_dir(loaded.locations, loaded.root),
        loaded.locations.value(("catalog",)),
        limits,
        policy_roots(Path(loaded.root), (limits or default_limits()).extends_roots),
        reader,
    )
    if not loaded.diagnostics:
        return compile_document(doc, loaded.locations, catalog, loaded.root, loaded.files)
    # The loader's warnings (legacy shapes migrated, keys merged across spellings) ride along
    # with the compiler's, in the error raised or on the compiled policy.
    try:
        policy = compile_document(doc, loaded.locations, catalog, loaded.root, loaded.files)
    except PolicyError as exc:
        raise PolicyError([*loaded.diagnostics, *exc.diagnostics]) from None
    found = sorted({*loaded.diagnostics, *policy.diagnostics}, key=Diagnostic.sort_key)
    return replace(policy, diagnostics=tuple(found))


def load_policy(path: str | Path, *, limits: Limits | None = None) -> CompiledPolicy:
    """Load, validate and compile a policy file (and what it extends).

    Raises `PolicyError` carrying every diagnostic found, each with file:line:col.
    """
    with _gc_paused():
        return compile_loaded(load_document(path, limits), limits)


def load_policy_text(
    text: str, name: str = "policy.yaml", *, limits: Limits | None = None
) -> CompiledPolicy:
    """The same from text; `name`'s extension picks the format and anchors relative paths."""
    return compile_loaded(load_document(name, limits, text=text), limits)
