"""Arguments as a model sends them -> arguments a tool can take (nanobot's registry rules).

JSON-string arguments are parsed; a lone `{"arguments": {...}}` wrapper is unwrapped unless the
tool has an `arguments` parameter; non-objects are refused; strings are cast to integers,
numbers and booleans where the schema asks for them; then the schema is checked and every
error carries its dotted path (`items[2].name: expected an integer`).
"""

from __future__ import annotations

import json
from typing import Any

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


class ArgumentError(ValueError):
    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def coerce_arguments(raw: Any, schema: dict[str, Any]) -> dict[str, Any]:
    value = raw
    if isinstance(value, str):
        text = value.strip()
        if not text:
            value = {}
        else:
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ArgumentError([f"arguments are not valid JSON: {exc.msg}"]) from None
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise ArgumentError([f"arguments must be a JSON object, got {type(value).__name__}"])
    props = schema.get("properties") or {}
    if (
        set(value) == {"arguments"}
        and "arguments" not in props
        and isinstance(value["arguments"], dict | str)
    ):
        return coerce_arguments(value["arguments"], schema)
    cast = _cast(value, schema)
    errors = validate(cast, schema)
    if errors:
        raise ArgumentError(errors)
    return cast  # type: ignore[no-any-return]


def _cast(value: Any, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if isinstance(value, str):
        text = value.strip()
        if kind == "integer":
            try:
                return int(text)
            except ValueError:
                return value
        if kind == "number":
            try:
                return float(text) if any(c in text for c in ".eE") else int(text)
            except ValueError:
                return value
        if kind == "boolean":
            if text.lower() in _TRUE:
                return True
            if text.lower() in _FALSE:
                return False
        return value
    if kind == "object" and isinstance(value, dict):
        props = schema.get("properties") or {}
        return {k: _cast(v, props[k]) if k in props else v for k, v in value.items()}
    if kind == "array" and isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_cast(v, schema["items"]) for v in value]
    return value


_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def validate(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """The JSON Schema subset tool parameters use: type, properties, required,
    additionalProperties, items, enum, minimum, maximum, minLength, maxLength."""
    where = path or "(arguments)"
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if kinds and not any(_CHECKS.get(k, lambda _: True)(value) for k in kinds):
        return [f"{where}: expected {' or '.join(kinds)}, got {type(value).__name__}"]
    errors: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: must be one of {', '.join(map(repr, schema['enum']))}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where}: must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where}: must be <= {schema['maximum']}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(f"{where}: must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{where}: must have at most {schema['maxLength']} characters")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name in schema.get("required") or ():
            if name not in value:
                errors.append(f"{_join(path, name)}: required")
        for name, item in value.items():
            if name in props:
                errors.extend(validate(item, props[name], _join(path, name)))
            elif schema.get("additionalProperties") is False:
                errors.append(f"{_join(path, name)}: unknown parameter")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors.extend(validate(item, schema["items"], f"{path}[{i}]" if path else f"[{i}]"))
    return errors


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
