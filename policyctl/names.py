"""Names: normalisation, the ASCII rule, `*` globs, and MCP tool names (semantics 2, 3, 10)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_ALLOWED = re.compile(r"[a-z0-9_\-.:*@/]+\Z")


def normalize(raw: str, aliases: Mapping[str, str]) -> str:
    """Trim, lowercase, then map a whole-string alias (`BASH` -> `exec`; `bash*` stays)."""
    text = raw.strip().lower()
    return aliases.get(text, text)


def ascii_problem(name: str) -> str | None:
    """Why a normalised entry breaks the ASCII rule, or None when it is fine."""
    if _ALLOWED.match(name):
        return None
    for ch in name:
        if not _ALLOWED.match(ch):
            label = unicodedata.name(ch, "") or "control character"
            return f"character U+{ord(ch):04X} {label} is not allowed"
    return "empty entry"  # pragma: no cover - callers drop empty entries first


def is_glob(entry: str) -> bool:
    return "*" in entry


@dataclass(frozen=True, slots=True)
class Glob:
    """A `*`-only glob, anchored at both ends, matched without backtracking.

    The pattern is split at `*` into literal parts. The first part must be a prefix, the last a
    suffix, and the middle parts are found left to right, each at its earliest position. For
    `*`-only globs the leftmost choice is always safe, so matching is one forward scan of the
    name whatever the pattern (`*a*a*a*b` cannot blow up as a backtracking regex would).
    """

    pattern: str
    head: str
    middle: tuple[str, ...]
    tail: str
    min_length: int

    @staticmethod
    def compile(pattern: str) -> Glob:
        parts = pattern.split("*")
        if len(parts) == 1:  # no star: the pattern is the name itself
            return Glob(pattern, pattern, (), "", len(pattern))
        head, tail = parts[0], parts[-1]
        middle = tuple(p for p in parts[1:-1] if p)
        return Glob(pattern, head, middle, tail, len(head) + len(tail) + sum(map(len, middle)))

    def matches(self, name: str) -> bool:
        if len(name) < self.min_length:
            return False
        if not self.tail and not self.middle and self.head == self.pattern:
            return name == self.pattern
        if not name.startswith(self.head) or not name.endswith(self.tail):
            return False
        pos, end = len(self.head), len(name) - len(self.tail)
        for part in self.middle:
            found = name.find(part, pos, end)
            if found < 0:
                return False
            pos = found + len(part)
        return True


_MCP_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MCP_SERVER_MAX = 30
MCP_NAME_MAX = 64


def _mcp_part(text: str, empty: str) -> str:
    cleaned = _MCP_UNSAFE.sub("-", text.strip())
    return cleaned or empty


def mcp_tool_name(server: str, tool: str, taken: Iterable[str] = ()) -> str:
    """The tool name an MCP server's tool gets (semantics 10): `<server>__<tool>`.

    Both parts are trimmed, unsafe characters become `-`, empty parts become `mcp` / `tool`,
    a name that does not start with a letter gets `mcp-` in front, the server part is at most
    30 characters and the whole name at most 64 (the tool part is cut first), and collisions
    get `-2`, `-3`, ... inside the length budget.
    """
    server_part = _mcp_part(server, "mcp")
    if not server_part[0].isalpha() or not server_part[0].isascii():
        server_part = "mcp-" + server_part
    server_part = server_part[:MCP_SERVER_MAX]
    tool_part = _mcp_part(tool, "tool")
    budget = MCP_NAME_MAX - len(server_part) - 2
    base = f"{server_part}__{tool_part[:budget]}"
    used = {t.lower() for t in taken}
    if base.lower() not in used:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = f"{server_part}__{tool_part[: budget - len(suffix)]}{suffix}"
        if candidate.lower() not in used:
            return candidate
        n += 1
