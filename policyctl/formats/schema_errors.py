"""Validate: pydantic's errors -> located diagnostics with a fix where one is known."""

from __future__ import annotations

from collections.abc import Iterable
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from ..diagnostics import Diagnostic, suggestion
from ..located import LocationIndex, format_path

_TYPE_NAMES = {
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "bool_type": "true or false",
    "int_type": "an integer",
}


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f'the string "{value}"'
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def keys_at(model: type[BaseModel], path: tuple[Any, ...]) -> list[str]:
    """The keys a mapping at `path` accepts, found by walking the model's annotations."""
    current: Any = model
    for part in path:
        current = _unwrap(current)
        if get_origin(current) in (Union, UnionType):
            # a union of models (test-file invariants): the member that has this key
            current = next(
                (
                    m
                    for m in get_args(current)
                    if isinstance(m, type)
                    and issubclass(m, BaseModel)
                    and any((f.alias or n) == part for n, f in m.model_fields.items())
                ),
                current,
            )
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = next(
                (f for name, f in current.model_fields.items() if (f.alias or name) == part), None
            )
            if field is None:
                return []
            current = field.annotation
        elif get_origin(current) is dict:
            current = get_args(current)[1]
        elif get_origin(current) is list:
            current = get_args(current)[0]
        else:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [f.alias or name for name, f in current.model_fields.items()]
    return []


def _unwrap(tp: Any) -> Any:
    """`X | None` -> X."""
    if get_origin(tp) in (Union, UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def diagnostics_from_validation(
    exc: ValidationError,
    index: LocationIndex,
    *,
    code_for_extra: str = "PC201",
    model: type[BaseModel] | None = None,
    extra_keys: Iterable[str] = (),
    data: Any = None,
) -> list[Diagnostic]:
    """One diagnostic per distinct problem, located at the key or value that caused it.

    `data` (what was validated) tells the steps of an error's location that are real keys
    and indexes from those pydantic adds for union members (`NeverInvariant`, `str`): a
    policy may well have a key named `bool`."""
    out: list[Diagnostic] = []
    seen: set[tuple[str, tuple[Any, ...]]] = set()
    errors = exc.errors()
    if data is not None:
        errors = _best_union_members(errors, data)
    for err in errors:
        # Union members each report the same spot; keep the first report per path and kind.
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        kind = err["type"]
        path = (
            _real_path(loc, data, keep_last=kind == "missing")
            if data is not None
            else tuple(p for p in loc if not _is_union_tag(p))
        )
        marker = (kind if kind in ("extra_forbidden", "missing") else "type", path)
        if marker in seen or any(s[1] == path for s in seen):
            continue
        seen.add(marker)
        shown = format_path(path)
        if kind == "extra_forbidden" and path:
            key = str(path[-1])
            known = [
                *(keys_at(model, path[:-1]) if model else []),
                *(extra_keys if len(path) == 1 else []),
            ]
            out.append(
                Diagnostic.make(
                    code_for_extra,
                    f'unknown key "{key}" in {format_path(path[:-1]) or "the top level"}',
                    index.key(path),
                    shown,
                    suggestion(key, known),
                )
            )
        elif kind == "missing" and path:
            out.append(
                Diagnostic.make(
                    "PC204",
                    f'missing key "{path[-1]}" in {format_path(path[:-1])}',
                    index.value(path[:-1]),
                    shown,
                )
            )
        elif kind in ("literal_error", "enum"):
            expected = err.get("ctx", {}).get("expected", "")
            out.append(
                Diagnostic.make(
                    "PC203",
                    f"{shown}: {_describe(err.get('input'))} is not allowed; expected {expected}",
                    index.value(path),
                    shown,
                )
            )
        elif kind.startswith(("greater_than", "less_than")):
            out.append(
                Diagnostic.make("PC203", f"{shown}: {err['msg'].lower()}", index.value(path), shown)
            )
        else:
            wanted = _TYPE_NAMES.get(kind, err["msg"].lower().removeprefix("input should be "))
            out.append(
                Diagnostic.make(
                    "PC202",
                    f"{shown}: expected {wanted}, got {_describe(err.get('input'))}",
                    index.value(path),
                    shown,
                )
            )
    return out


def error_path(err: Any, data: Any) -> tuple[Any, ...]:
    """The path in `data` that holds the problem of one pydantic error: the unknown key, the
    value of the wrong type, or the mapping that lacks a required key."""
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    return _real_path(loc, data, keep_last=False)


def _walk(loc: tuple[Any, ...], data: Any, keep_last: bool) -> tuple[list[Any], list[Any]]:
    """Split an error location into the real path through `data` and the union tags pydantic
    inserted, each tag with the real path it was tried at."""
    real: list[Any] = []
    tags: list[Any] = []
    node = data
    for i, part in enumerate(loc):
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            real.append(part)
            node = node[part]
        elif keep_last and i == len(loc) - 1:
            real.append(part)
        else:
            tags.append((tuple(real), part))
    return real, tags


def _best_union_members(errors: list[Any], data: Any) -> list[Any]:
    """Where a value matched no member of a union, report only the members it was meant as.

    A member the value does not fit at all shows it at the value itself: unknown or missing
    keys right there, or a wrong type. `{never: {unless: {ownr: true}}}` fails as a `never`
    invariant deep inside (`ownr`) but as a `subagentSubsetOfParent` invariant at its own
    keys; only the first is what the author meant. Members tie -> all are kept."""
    shallow: dict[tuple[Any, ...], dict[Any, int]] = {}
    walked = []
    for err in errors:
        kind = err["type"]
        real, tags = _walk(tuple(err["loc"]), data, keep_last=kind == "missing")
        walked.append(tags)
        for prefix, tag in tags:
            depth = len(real) - len(prefix)
            near = depth == 0 or (depth == 1 and kind in ("extra_forbidden", "missing"))
            counts = shallow.setdefault(prefix, {})
            counts[tag] = counts.get(tag, 0) + near
    best = {
        prefix: {t for t, n in counts.items() if n == min(counts.values())}
        for prefix, counts in shallow.items()
        if len(set(counts.values())) > 1
    }
    return [
        err
        for err, tags in zip(errors, walked, strict=True)
        if all(tag in best.get(prefix, (tag,)) for prefix, tag in tags)
    ]


def _real_path(loc: tuple[Any, ...], data: Any, keep_last: bool) -> tuple[Any, ...]:
    """The error location without pydantic's union tags (a missing key, by definition not in
    the data, is kept when `keep_last`)."""
    return tuple(_walk(loc, data, keep_last)[0])


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and (
        part.startswith(("list[", "dict[", "nullable[")) or part in ("str", "int", "bool", "none")
    )
