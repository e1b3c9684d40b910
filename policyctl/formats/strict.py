"""The pydantic base of every file format operators write: policies, catalogs, policy tests,
written contexts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Every model of a file operators write: unknown keys are errors, no type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)
