"""Validate the decision server's answers against schemas/server.openapi.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPEC_PATH = Path(__file__).resolve().parents[2] / "schemas" / "server.openapi.json"
SPEC: dict[str, Any] = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
_URI = "urn:policyctl:server-openapi"
# OpenAPI 3.1 schemas are JSON Schema 2020-12
_REGISTRY = Registry().with_resource(_URI, Resource(contents=SPEC, specification=DRAFT202012))


def validator(name: str) -> Draft202012Validator:
    schema = {"$ref": f"{_URI}#/components/schemas/{name}"}
    return Draft202012Validator(schema, registry=_REGISTRY)


def check(name: str, value: Any) -> Any:
    """`value` when it is a valid `name` of the OpenAPI file, else the test fails."""
    errors = sorted(validator(name).iter_errors(value), key=lambda e: list(e.path))
    assert not errors, f"{name}: " + "; ".join(f"{list(e.path)}: {e.message}" for e in errors)
    return value


def response_schema(path: str, method: str, status: int) -> str:
    """The component the OpenAPI file names for this route's answer."""
    ref = SPEC["paths"][path][method]["responses"][str(status)]["content"]["application/json"]
    return str(ref["schema"]["$ref"]).rsplit("/", 1)[1]
