"""Catalog: what tools exist before any policy.

    model      `Catalog` (frozen, read-only maps) and the built-in catalogs' names
    load       catalog files (and the catalogs they extend) -> a `Catalog`, derived once
    file       `CatalogFile`, the format of a catalog file (pydantic; operator catalogs, bundles)
    inventory  `Tool` and `Inventory`: the tools one run has before any policy

The names below are handed on lazily: importing the catalog value does not load its reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

_EXPORTS = {
    "BUILTIN_CATALOGS": "model",
    "DEFAULT_CATALOG": "model",
    "FULL_PROFILE": "model",
    "Catalog": "model",
    "CatalogTool": "model",
    "Grant": "model",
    "data_dir": "model",
    "builtin_catalog": "load",
    "catalog_from_definition": "load",
    "load_catalog": "load",
}

__all__ = [
    "BUILTIN_CATALOGS",
    "DEFAULT_CATALOG",
    "FULL_PROFILE",
    "Catalog",
    "CatalogTool",
    "Grant",
    "builtin_catalog",
    "catalog_from_definition",
    "data_dir",
    "load_catalog",
]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from .load import builtin_catalog, catalog_from_definition, load_catalog
    from .model import (
        BUILTIN_CATALOGS,
        DEFAULT_CATALOG,
        FULL_PROFILE,
        Catalog,
        CatalogTool,
        Grant,
        data_dir,
    )
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS, globals())
