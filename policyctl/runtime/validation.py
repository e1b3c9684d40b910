"""Checking cast arguments against a tool's JSON Schema: every problem, located.

Each problem is an `ArgumentProblem`: where it is, as a JSON pointer (RFC 6901: `""` is the
arguments object, `/items/2/name` a nested value, `~0` and `~1` escape `~` and `/` in a key)
for programs, and dotted (`items[2].name`) for the model, which reads `str(problem)`; and what
is wrong. `check_arguments` returns them; `arguments.coerce_arguments` raises them on an
`ArgumentError`, and the registry hands them on in `CallError.problems`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from .canonical import canonical_json
from .schema import MAX_SCHEMA_DEPTH, resolve_ref

MAX_ERRORS = 20  # what a model reads back stays short


class Where(NamedTuple):
    """A place in the arguments: dotted (for the model) and as a JSON pointer."""

    dotted: str = ""
    pointer: str = ""

    def key(self, name: str) -> Where:
        escaped = name.replace("~", "~0").replace("/", "~1")
        return Where(f"{self.dotted}.{name}" if self.dotted else name, f"{self.pointer}/{escaped}")

    def item(self, i: int) -> Where:
        return Where(f"{self.dotted}[{i}]", f"{self.pointer}/{i}")

    @property
    def shown(self) -> str:
        return self.dotted or "(arguments)"


ROOT = Where()


class ArgumentProblem(NamedTuple):
    """One way the arguments break the schema: `path` (a JSON pointer), `message`, and
    `where`, the same place dotted as the model reads it (`str()` is `where: message`; an
    empty `where`, for arguments that are no JSON object at all, leaves the message alone)."""

    path: str
    message: str
    where: str = "(arguments)"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


def problem(at: Where, message: str) -> ArgumentProblem:
    return ArgumentProblem(at.pointer, message, at.shown)


def non_finite_at(value: Any) -> Where | None:
    """Where the first NaN or infinity in a value is, or None (iterative: any depth)."""
    stack: list[tuple[Any, Where]] = [(value, ROOT)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return at
        if isinstance(item, dict):
            stack.extend((v, at.key(str(k))) for k, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((v, at.item(i)) for i, v in enumerate(item))
    return None


def kinds_of(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []
    if schema.get("nullable") is True and kinds and "null" not in kinds:
        kinds.append("null")
    return kinds


def deref(schema: Any, root: dict[str, Any]) -> Any:
    for _ in range(MAX_SCHEMA_DEPTH):
        if not (isinstance(schema, dict) and "$ref" in schema):
            return schema
        schema = resolve_ref(schema["$ref"], root)
    return {"not": {}}  # a cycle of references: nothing validates


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


def check_arguments(value: Any, schema: Any) -> list[ArgumentProblem]:
    """Every way `value` breaks `schema` (no casting: see `arguments.cast_arguments`)."""
    root = schema if isinstance(schema, dict) else {}
    return problems(value, schema, ROOT, root, 0)


def problems(
    value: Any, schema: Any, at: Where, root: dict[str, Any], depth: int
) -> list[ArgumentProblem]:
    schema = deref(schema, root)
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [problem(at, "not allowed")]
    if not isinstance(schema, dict):
        return []
    if depth > MAX_SCHEMA_DEPTH:
        return [problem(at, "nested too deeply")]
    kinds = kinds_of(schema)
    if kinds and not any(_CHECKS[k](value) for k in kinds if k in _CHECKS):
        return [problem(at, f"expected {' or '.join(kinds)}, got {_json_type(value)}")]
    found: list[ArgumentProblem] = []
    if "enum" in schema and not any(same(value, e) for e in schema["enum"]):
        found.append(problem(at, f"must be one of {', '.join(map(json.dumps, schema['enum']))}"))
    if "const" in schema and not same(value, schema["const"]):
        found.append(problem(at, f"must be {json.dumps(schema['const'])}"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        found.extend(problem(at, m) for m in _number_errors(value, schema))
    if isinstance(value, str):
        found.extend(problem(at, m) for m in _string_errors(value, schema))
    if isinstance(value, dict):
        found.extend(_object_errors(value, schema, at, root, depth))
    if isinstance(value, list):
        found.extend(_array_errors(value, schema, at, root, depth))
    found.extend(_combinator_errors(value, schema, at, root, depth))
    return found


def _number_errors(value: float, schema: dict[str, Any]) -> list[str]:
    if isinstance(value, float) and not math.isfinite(value):
        return ["NaN and infinities are not accepted"]
    errors = []
    if "minimum" in schema and not value >= schema["minimum"]:
        errors.append(f"must be >= {schema['minimum']}")
    if "maximum" in schema and not value <= schema["maximum"]:
        errors.append(f"must be <= {schema['maximum']}")
    if "exclusiveMinimum" in schema and not value > schema["exclusiveMinimum"]:
        errors.append(f"must be > {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and not value < schema["exclusiveMaximum"]:
        errors.append(f"must be < {schema['exclusiveMaximum']}")
    step = schema.get("multipleOf")
    if step and not _multiple(value, step):
        errors.append(f"must be a multiple of {step}")
    return errors


def _multiple(value: float, step: float) -> bool:
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0  # exact, whatever the size
    try:
        quotient = value / step
    except OverflowError:  # an integer beyond any float: no multiple a float step can check
        return False
    return math.isclose(quotient, round(quotient), abs_tol=1e-9)


def _string_errors(value: str, schema: dict[str, Any]) -> list[str]:
    errors = []
    if "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(f"must have at least {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(f"must have at most {schema['maxLength']} characters")
    if "pattern" in schema and re.search(schema["pattern"], value) is None:
        errors.append(f"must match {schema['pattern']!r}")
    return errors


def _object_errors(
    value: dict[str, Any], schema: dict[str, Any], at: Where, root: dict[str, Any], depth: int
) -> list[ArgumentProblem]:
    found = []
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties", True)
    for name in schema.get("required") or ():
        if name not in value:
            found.append(problem(at.key(name), "required"))
    for name, item in value.items():
        if name in props:
            found.extend(problems(item, props[name], at.key(name), root, depth + 1))
        elif extra is False:
            found.append(problem(at.key(name), "unknown parameter"))
        elif isinstance(extra, dict):
            found.extend(problems(item, extra, at.key(name), root, depth + 1))
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        found.append(problem(at, f"must have at least {schema['minProperties']} entries"))
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        found.append(problem(at, f"must have at most {schema['maxProperties']} entries"))
    return found


def _array_errors(
    value: list[Any], schema: dict[str, Any], at: Where, root: dict[str, Any], depth: int
) -> list[ArgumentProblem]:
    found = []
    if "minItems" in schema and len(value) < schema["minItems"]:
        found.append(problem(at, f"must have at least {schema['minItems']} items"))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        found.append(problem(at, f"must have at most {schema['maxItems']} items"))
    if schema.get("uniqueItems") is True and len({canonical_json(v) for v in value}) < len(value):
        found.append(problem(at, "items must be unique"))
    items = schema.get("items")
    if isinstance(items, dict | bool):
        for i, item in enumerate(value):
            found.extend(problems(item, items, at.item(i), root, depth + 1))
            if len(found) > MAX_ERRORS:
                break
    return found


def _combinator_errors(
    value: Any, schema: dict[str, Any], at: Where, root: dict[str, Any], depth: int
) -> list[ArgumentProblem]:
    found = []
    for branch in schema.get("allOf") or ():
        found.extend(problems(value, branch, at, root, depth + 1))
    if "anyOf" in schema and not any(
        not problems(value, b, at, root, depth + 1) for b in schema["anyOf"]
    ):
        found.append(problem(at, "matches none of the allowed shapes"))
    if "oneOf" in schema:
        matching = sum(1 for b in schema["oneOf"] if not problems(value, b, at, root, depth + 1))
        if matching != 1:
            found.append(problem(at, f"must match exactly one allowed shape, matches {matching}"))
    if "not" in schema and not problems(value, schema["not"], at, root, depth + 1):
        found.append(problem(at, "matches a shape that is not allowed"))
    return found


def _json_type(value: Any) -> str:
    for name, check in _CHECKS.items():
        if check(value):
            return name
    return type(value).__name__
