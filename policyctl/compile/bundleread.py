"""Reading a bundle file: as a policy file is read, and fast enough at the size caps.

A bundle is read like a policy file (`formats.read.read_text`: a regular file only, a hard byte cap,
UTF-8) under larger caps (`bundle_limits`: it carries the location of every value). The
located JSON reader (`jsonpos`) costs about 3 us a value, so a bundle at its node cap would
take most of a minute; a bundle needs no locations to be used (it carries its own), so it is
parsed by the standard library's C parser and then checked for exactly what the located
reader refuses: duplicate keys, NaN and infinities, lone UTF-16 surrogates, the depth and
node caps. Only a file that fails a check, or a shape check later, is read again by the
located reader to say where, and only when it is small (`LOCATE_CHARS`); a larger one gets
the reason at its first line, or the JSON parser's own line and column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, PolicyError, Source
from ..formats.jsonpos import parse_json
from ..formats.read import read_text
from ..located import LocationIndex, flatten
from ..settings import Limits, default_limits

FORMAT = "policyctl-bundle/1"
#: the largest bundle (in characters) read a second time, by the located reader, to place an
#: error: about half a million values, a second or two
LOCATE_CHARS = 1024 * 1024
#: an escape that may stand for half of a UTF-16 surrogate pair
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def bundle_limits() -> Limits:
    """A bundle carries the location of every value: it may be larger than a policy file."""
    base = default_limits()
    return replace(base, max_file_bytes=base.max_file_bytes * 8, max_nodes=base.max_nodes * 8)


def bundle_error(path: str, message: str, src: Source | None = None) -> PolicyError:
    return PolicyError([Diagnostic.make("PC416", message, src or Source(path, 1, 1))])


class _Refused(Exception):
    def __init__(self, message: str, source: Source | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.source = source


def read_bundle(
    path: str | Path, text: str | None = None
) -> tuple[str, dict[str, Any], Callable[[], LocationIndex]]:
    """A bundle file's text, its data, and a function giving the location of its values (for
    errors only: empty for a file larger than `LOCATE_CHARS`). Every command that reads a
    bundle reads it here (`load_bundle`, `compile --check`); PC112, PC106, PC102 and PC416
    are located diagnostics."""
    shown = str(path)
    limits = bundle_limits()
    if text is None:
        text = read_text(Path(path), limits, shown)
    try:
        data = _parse(text, shown, limits)
    except _Refused as refused:
        if len(text) <= LOCATE_CHARS:
            _located(text, shown, limits)  # raises with the located reader's diagnostic
        raise bundle_error(shown, f"not a bundle: {refused.message}", refused.source) from None

    def locate() -> LocationIndex:
        if len(text) > LOCATE_CHARS:
            return LocationIndex()
        return _located(text, shown, limits)[1]

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        where = locate().value(("format",)) if isinstance(data, dict) else None
        raise bundle_error(shown, f"not a {FORMAT} file", where)
    return text, data, locate


def _located(text: str, shown: str, limits: Limits) -> tuple[Any, LocationIndex]:
    try:
        value = parse_json(text, shown, limits)
    except PolicyError as exc:
        first = exc.diagnostics[0]
        raise bundle_error(shown, f"not a bundle: {first.message}", first.source) from None
    if value is None:
        raise bundle_error(shown, "not a bundle: the file is empty")
    return flatten(value)


def _parse(text: str, shown: str, limits: Limits) -> Any:
    """The JSON value, refused (`_Refused`) wherever the located reader would refuse it."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise _Refused(
            f"JSON syntax error: {exc.msg}", Source(shown, exc.lineno, exc.colno)
        ) from None
    except _Refused:
        raise
    except (ValueError, RecursionError) as exc:  # 4,300 digits and more; nesting
        raise _Refused(str(exc) or type(exc).__name__) from None
    problem = _check(data, limits, strings=_SURROGATE_ESCAPE.search(text) is not None)
    if problem:
        raise _Refused(problem)
    return data


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f'duplicate key "{key}"')
            seen.add(key)
    return out


def _no_constant(name: str) -> Any:
    raise _Refused(f"JSON syntax error: {name} is not a JSON number")


def _check(data: Any, limits: Limits, strings: bool) -> str | None:
    """The located reader's depth and node caps (counted as it counts them) and, when the
    text escapes a surrogate, its refusal of lone surrogates. Only containers are stacked: a
    list of sixteen million numbers is counted, not copied."""
    if not isinstance(data, dict | list):
        return _lone_surrogate(data) if strings else None
    nodes = 1
    stack: list[tuple[dict[str, Any] | list[Any], int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limits.max_depth:
            return f"nesting deeper than {limits.max_depth} levels"
        nodes += len(node)
        if nodes > limits.max_nodes:
            return f"more than {limits.max_nodes} nodes"
        if isinstance(node, dict):
            if strings and any(_SURROGATE.search(k) for k in node):
                return "a key holds a lone UTF-16 surrogate, which is not a character"
            children: Any = node.values()
        else:
            children = node
        for child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif strings and (problem := _lone_surrogate(child)):
                return problem
    return None


def _lone_surrogate(value: Any) -> str | None:
    if isinstance(value, str) and _SURROGATE.search(value):
        return "a string holds a lone UTF-16 surrogate, which is not a character"
    return None
