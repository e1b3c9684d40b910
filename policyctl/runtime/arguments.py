"""Arguments as a model sends them -> arguments a tool can take (nanobot's registry rules).

JSON-string arguments are parsed; a lone `{"arguments": {...}}` wrapper is unwrapped unless the
tool has an `arguments` parameter; anything but an object is refused (the JSON text `null`
included: only a call that sends no arguments at all gets `{}`); NaN and infinities are refused
anywhere in the arguments (a `timeout: NaN` never times out); strings are cast to integers,
numbers, booleans and null where the schema asks for them; then the schema is checked and every
error carries its dotted path (`items[2].name: expected integer`).

The schema keywords enforced: type (a name or a list), nullable, enum, const, minimum, maximum,
exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength, pattern, properties,
required, additionalProperties (false or a schema), minProperties, maxProperties, items,
minItems, maxItems, uniqueItems, anyOf, oneOf, allOf, not, and local $ref.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from .canonical import canonical_json
from .schema import MAX_SCHEMA_DEPTH, resolve_ref

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}
MAX_ERRORS = 20  # what a model reads back stays short


class ArgumentError(ValueError):
    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


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
    bad = non_finite(value)
    if bad is not None:
        raise ArgumentError([f"{bad or '(arguments)'}: NaN and infinities are not accepted"])
    root = {"type": "object", **schema} if "type" not in schema else schema
    cast = _cast(value, root, root, 0)
    errors = validate(cast, root, "", root)
    if errors:
        raise ArgumentError(errors[:MAX_ERRORS])
    return cast  # type: ignore[no-any-return]


def non_finite(value: Any) -> str | None:
    """The dotted path of the first NaN or infinity in a value, or None (iterative: any depth)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path
        if isinstance(item, dict):
            stack.extend((v, _join(path, str(k))) for k, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
    return None


def _kinds(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []
    if schema.get("nullable") is True and kinds and "null" not in kinds:
        kinds.append("null")
    return kinds


def _deref(schema: Any, root: dict[str, Any]) -> Any:
    for _ in range(MAX_SCHEMA_DEPTH):
        if not (isinstance(schema, dict) and "$ref" in schema):
            return schema
        schema = resolve_ref(schema["$ref"], root)
    return {"not": {}}  # a cycle of references: nothing validates


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
                if not validate(cast, branch, "", root, depth + 1):
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


_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def same(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1 (Python says it is)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def validate(
    value: Any, schema: Any, path: str = "", root: dict[str, Any] | None = None, depth: int = 0
) -> list[str]:
    """Every way `value` breaks `schema`, each with its dotted path."""
    where = path or "(arguments)"
    root = root if root is not None else schema if isinstance(schema, dict) else {}
    schema = _deref(schema, root)
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [f"{where}: not allowed"]
    if not isinstance(schema, dict):
        return []
    if depth > MAX_SCHEMA_DEPTH:
        return [f"{where}: nested too deeply"]
    kinds = _kinds(schema)
    if kinds and not any(_CHECKS[k](value) for k in kinds if k in _CHECKS):
        return [f"{where}: expected {' or '.join(kinds)}, got {_json_type(value)}"]
    errors: list[str] = []
    if "enum" in schema and not any(same(value, e) for e in schema["enum"]):
        errors.append(f"{where}: must be one of {', '.join(map(json.dumps, schema['enum']))}")
    if "const" in schema and not same(value, schema["const"]):
        errors.append(f"{where}: must be {json.dumps(schema['const'])}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        errors.extend(_number_errors(value, schema, where))
    if isinstance(value, str):
        errors.extend(_string_errors(value, schema, where))
    if isinstance(value, dict):
        errors.extend(_object_errors(value, schema, path, root, depth))
    if isinstance(value, list):
        errors.extend(_array_errors(value, schema, path, root, depth))
    errors.extend(_combinator_errors(value, schema, path, root, depth))
    return errors


def _number_errors(value: float, schema: dict[str, Any], where: str) -> list[str]:
    if isinstance(value, float) and not math.isfinite(value):
        return [f"{where}: NaN and infinities are not accepted"]
    errors = []
    if "minimum" in schema and not value >= schema["minimum"]:
        errors.append(f"{where}: must be >= {schema['minimum']}")
    if "maximum" in schema and not value <= schema["maximum"]:
        errors.append(f"{where}: must be <= {schema['maximum']}")
    if "exclusiveMinimum" in schema and not value > schema["exclusiveMinimum"]:
        errors.append(f"{where}: must be > {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and not value < schema["exclusiveMaximum"]:
        errors.append(f"{where}: must be < {schema['exclusiveMaximum']}")
    step = schema.get("multipleOf")
    if step and not _multiple(value, step):
        errors.append(f"{where}: must be a multiple of {step}")
    return errors


def _multiple(value: float, step: float) -> bool:
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0  # exact, whatever the size
    try:
        quotient = value / step
    except OverflowError:  # an integer beyond any float: no multiple a float step can check
        return False
    return math.isclose(quotient, round(quotient), abs_tol=1e-9)


def _string_errors(value: str, schema: dict[str, Any], where: str) -> list[str]:
    errors = []
    if "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(f"{where}: must have at least {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(f"{where}: must have at most {schema['maxLength']} characters")
    if "pattern" in schema and re.search(schema["pattern"], value) is None:
        errors.append(f"{where}: must match {schema['pattern']!r}")
    return errors


def _object_errors(
    value: dict[str, Any], schema: dict[str, Any], path: str, root: dict[str, Any], depth: int
) -> list[str]:
    errors = []
    where = path or "(arguments)"
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties", True)
    for name in schema.get("required") or ():
        if name not in value:
            errors.append(f"{_join(path, name)}: required")
    for name, item in value.items():
        if name in props:
            errors.extend(validate(item, props[name], _join(path, name), root, depth + 1))
        elif extra is False:
            errors.append(f"{_join(path, name)}: unknown parameter")
        elif isinstance(extra, dict):
            errors.extend(validate(item, extra, _join(path, name), root, depth + 1))
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        errors.append(f"{where}: must have at least {schema['minProperties']} entries")
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        errors.append(f"{where}: must have at most {schema['maxProperties']} entries")
    return errors


def _array_errors(
    value: list[Any], schema: dict[str, Any], path: str, root: dict[str, Any], depth: int
) -> list[str]:
    errors = []
    where = path or "(arguments)"
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(f"{where}: must have at least {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(f"{where}: must have at most {schema['maxItems']} items")
    if schema.get("uniqueItems") is True and len({canonical_json(v) for v in value}) < len(value):
        errors.append(f"{where}: items must be unique")
    items = schema.get("items")
    if isinstance(items, dict | bool):
        for i, item in enumerate(value):
            errors.extend(validate(item, items, f"{path}[{i}]", root, depth + 1))
            if len(errors) > MAX_ERRORS:
                break
    return errors


def _combinator_errors(
    value: Any, schema: dict[str, Any], path: str, root: dict[str, Any], depth: int
) -> list[str]:
    where = path or "(arguments)"
    errors = []
    for branch in schema.get("allOf") or ():
        errors.extend(validate(value, branch, path, root, depth + 1))
    if "anyOf" in schema and not any(
        not validate(value, b, path, root, depth + 1) for b in schema["anyOf"]
    ):
        errors.append(f"{where}: matches none of the allowed shapes")
    if "oneOf" in schema:
        matching = sum(1 for b in schema["oneOf"] if not validate(value, b, path, root, depth + 1))
        if matching != 1:
            errors.append(f"{where}: must match exactly one allowed shape, matches {matching}")
    if "not" in schema and not validate(value, schema["not"], path, root, depth + 1):
        errors.append(f"{where}: matches a shape that is not allowed")
    return errors


def _json_type(value: Any) -> str:
    for name, check in _CHECKS.items():
        if check(value):
            return name
    return type(value).__name__


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
