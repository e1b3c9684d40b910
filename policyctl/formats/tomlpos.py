"""Locate TOML values: tomllib gives data without positions, this scanner finds them.

The text has already been accepted by tomllib, so the scanner only needs TOML's structure:
table headers, dotted keys, strings, arrays and inline tables. It records the line and
column of every key and every array item by key path; `located` turns data + positions into
the same located values the YAML reader builds.
"""

from __future__ import annotations

import bisect
from typing import Any

from ..diagnostics import Diagnostic, PolicyError, Source
from ..located import LocMap, LocSeq
from ..settings import Limits

Key = tuple[str | int, ...]
_BARE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        self.keys: dict[Key, tuple[int, int]] = {}
        self.values: dict[Key, tuple[int, int]] = {}

    def where(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, pos) - 1
        return line + 1, pos - self.line_starts[line] + 1

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos : self.pos + n]

    def skip_space(self, newlines: bool) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in " \t\r" or (newlines and ch == "\n"):
                self.pos += 1
            elif ch == "#" and newlines:
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            else:
                return

    def skip_line(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end + 1

    def read_string(self) -> str:
        text = self.text
        quote = text[self.pos]
        if text.startswith(quote * 3, self.pos):
            end = text.find(quote * 3, self.pos + 3)
            while quote == '"' and end > 0 and text[end - 1] == "\\":
                end = text.find(quote * 3, end + 1)
            end = len(text) if end < 0 else end
            # Up to two extra quotes may close the string (`""""` ends with a quote inside).
            stop = end + 3
            while stop < len(text) and text[stop] == quote:
                stop += 1
            value = text[self.pos + 3 : stop - 3]
            self.pos = stop
            return value
        i = self.pos + 1
        out = []
        while i < len(text) and text[i] != quote:
            if quote == '"' and text[i] == "\\":
                out.append(text[i : i + 2])
                i += 2
                continue
            out.append(text[i])
            i += 1
        self.pos = i + 1
        raw = "".join(out)
        if quote == '"' and "\\" in raw:
            import json

            try:
                return str(json.loads('"' + raw + '"'))
            except ValueError:
                return raw
        return raw

    def read_key(self) -> list[tuple[str, int]]:
        parts: list[tuple[str, int]] = []
        while True:
            self.skip_space(False)
            start = self.pos
            if self.peek() in ('"', "'"):
                parts.append((self.read_string(), start))
            else:
                while self.pos < len(self.text) and self.text[self.pos] in _BARE:
                    self.pos += 1
                parts.append((self.text[start : self.pos], start))
            self.skip_space(False)
            if self.peek() == ".":
                self.pos += 1
                continue
            return parts

    def scan(self) -> None:
        current: Key = ()
        aot: dict[Key, int] = {}
        n = len(self.text)
        while self.pos < n:
            self.skip_space(True)
            if self.pos >= n:
                break
            start = self.pos
            if self.text.startswith("[[", self.pos):
                self.pos += 2
                path: Key = tuple(k for k, _ in self.read_key())
                index = aot.get(path, -1) + 1
                aot[path] = index
                # A new element resets the counters of arrays of tables nested under it.
                for nested in [p for p in aot if len(p) > len(path) and p[: len(path)] == path]:
                    del aot[nested]
                current = (*path, index)
                self.keys.setdefault(path, self.where(start))
                self.values[current] = self.where(start)
                self.skip_line()
            elif self.peek() == "[":
                self.pos += 1
                current = self.resolve_aot(tuple(k for k, _ in self.read_key()), aot)
                self.keys[current] = self.where(start)
                self.values[current] = self.where(start)
                self.skip_line()
            else:
                self.key_value(current)
                self.skip_line()

    @staticmethod
    def resolve_aot(path: Key, aot: dict[Key, int]) -> Key:
        """`[a.b]` after `[[a]]` means a[<last>].b: put the array indices into the path."""
        out: list[str | int] = []
        for part in path:
            out.append(part)
            index = aot.get(tuple(p for p in out if isinstance(p, str)))
            if index is not None and len(out) < len(path) + 10:
                out.append(index)
        return tuple(out)

    def key_value(self, table: Key) -> None:
        parts = self.read_key()
        path: Key = (*table, *(k for k, _ in parts))
        for depth in range(1, len(parts) + 1):
            sub = (*table, *(k for k, _ in parts[:depth]))
            self.keys.setdefault(sub, self.where(parts[depth - 1][1]))
        self.skip_space(False)
        if self.peek() == "=":
            self.pos += 1
        self.skip_space(False)
        self.value(path)

    def value(self, path: Key) -> None:
        self.values[path] = self.where(self.pos)
        ch = self.peek()
        if ch in ('"', "'"):
            self.read_string()
        elif ch == "[":
            self.pos += 1
            index = 0
            while True:
                self.skip_space(True)
                if self.peek() in ("]", ""):
                    self.pos += 1
                    return
                if self.peek() == ",":
                    self.pos += 1
                    continue
                self.value((*path, index))
                index += 1
        elif ch == "{":
            self.pos += 1
            while True:
                self.skip_space(False)
                if self.peek() in ("}", ""):
                    self.pos += 1
                    return
                if self.peek() == ",":
                    self.pos += 1
                    continue
                self.key_value(path)
        else:
            text, n = self.text, len(self.text)
            while self.pos < n and text[self.pos] not in ",]}\n#":
                self.pos += 1


def locate_toml(data: dict[str, Any], text: str, name: str, limits: Limits) -> LocMap:
    scanner = _Scanner(text)
    scanner.scan()
    count = 0

    def src(table: dict[Key, tuple[int, int]], path: Key) -> Source | None:
        found = table.get(path)
        return Source(name, found[0], found[1]) if found else None

    def build(value: Any, path: Key) -> Any:
        nonlocal count
        count += 1
        if count > limits.max_nodes:
            raise PolicyError(
                [
                    Diagnostic.make(
                        "PC108", f"more than {limits.max_nodes} nodes", Source(name, 1, 1)
                    )
                ]
            )
        if len(path) > limits.max_depth:
            raise PolicyError(
                [
                    Diagnostic.make(
                        "PC107",
                        f"nesting deeper than {limits.max_depth} levels",
                        src(scanner.values, path) or Source(name, 1, 1),
                    )
                ]
            )
        if isinstance(value, dict):
            out = LocMap(src(scanner.values, path))
            for key, item in value.items():
                sub = (*path, key)
                out.put(key, build(item, sub), src(scanner.keys, sub), src(scanner.values, sub))
            return out
        if isinstance(value, list):
            seq = LocSeq(src(scanner.values, path))
            for i, item in enumerate(value):
                seq.add(build(item, (*path, i)), src(scanner.values, (*path, i)))
            return seq
        return value

    root = build(data, ())
    assert isinstance(root, LocMap)
    root.src = Source(name, 1, 1)
    return root
