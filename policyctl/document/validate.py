"""Validate: the merged, located document -> the typed `PolicyDocument`, or every schema error
located in the file that holds it."""

from __future__ import annotations

from pydantic import ValidationError

from ..diagnostics import Diagnostic, PolicyError
from .extends import LoadedDocument
from .model import PolicyDocument


def policy_schema_diagnostics(exc: ValidationError, loaded: LoadedDocument) -> list[Diagnostic]:
    """pydantic's errors for a policy document, located in its files."""
    from ..formats.schema_errors import diagnostics_from_validation  # a valid policy never needs it

    return diagnostics_from_validation(
        exc, loaded.locations, model=PolicyDocument, extra_keys=["extends"], data=loaded.data
    )


def validate_document(loaded: LoadedDocument) -> PolicyDocument:
    """Schema stage: plain data -> the typed document, or every schema error, located."""
    try:
        return PolicyDocument.model_validate(loaded.data)
    except ValidationError as exc:
        raise PolicyError(policy_schema_diagnostics(exc, loaded)) from None
