"""The JSON Schemas policyctl publishes (committed under schemas/, checked for drift by tests)."""

from __future__ import annotations

import json
from collections.abc import Callable


def _policy() -> dict[str, object]:
    from .catalog import BUILTIN_CATALOGS, builtin_catalog
    from .model import document_json_schema

    # profile -> the built-in catalogs that have it, so hover says where a name is valid
    profiles: dict[str, list[str]] = {}
    for name in BUILTIN_CATALOGS:
        for profile in builtin_catalog(name).profiles:
            profiles.setdefault(profile, []).append(name)
    everywhere = [p for p, cats in profiles.items() if len(cats) == len(BUILTIN_CATALOGS)]
    some = [f"{p} ({', '.join(cats)})" for p, cats in profiles.items() if p not in everywhere]
    note = "built in: " + ", ".join(everywhere) + (" in every catalog; " if some else "")
    note += ", ".join(some)
    return document_json_schema(sorted(profiles), BUILTIN_CATALOGS, note)


def _catalog() -> dict[str, object]:
    from .catalogfile import CatalogFile

    schema = CatalogFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "policyctl catalog"
    return schema


def _policy_test() -> dict[str, object]:
    from .testing import policy_test_schema

    return policy_test_schema()


SCHEMAS: dict[str, tuple[str, Callable[[], dict[str, object]]]] = {
    "policy": ("policy.schema.json", _policy),
    "catalog": ("catalog.schema.json", _catalog),
    "policy-test": ("policy-test.schema.json", _policy_test),
}


def render(kind: str) -> str:
    """Stable text: sorted keys, two-space indent, trailing newline."""
    return json.dumps(SCHEMAS[kind][1](), indent=2, sort_keys=True) + "\n"
