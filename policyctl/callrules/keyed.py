"""`name(key=glob, ...)`: specifiers over a call's arguments, for every tool.

Every listed key must match; dotted keys reach nested objects (`data.repo=acme/*`, a number
segment indexes a list). Values are compared as JSON scalars rendered to text (`true`,
`null`, `3`), with the name-glob rules: `*` only, crossing `/`. A value may be written in
double quotes to hold commas or spaces. A missing key never matches.

Deny and ask rules compare case-insensitively and also meet a value that is an object or a
list (fail closed: `ACME/Secret` is `acme/secret` to many services); allow rules compare
exactly and never admit a non-scalar value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..names import Glob
from .model import Matcher, SpecifierError, SpecifierProblem

if TYPE_CHECKING:
    from .values import Part

KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*")
LOOKS_KEYED = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*\s*=")
_MISSING = object()
_NOT_SCALAR = object()


def looks_keyed(spec: str) -> bool:
    return LOOKS_KEYED.match(spec) is not None


@dataclass(frozen=True, slots=True)
class KeyCondition:
    key: str
    path: tuple[str, ...]
    exact: Glob
    folded: Glob


@dataclass(frozen=True, slots=True)
class KeyedMatcher(Matcher):
    text: str
    conditions: tuple[KeyCondition, ...]
    judges_unanalysable = True

    def matches(self, part: Part, strict: bool) -> bool:
        for cond in self.conditions:
            found = lookup(part.args, cond.path)
            if found is _MISSING and len(cond.path) > 1 and cond.key in part.args:
                found = part.args[cond.key]  # a key that itself holds dots
            value = scalar_text(found)
            if value is _MISSING:
                return False
            if value is _NOT_SCALAR:
                if strict:
                    return False
                continue
            assert isinstance(value, str)
            if strict:
                if not cond.exact.matches(value):
                    return False
            elif not cond.folded.matches(value.casefold()):
                return False
        return True

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.conditions)


def lookup(args: Mapping[str, Any], path: tuple[str, ...]) -> object:
    current: object = args
    for segment in path:
        if isinstance(current, Mapping):
            if segment not in current:
                return _MISSING
            current = current[segment]
        elif isinstance(current, list) and segment.isdigit() and int(segment) < len(current):
            current = current[int(segment)]
        else:
            return _MISSING
    return current


def scalar_text(value: object) -> object:
    if value is _MISSING:
        return _MISSING
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    return _NOT_SCALAR


def parse_keyed(spec: str, entry: str, offset: int) -> KeyedMatcher:
    def fail(message: str, at: int, fix: str | None = None) -> KeyedMatcher:
        raise SpecifierError(SpecifierProblem("PC354", message, entry, offset + at, fix))

    conditions: list[KeyCondition] = []
    seen: set[str] = set()
    i, n = 0, len(spec)
    while i < n:
        while i < n and spec[i] in " \t":
            i += 1
        start = i
        eq = spec.find("=", i)
        if eq < 0:
            return fail("expected key=glob", start, "write name(key=glob, ...)")
        key = spec[i:eq].strip()
        if not KEY.fullmatch(key):
            return fail(f'"{key}" is not a key (letters, digits, _ and -, dotted)', start)
        if key in seen:
            return fail(f'key "{key}" is listed twice', start)
        seen.add(key)
        i = eq + 1
        while i < n and spec[i] in " \t":
            i += 1
        if i < n and spec[i] == '"':
            j, chars = i + 1, []
            while j < n and spec[j] != '"':
                if spec[j] == "\\" and j + 1 < n:
                    j += 1
                chars.append(spec[j])
                j += 1
            if j >= n:
                return fail("unterminated double quote", i, "close the quote")
            value = "".join(chars)
            i = j + 1
            while i < n and spec[i] in " \t":
                i += 1
            if i < n and spec[i] != ",":
                return fail("expected , after a quoted value", i)
        else:
            comma = spec.find(",", i)
            end = n if comma < 0 else comma
            value = spec[i:end].strip()
            i = end
        if not value:
            return fail(f'key "{key}" has an empty value', start, f'use {key}=* for "any value"')
        conditions.append(
            KeyCondition(
                key, tuple(key.split(".")), Glob.compile(value), Glob.compile(value.casefold())
            )
        )
        if i < n and spec[i] == ",":
            i += 1
            if not spec[i:].strip():
                return fail("a trailing comma", i - 1)
    if not conditions:
        return fail("empty specifier", 0, 'use "tool" or "tool(*)"')
    return KeyedMatcher(spec.strip(), tuple(conditions))
