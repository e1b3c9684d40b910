"""A JSON reader that keeps the line and column of every key and value.

JSON is valid YAML, but reading it through the YAML parser's Python event stream costs tens of
microseconds a node; large policies are usually generated, and generated policies are JSON.
This reader takes one regular-expression token at a time and builds the same located values
as the YAML reader, with the same limits (depth, node count) and duplicate-key refusal.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

from ..diagnostics import Diagnostic, PolicyError, Source
from ..located import LocMap, LocSeq
from ..settings import Limits

# group 1: the token itself (its start is the token's offset); 2: a string's contents,
# 3: punctuation, 4: a number, 5: a literal
_TOKEN = re.compile(
    r'[ \t\r\n]*((?:"((?:[^"\\\x00-\x1f]|\\.)*)")|([{}\[\],:])'
    r"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|(true|false|null))",
    re.DOTALL,
)
_END = re.compile(r"[ \t\r\n]*\Z")
_CLOSE = re.compile(r"[ \t\r\n]*\]")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DIGITS = 4300


class _Reader:
    def __init__(self, text: str, name: str, limits: Limits) -> None:
        self.text = text
        self.name = name
        self.limits = limits
        self.pos = 0
        self.nodes = 0
        self.duplicates: list[Diagnostic] = []
        self.line_starts = [0]
        self.line_starts.extend(m.end() for m in re.finditer("\n", text))

    def where(self, offset: int) -> Source:
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return Source(self.name, line + 1, offset - self.line_starts[line] + 1)

    def fail(self, message: str, offset: int | None = None, code: str = "PC103") -> PolicyError:
        return PolicyError(
            [Diagnostic.make(code, message, self.where(self.pos if offset is None else offset))]
        )

    def token(self) -> tuple[re.Match[str], int]:
        m = _TOKEN.match(self.text, self.pos)
        if m is None:
            offset = self.pos + len(self.text[self.pos :]) - len(self.text[self.pos :].lstrip())
            if offset >= len(self.text):
                raise self.fail("JSON syntax error: unexpected end of file", offset)
            raise self.fail(f"JSON syntax error: unexpected {self.text[offset]!r}", offset)
        self.pos = m.end()
        return m, m.start(1)

    def count(self, offset: int) -> None:
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise self.fail(f"more than {self.limits.max_nodes} nodes", offset, "PC108")

    def string(self, raw: str, offset: int) -> str:
        if "\\" not in raw:
            return raw
        try:
            text = str(json.loads(f'"{raw}"'))
        except ValueError:
            raise self.fail("JSON syntax error: invalid escape in string", offset) from None
        if _SURROGATE.search(text):
            raise self.fail(
                "the string holds a lone UTF-16 surrogate, which is not a character",
                offset,
                "PC115",
            )
        return text

    def value(self, depth: int) -> tuple[Any, Source]:
        # The hot path of a large file: one call per value, the common cases inlined.
        m, offset = self.token()
        src = self.where(offset)
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            self.count(offset)
        raw = m.group(2)
        if raw is not None:
            return (raw if "\\" not in raw else self.string(raw, offset)), src
        punct = m.group(3)
        if punct == "{":
            return self.mapping(depth + 1, offset, src), src
        if punct == "[":
            return self.sequence(depth + 1, offset, src), src
        if punct is not None:
            raise self.fail(f"JSON syntax error: unexpected {punct!r}", offset)
        number = m.group(4)
        if number is not None:
            if any(c in number for c in ".eE"):
                return float(number), src
            if len(number) > _MAX_DIGITS:  # int() refuses beyond 4,300 digits anyway
                raise self.fail("the integer has too many digits", offset, "PC114")
            return int(number), src
        return _LITERALS[m.group(5)], src

    def check_depth(self, depth: int, offset: int) -> None:
        if depth > self.limits.max_depth:
            raise self.fail(f"nesting deeper than {self.limits.max_depth} levels", offset, "PC107")

    def mapping(self, depth: int, offset: int, src: Source) -> LocMap:
        self.check_depth(depth, offset)
        out = LocMap(src)
        m, at = self.token()
        if m.group(3) == "}":
            return out
        while True:
            raw = m.group(2)
            if raw is None:
                raise self.fail("JSON syntax error: expected a string key", at)
            key = raw if "\\" not in raw else self.string(raw, at)
            key_src = self.where(at)
            duplicate = key in out
            if duplicate:
                # every duplicate is reported at the end, not just the first (the later value
                # is read and dropped)
                first = out.key_src.get(key)
                seen = f" (first at line {first.line})" if first else ""
                self.duplicates.extend(
                    self.fail(f'duplicate key "{key}"{seen}', at, "PC104").diagnostics
                )
            colon, at = self.token()
            if colon.group(3) != ":":
                raise self.fail("JSON syntax error: expected ':'", at)
            value, value_src = self.value(depth)
            if not duplicate:
                out.put(key, value, key_src, value_src)
            m, at = self.token()
            punct = m.group(3)
            if punct == "}":
                return out
            if punct != ",":
                raise self.fail("JSON syntax error: expected ',' or '}'", at)
            m, at = self.token()

    def sequence(self, depth: int, offset: int, src: Source) -> LocSeq:
        self.check_depth(depth, offset)
        out = LocSeq(src)
        if _CLOSE.match(self.text, self.pos):
            self.token()
            return out
        items, sources = out, out.item_src
        while True:
            value, value_src = self.value(depth)
            items.append(value)
            sources.append(value_src)
            m, at = self.token()
            punct = m.group(3)
            if punct == "]":
                return out
            if punct != ",":
                raise self.fail("JSON syntax error: expected ',' or ']'", at)


def parse_json(
    text: str, name: str, limits: Limits, problems: list[Diagnostic] | None = None
) -> Any:
    reader = _Reader(text, name, limits)
    if not text.strip():
        return None
    try:
        value, _ = reader.value(0)
    except RecursionError:  # a backstop: the depth limit stops well before the stack does
        raise reader.fail("nesting too deep to parse", 0, "PC107") from None
    if _END.match(text, reader.pos) is None:
        raise reader.fail("JSON syntax error: extra data after the document")
    if reader.duplicates and problems is None:
        raise PolicyError(reader.duplicates)
    if problems is not None:
        problems.extend(reader.duplicates)
    return value
