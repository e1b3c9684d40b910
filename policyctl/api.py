"""The Python API an embedding agent reads: load a policy, resolve a run, ask why."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from .catalog import load_catalog
from .compile import CompiledPolicy, compile_document, relative_catalog_dir
from .diagnostics import PolicyError
from .loader import LoadedDocument, load_document
from .model import PolicyDocument
from .schema_errors import diagnostics_from_validation
from .settings import Limits


def validate_document(loaded: LoadedDocument) -> PolicyDocument:
    """Schema stage: plain data -> the typed document, or every schema error, located."""
    try:
        return PolicyDocument.model_validate(loaded.data)
    except ValidationError as exc:
        raise PolicyError(
            diagnostics_from_validation(
                exc, loaded.locations, model=PolicyDocument, extra_keys=["extends"]
            )
        ) from None


def compile_loaded(loaded: LoadedDocument, limits: Limits | None = None) -> CompiledPolicy:
    doc = validate_document(loaded)
    catalog = load_catalog(
        doc.catalog,
        relative_catalog_dir(loaded.locations, loaded.root),
        loaded.locations.value(("catalog",)),
        limits,
    )
    return compile_document(doc, loaded.locations, catalog, loaded.root, loaded.files)


def load_policy(path: str | Path, *, limits: Limits | None = None) -> CompiledPolicy:
    """Load, validate and compile a policy file (and what it extends).

    Raises `PolicyError` carrying every diagnostic found, each with file:line:col.
    """
    return compile_loaded(load_document(path, limits), limits)


def load_policy_text(
    text: str, name: str = "policy.yaml", *, limits: Limits | None = None
) -> CompiledPolicy:
    """The same from text; `name`'s extension picks the format and anchors relative paths."""
    return compile_loaded(load_document(name, limits, text=text), limits)
