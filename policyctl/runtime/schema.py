"""The JSON Schema a tool declares: checked once when the tool is made, then kept private.

`@tool` functions and MCP servers declare their parameters as JSON Schema. The runtime casts and
validates every call against it (`arguments.py`), so a schema it cannot honour must be refused
when the tool is built, not discovered when a model's call slips past a keyword nobody checks.
The root must be an object schema (or have no `type`: then it is taken as one); the keywords the
validator implements must be well formed; a `$ref` must point inside the schema. Keywords that
only describe (`description`, `title`, `default`, `format`, `examples`, ...) are ignored, as
JSON Schema says. The schema is deep-copied on the way in, so the caller's dict and the tool's
stay independent.
"""

from __future__ import annotations

import copy
import math
import re
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")
MAX_SCHEMA_DEPTH = 64

_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf")
_SCHEMA_VALUES = ("items", "additionalProperties", "not")
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")


class SchemaError(ValueError):
    """A tool's parameter schema that the runtime cannot enforce."""


def resolve_ref(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    """A local JSON pointer (`#/$defs/Item`) -> the schema it names."""
    if not ref.startswith("#"):
        raise SchemaError(f"$ref {ref!r}: only references inside the schema (#/...) are supported")
    node: Any = root
    for part in ref[1:].split("/")[1:] if ref != "#" else ():
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise SchemaError(f"$ref {ref!r}: nothing at that path")
        node = node[part]
    if not isinstance(node, dict):
        raise SchemaError(f"$ref {ref!r}: does not name a schema")
    return node


def check_tool_schema(tool: str, schema: Any) -> dict[str, Any]:
    """A private, checked copy of a tool's parameter schema (SchemaError when unusable)."""
    if not isinstance(schema, dict):
        raise SchemaError(f"tool {tool!r}: parameters must be a JSON Schema object")
    own = copy.deepcopy(schema)
    kind = own.get("type", "object")
    if kind != "object" and kind != ["object"]:
        raise SchemaError(
            f"tool {tool!r}: parameters must be an object schema (type: object), got type {kind!r}"
        )
    _check(own, own, f"tool {tool!r}: parameters", 0)
    return own


def _check(schema: Any, root: dict[str, Any], where: str, depth: int) -> None:
    if isinstance(schema, bool):
        return  # true / false are valid schemas
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object, got {type(schema).__name__}")
    if depth > MAX_SCHEMA_DEPTH:
        raise SchemaError(f"{where}: nested deeper than {MAX_SCHEMA_DEPTH} levels")
    if "$ref" in schema:
        ref = schema["$ref"]
        if not isinstance(ref, str):
            raise SchemaError(f"{where}.$ref: must be a string")
        try:
            resolve_ref(ref, root)
        except SchemaError as exc:
            raise SchemaError(f"{where}: {exc}") from None
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else None
    if kind is not None and (kinds is None or not kinds or any(k not in JSON_TYPES for k in kinds)):
        raise SchemaError(f"{where}.type: {kind!r} is not a JSON type ({', '.join(JSON_TYPES)})")
    for key in _NUMBERS:
        value = schema.get(key)
        if key in schema and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise SchemaError(f"{where}.{key}: must be a finite number")
    for key in _COUNTS:
        value = schema.get(key)
        if key in schema and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise SchemaError(f"{where}.{key}: must be a whole number >= 0")
    if "pattern" in schema:
        try:
            re.compile(schema["pattern"])
        except (re.error, TypeError) as exc:
            raise SchemaError(f"{where}.pattern: not a regular expression ({exc})") from None
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        raise SchemaError(f"{where}.enum: must be a non-empty list")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise SchemaError(f"{where}.required: must be a list of names")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise SchemaError(f"{where}.properties: must be an object")
    for name, sub in props.items():
        _check(sub, root, f"{where}.properties.{name}", depth + 1)
    for key in _SCHEMA_VALUES:
        if key in schema:
            _check(schema[key], root, f"{where}.{key}", depth + 1)
    for key in _SCHEMA_LISTS:
        if key in schema:
            if not isinstance(schema[key], list) or not schema[key]:
                raise SchemaError(f"{where}.{key}: must be a non-empty list of schemas")
            for i, sub in enumerate(schema[key]):
                _check(sub, root, f"{where}.{key}[{i}]", depth + 1)
    for key in ("$defs", "definitions"):
        for name, sub in (schema.get(key) or {}).items():
            _check(sub, root, f"{where}.{key}.{name}", depth + 1)


# -- Python annotations -> JSON Schema (for @tool) --------------------------------------------

_SIMPLE: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    tuple: "array",
    dict: "object",
    type(None): "null",
}


def schema_for_annotation(annotation: Any, where: str) -> dict[str, Any]:
    """The schema of one parameter's type hint; TypeError for a hint JSON cannot carry."""
    if annotation is Any or annotation is object:
        return {}
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is typing.Annotated:
        return schema_for_annotation(args[0], where)
    if origin is Union or origin is types.UnionType:
        parts = [schema_for_annotation(a, where) for a in args]
        if all(set(p) == {"type"} and isinstance(p["type"], str) for p in parts):
            return {"type": list(dict.fromkeys(p["type"] for p in parts))}
        return {"anyOf": parts}
    if origin is Literal:
        out: dict[str, Any] = {"enum": list(args)}
        kinds = {_SIMPLE.get(type(a)) for a in args}
        if len(kinds) == 1 and None not in kinds:
            out["type"] = kinds.pop()
        return out
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
        items = [a for a in args if a is not Ellipsis]
        out = {"type": "array"}
        if len(items) == 1:
            out["items"] = schema_for_annotation(items[0], where)
        return out
    if origin is dict:
        out = {"type": "object"}
        if len(args) == 2:
            out["additionalProperties"] = schema_for_annotation(args[1], where)
        return out
    kind = _SIMPLE.get(annotation)
    if kind is None:
        raise TypeError(
            f"{where}: type {annotation!r} has no JSON Schema; use str, int, float, bool, "
            "list[...], dict[str, ...], Literal[...], Optional[...], or pass parameters=..."
        )
    return {"type": kind}
