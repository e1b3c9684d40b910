"""Arguments as a model sends them -> arguments a tool can take (nanobot's registry rules).

JSON-string arguments are parsed; a lone `{"arguments": {...}}` wrapper is unwrapped unless the
tool has an `arguments` parameter; anything but an object is refused (the JSON text `null`
included: only a call that sends no arguments at all gets `{}`); NaN and infinities are refused
anywhere in the arguments (a `timeout: NaN` never times out); strings are cast to integers,
numbers, booleans and null where the schema asks for them (`cast_arguments`); then the schema is
checked (`validation.check_arguments`) and every problem is located: a JSON pointer for programs
(`ArgumentError.problems`, `CallError.problems`) and a dotted path for the model
(`items[2].name: expected integer`).

The schema keywords enforced: type (a name or a list), nullable, enum, const, minimum, maximum,
exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength, pattern, properties,
required, additionalProperties (false or a schema), minProperties, maxProperties, items,
minItems, maxItems, uniqueItems, anyOf, oneOf, allOf, not, and local $ref.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from .schema import MAX_SCHEMA_DEPTH
from .validation import (
    MAX_ERRORS,
    ROOT,
    ArgumentProblem,
    check_arguments,
    non_finite_at,
    problem,
    problems,
)
from .validation import deref as _deref
from .validation import kinds_of as _kinds

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}
__all__ = [
    "MAX_ERRORS",
    "Acceptor",
    "ArgumentError",
    "ArgumentProblem",
    "cast_arguments",
    "check_arguments",
    "coerce_arguments",
    "non_finite",
    "parse_arguments",
    "validate",
]


class ArgumentError(ValueError):
    """Arguments a tool cannot take: `problems`, each located (a JSON pointer and a message);
    `errors`, the same as the model reads them (`items[2].name: expected integer`)."""

    def __init__(self, found: Sequence[ArgumentProblem | str]):
        self.problems = tuple(
            p if isinstance(p, ArgumentProblem) else ArgumentProblem("", p, "") for p in found
        )
        self.errors = [str(p) for p in self.problems]
        super().__init__("; ".join(self.errors))


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows here")


# made once: `json.loads(text, parse_constant=...)` builds a new decoder on every call
_DECODER = json.JSONDecoder(parse_constant=_no_constants)


def parse_arguments(raw: Any) -> Any:
    """The arguments a provider sent -> a Python value (not yet checked against a schema)."""
    if raw is None:
        return {}  # the call sent no arguments at all
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if not text:
        return {}
    try:
        if text.startswith("\ufeff"):  # what json.loads refuses before decoding
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise ArgumentError([f"arguments are not valid JSON: {exc.msg}"]) from None
    except (ValueError, RecursionError) as exc:  # NaN, Infinity, 5,000-digit ints, deep nesting
        raise ArgumentError([f"arguments are not usable JSON: {exc}"]) from None


# a tool's precompiled fast path (`compiled_args.py`): the cast arguments, or None when only the
# general cast and check below can decide
Acceptor = Callable[[dict[str, Any]], "dict[str, Any] | None"]


def coerce_arguments(
    raw: Any, schema: dict[str, Any], *, unwrap: bool = True, accept: Acceptor | None = None
) -> dict[str, Any]:
    """`raw` parsed, cast and checked against `schema` (ArgumentError with every problem).
    `accept`, the acceptor compiled from this same schema, may short-cut a call it accepts."""
    value = parse_arguments(raw)
    if accept is not None and type(value) is dict:
        accepted = accept(value)
        if accepted is not None:
            return accepted
    if not isinstance(value, dict):
        kind = "null" if value is None else type(value).__name__
        raise ArgumentError([f"arguments must be a JSON object, got {kind}"])
    props = schema.get("properties") or {}
    if (
        unwrap
        and set(value) == {"arguments"}
        and "arguments" not in props
        and isinstance(value["arguments"], dict | str)
    ):
        return coerce_arguments(value["arguments"], schema, unwrap=False)  # one wrapper, not n
    bad = non_finite_at(value)
    if bad is not None:
        raise ArgumentError([problem(bad, "NaN and infinities are not accepted")])
    root = {"type": "object", **schema} if "type" not in schema else schema
    cast = _cast(value, root, root, 0)
    found = problems(cast, root, ROOT, root, 0)
    if found:
        raise ArgumentError(found[:MAX_ERRORS])
    return cast  # type: ignore[no-any-return]


def cast_arguments(value: Any, schema: dict[str, Any]) -> Any:
    """`value` with the strings the schema does not take as strings cast to the integers,
    numbers, booleans or nulls it asks for (`"5"` for an integer is 5); nothing is checked:
    `check_arguments` says what still breaks the schema."""
    return _cast(value, schema, schema, 0)


def non_finite(value: Any) -> str | None:
    """The dotted path of the first NaN or infinity in a value, or None (iterative: any depth)."""
    at = non_finite_at(value)
    return None if at is None else at.dotted


def validate(value: Any, schema: Any, root: dict[str, Any] | None = None) -> list[str]:
    """Every way `value` breaks `schema`, as the model reads them (`check_arguments` gives
    them located)."""
    base = root if root is not None else schema if isinstance(schema, dict) else {}
    return [str(p) for p in problems(value, schema, ROOT, base, 0)]


def _cast_scalar(text: str, kinds: list[str]) -> Any:
    """A string the schema does not take as a string -> the first kind it parses as."""
    stripped = text.strip()
    for kind in kinds:
        if kind == "integer":
            try:
                return int(stripped)
            except ValueError:
                continue
        if kind == "number":
            try:
                number = float(stripped) if any(c in stripped for c in ".eE") else int(stripped)
            except ValueError:
                continue
            if isinstance(number, int) or math.isfinite(number):
                return number
        if kind == "boolean" and stripped.lower() in _TRUE | _FALSE:
            return stripped.lower() in _TRUE
        if kind == "null" and stripped.lower() in ("null", "none", ""):
            return None
    return text


def _cast(value: Any, schema: Any, root: dict[str, Any], depth: int) -> Any:
    schema = _deref(schema, root)
    if not isinstance(schema, dict) or depth > MAX_SCHEMA_DEPTH:
        return value
    for key in ("anyOf", "oneOf"):
        if key in schema:
            for branch in schema[key]:
                cast = _cast(value, branch, root, depth + 1)
                if not problems(cast, branch, ROOT, root, depth + 1):
                    return cast
    for branch in schema.get("allOf") or ():
        value = _cast(value, branch, root, depth + 1)
    kinds = _kinds(schema)
    if isinstance(value, str) and kinds and "string" not in kinds:
        return _cast_scalar(value, kinds)
    if isinstance(value, float) and "integer" in kinds and "number" not in kinds:
        return int(value) if value.is_integer() else value
    if isinstance(value, dict) and (not kinds or "object" in kinds):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        return {
            k: _cast(v, props[k], root, depth + 1)
            if k in props
            else _cast(v, extra, root, depth + 1)
            if isinstance(extra, dict)
            else v
            for k, v in value.items()
        }
    if isinstance(value, list) and (not kinds or "array" in kinds):
        items = schema.get("items")
        if isinstance(items, dict):
            return [_cast(v, items, root, depth + 1) for v in value]
    return value
