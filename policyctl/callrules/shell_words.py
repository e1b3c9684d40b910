"""Shell words after quote removal, as bash would see them before it runs a command.

`word_value` gives a word's value, or None when it depends on an expansion or a glob (those
words are unknown: they may match a deny but never a literal allow). `join_continued_lines`
removes backslash-newline pairs first, since bash joins `r\\<newline>m` into `rm`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node


def word_value(node: Node, source: bytes) -> str | None:
    """A word's value after quote removal, or None if it depends on an expansion or a glob."""
    kind = node.type
    raw = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
    if kind == "word":
        return _unquoted(raw)
    if kind == "number":
        return raw
    if kind == "raw_string":
        return raw[1:-1]
    if kind in ("string", "translated_string"):
        if any(c.type != "string_content" for c in node.named_children):
            return None
        body = raw[2:-1] if kind == "translated_string" else raw[1:-1]
        return _double_quoted(body)
    if kind == "ansi_c_string":
        return ansi_c(raw[2:-1])
    if kind == "concatenation":
        if _BRACES.search(raw):
            return None  # `{a,b}` arrives as the words `{`, `a,b`, `}`
        parts = []
        for child in node.children:
            value = word_value(child, source)
            if value is None:
                return None
            if child.type == "word" and any(c in raw for c in "[*?"):
                return None  # pathname expansion in an unquoted part
            parts.append(value)
        return "".join(parts)
    if kind == "variable_name":
        return raw
    return None


_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_PLAIN = re.compile(r"[^\\*?\[{]*")


def plain_word(raw: str) -> str | None:
    """An unquoted word's value (the grammar's `word` node)."""
    return raw if _PLAIN.fullmatch(raw) else _unquoted(raw)


def _unquoted(raw: str) -> str | None:
    if _PLAIN.fullmatch(raw):
        return raw  # nothing to remove or expand: the common case
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\":
            if i + 1 < n and raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if ch in "*?":
            return None  # pathname expansion: the words are whatever files exist
        if ch == "[" and "]" in raw[i + 1 :]:
            return None
        if ch == "{" and _BRACES.search(raw, i):
            return None  # brace expansion: {a,b}, {1..3} (a lone `{}` is literal)
        out.append(ch)
        i += 1
    return "".join(out)


def _double_quoted(body: str) -> str:
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch == "\\" and i + 1 < n and body[i + 1] in '$`"\\\n':
            if body[i + 1] != "\n":
                out.append(body[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def ansi_c(body: str) -> str | None:
    """Decode a `$'...'` body; None where bash would cut the string (a NUL) or we are unsure."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        esc = body[i + 1]
        i += 2
        if esc in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[esc])
            continue
        digits, base, width = "", 0, 0
        if esc in "01234567":
            digits, base, width = esc, 8, 2
        elif esc == "x":
            base, width = 16, 2
        elif esc == "u":
            base, width = 16, 4
        elif esc == "U":
            base, width = 16, 8
        elif esc == "c":
            return None  # control characters: never part of a legitimate command word
        else:
            out.append("\\" + esc)
            continue
        allowed = "01234567" if base == 8 else "0123456789abcdefABCDEF"
        while width and i < n and body[i] in allowed:
            digits += body[i]
            i += 1
            width -= 1
        if not digits:
            return None
        code = int(digits, base)
        if code == 0 or code > 0x10FFFF:
            return None
        out.append(chr(code))
    return "".join(out)


def join_continued_lines(script: str) -> str:
    """Remove backslash-newline pairs the way bash does before it splits words.

    The grammar keeps `r\\<newline>m` as two words, but bash runs `rm`. Pairs are removed
    outside single quotes, ANSI-C strings and comments (where bash keeps them).
    """
    out: list[str] = []
    i, n = 0, len(script)
    state = "plain"  # plain, single, ansi, double, comment
    while i < n:
        ch = script[i]
        if state == "plain":
            if ch == "\\" and i + 1 < n:
                if script[i + 1] != "\n":
                    out.append(script[i : i + 2])
                i += 2
                continue
            if ch == "'":
                state = "ansi" if out and out[-1].endswith("$") else "single"
            elif ch == '"':
                state = "double"
            elif ch == "#" and (not out or out[-1][-1:] in ("", " ", "\t", "\n", ";", "&", "|")):
                state = "comment"
        elif state == "double":
            if ch == "\\" and i + 1 < n:
                if script[i + 1] != "\n":
                    out.append(script[i : i + 2])
                i += 2
                continue
            if ch == '"':
                state = "plain"
        elif state == "single":
            if ch == "'":
                state = "plain"
        elif state == "ansi":
            if ch == "\\" and i + 1 < n:
                out.append(script[i : i + 2])
                i += 2
                continue
            if ch == "'":
                state = "plain"
        elif ch == "\n":  # the end of a comment
            state = "plain"
        out.append(ch)
        i += 1
    return "".join(out)
