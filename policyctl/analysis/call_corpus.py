"""A corpus of recorded tool calls (`simulate --calls FILE`, `diff --calls FILE`).

The file is JSON lines (one call per line, blank lines skipped) or one JSON list of calls.
Each call is an object `{"tool": NAME, "args": {...}, "context": {...}?}`; `params` and
`arguments` are accepted for `args` (what transcripts of OpenAI-style APIs record, where
`arguments` is often a JSON string), and `id` is accepted and ignored. Anything else is an
error: a misspelt `arg` would otherwise replay every call with no arguments.

The file is model output and may be hostile: it is read with the policy files' byte cap,
parsed by the located JSON reader (depth and node limits, lone surrogates refused), and every
problem is a diagnostic at file:line:col, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..diagnostics import Diagnostic, PolicyError, Source, did_you_mean
from ..formats.jsonpos import parse_json
from ..formats.read import read_text
from ..formats.schema_errors import diagnostics_from_validation
from ..located import LocMap, LocSeq, flatten
from ..settings import Limits, default_limits
from .contextspec import ContextSpec

CODE = "PC365"
_ARG_KEYS = ("args", "params", "arguments")
_KEYS = ("tool", *_ARG_KEYS, "context", "id")
SHAPE = '{"tool": "NAME", "args": {...}, "context": {...}}'


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One call of the corpus: the tool, its arguments, an optional context, and where."""

    tool: str
    args: Mapping[str, Any]
    source: Source
    context: ContextSpec | None = None

    @property
    def line(self) -> int:
        return self.source.line

    def to_json(self) -> dict[str, Any]:
        return {"line": self.source.line, "tool": self.tool, "args": dict(self.args)}


def read_corpus(path: str | Path, limits: Limits | None = None) -> list[RecordedCall]:
    """Every call of the file, in order; `PolicyError` with located diagnostics otherwise.

    The diagnostics do not quote the file's lines: a transcript line may be megabytes of
    model output, and the file named may be any file (its location says where to look)."""
    try:
        return _read(path, limits or default_limits())
    except PolicyError as exc:
        raise PolicyError([replace(d, quote=False) for d in exc.diagnostics]) from None


def _read(path: str | Path, limits: Limits) -> list[RecordedCall]:
    name = str(path)
    text = read_text(Path(path), limits, name)
    if text.lstrip().startswith("["):
        items = parse_json(text, name, limits)
        if not isinstance(items, LocSeq):
            raise _fail("a corpus that starts with [ must be one JSON list of calls", name, 1, 1)
        return [
            _call(item, src or Source(name, 1, 1), limits)
            for item, src in zip(items, items.item_src, strict=True)
        ]
    calls = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            item = parse_json(line, name, limits)
        except PolicyError as exc:
            raise PolicyError([_on_line(d, number) for d in exc.diagnostics]) from None
        start = len(line) - len(line.lstrip())
        calls.append(_call(_moved(item, number), Source(name, number, start + 1), limits))
    return calls


def _fail(message: str, name: str, line: int, column: int, fix: str | None = None) -> PolicyError:
    return PolicyError([Diagnostic.make(CODE, message, Source(name, line, column), fix=fix)])


def _at(src: Source, message: str, fix: str | None = None) -> PolicyError:
    return _fail(message, src.file, src.line, src.column, fix)


def _on_line(d: Diagnostic, number: int) -> Diagnostic:
    """A diagnostic of one JSON line (parsed alone, so on line 1) moved to its real line."""
    if d.source is None:
        return d
    moved = Source(d.source.file, number, d.source.column)
    return Diagnostic(d.code, d.message, moved, d.path, d.fix, d.severity)


def _moved(value: Any, number: int) -> Any:
    """The located value of one JSON line with every source on its real line."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, LocMap):
            for table in (node.key_src, node.val_src):
                for k, s in table.items():
                    table[k] = Source(s.file, number, s.column)
            stack.extend(node.values())
        elif isinstance(node, LocSeq):
            node.item_src = [
                None if s is None else Source(s.file, number, s.column) for s in node.item_src
            ]
            stack.extend(node)
        if isinstance(node, (LocMap, LocSeq)) and node.src is not None:
            node.src = Source(node.src.file, number, node.src.column)
    return value


def _call(item: Any, src: Source, limits: Limits) -> RecordedCall:
    if not isinstance(item, LocMap):
        raise _at(src, f"a recorded call must be an object: {SHAPE}")
    for key in item:
        if key not in _KEYS:
            near = did_you_mean(key, list(_KEYS))
            raise _at(
                item.key_src.get(key, src),
                f'unknown key "{key}" in a recorded call (keys: {", ".join(_KEYS)})',
                f'did you mean "{near}"?' if near else None,
            )
    tool = item.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        where = item.val_src.get("tool", src)
        raise _at(where, f'a recorded call needs "tool", a tool name: {SHAPE}')
    given = [k for k in _ARG_KEYS if k in item]
    if len(given) > 1:
        raise _at(
            item.key_src.get(given[1], src),
            f"a recorded call has both {given[0]} and {given[1]}: which arguments were used?",
            f"keep one of {' and '.join(given)}",
        )
    args: Any = item.get(given[0], LocMap(src)) if given else LocMap(src)
    arg_src = item.val_src.get(given[0], src) if given else src
    if isinstance(args, str):  # OpenAI's function-call `arguments` is a JSON text
        try:
            args = parse_json(args, arg_src.file, limits) if args.strip() else LocMap(arg_src)
        except PolicyError as exc:
            reason = exc.diagnostics[0].message if exc.diagnostics else "not JSON"
            raise _at(
                arg_src, f"{given[0]} is a string that is not a JSON object: {reason}"
            ) from None
    if not isinstance(args, dict):
        raise _at(arg_src, f"{given[0] if given else 'args'} must be a JSON object")
    plain_args, _ = flatten(args)
    context = None
    if "context" in item:
        context = _context(item["context"], item.val_src.get("context", src))
    return RecordedCall(tool, plain_args, src, context)


def _context(value: Any, src: Source) -> ContextSpec:
    if not isinstance(value, dict):
        raise _at(src, "context must be an object with the fields of a --context file")
    data, index = flatten(value)
    try:
        return ContextSpec.model_validate(data)
    except ValidationError as exc:
        # the located index's paths are relative to the context object
        diags = diagnostics_from_validation(exc, index, model=ContextSpec, data=data)
        raise PolicyError(
            [
                Diagnostic(CODE, f"context: {d.message}", d.source or src, d.path, d.fix)
                for d in diags
            ]
        ) from None
