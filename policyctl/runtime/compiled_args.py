"""A tool's fast argument acceptor, built once when the tool is made (`RuntimeTool.accept`).

Most tool schemas are flat: an object whose properties are typed scalars, a `required` list and
`additionalProperties` true or false. For those, the acceptor is a closure over precomputed
tables (each property's kinds and type checks, the required names) that casts and checks a call
in one pass over its arguments. It only ever *accepts*: for any call it is not certain about (a
nested value, a missing required name, a value of the wrong type, a lone `arguments` wrapper, a
NaN) it returns None and `coerce_arguments` runs the general cast and check, which decides and
words every error. So the answers are those of the general path on the same schema, only
faster for the common call. Any other schema has no acceptor.

The tables are built from the schema `check_tool_schema` checked and copied: like those checks,
they are fixed when the tool is made.
"""

from __future__ import annotations

import math
from typing import Any

from .arguments import Acceptor, _cast_scalar
from .validation import kinds_of as _kinds

# keywords that only describe: they never change what validates
_DESCRIPTIVE = frozenset(
    {"description", "title", "default", "format", "examples", "deprecated", "$comment", "$schema"}
)
_ROOT_KEYS = _DESCRIPTIVE | {"type", "properties", "required", "additionalProperties"}
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})  # exact types: no subclasses
# the exact Python types of the scalars each JSON type takes (true is not an integer)
_TYPES_OF: dict[str, frozenset[type]] = {
    "string": frozenset({str}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
    "null": frozenset({type(None)}),
}

# per property: (kinds, whether a string is cast, whether a float is cast to int, the exact
# types it takes, None for any)
_Prop = tuple[list[str], bool, bool, frozenset[type] | None]


def compile_acceptor(schema: dict[str, Any]) -> Acceptor | None:
    """The acceptor of one (`check_tool_schema`-checked) parameter schema; None if not flat."""
    props = _flat_properties(schema)
    if props is None:
        return None
    required = tuple(schema.get("required") or ())
    closed = schema.get("additionalProperties", True) is False
    unwrappable = "arguments" not in props

    def accept(value: dict[str, Any]) -> dict[str, Any] | None:
        if unwrappable and len(value) == 1 and "arguments" in value:
            return None
        out: dict[str, Any] = {}
        for key, item in value.items():
            kind = type(item)
            if kind not in _SCALAR_TYPES or (kind is float and not math.isfinite(item)):
                return None
            prop = props.get(key)
            if prop is None:
                if closed:
                    return None
                out[key] = item
                continue
            kinds, cast_text, cast_float, takes = prop
            if cast_text and kind is str:
                item = _cast_scalar(item, kinds)
            elif cast_float and kind is float:
                item = int(item) if item.is_integer() else item
            if takes is not None and type(item) not in takes:
                return None
            out[key] = item
        for name in required:
            if name not in out:
                return None
        return out

    return accept


def _flat_properties(schema: dict[str, Any]) -> dict[str, _Prop] | None:
    """Each property's precomputed casting and checks, or None for a schema that is not flat."""
    extra = schema.get("additionalProperties")
    if not set(schema) <= _ROOT_KEYS or not (extra is None or isinstance(extra, bool)):
        return None
    out: dict[str, _Prop] = {}
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, dict) or not set(sub) <= _DESCRIPTIVE | {"type", "nullable"}:
            return None
        kinds = _kinds(sub)
        if not set(kinds) <= set(_TYPES_OF) or ("type" in sub and not kinds):
            return None
        takes = frozenset().union(*(_TYPES_OF[k] for k in kinds)) if kinds else None
        cast_text = bool(kinds) and "string" not in kinds
        cast_float = "integer" in kinds and "number" not in kinds
        out[name] = (kinds, cast_text, cast_float, takes)
    return out
