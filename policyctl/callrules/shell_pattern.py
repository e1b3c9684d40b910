"""Shell-command specifiers: `exec(git commit -m "fix bug")` -> a word pattern.

Pattern words are shell words: quotes are removed, a bare `*` word matches any run of words,
a `*` inside a word is a glob within that word, and a quoted `'*'` is a literal asterisk.
Claude Code's trailing `:*` (`git:*`, `npm run test:*`) is accepted as ` *`; a `*` glued to
the last word (`rm*`, `git push*`) also takes further words in deny and ask rules (not in
allow: see `ShellMatcher`). A specifier
describes one simple command, so unquoted operators (`;`, `|`, `&`, `<`, `>`, parentheses)
and expansions (`$`, backticks) are errors: write one entry per command instead.
"""

from __future__ import annotations

from .model import SpecifierError, SpecifierProblem
from .wordglob import STAR, PatternItem, WordGlob, WordPattern

_OPERATORS = set(";|&<>()`")
_DOUBLE_ESCAPABLE = set('"\\$`')


def _fail(code: str, message: str, entry: str, offset: int, fix: str | None = None) -> None:
    raise SpecifierError(SpecifierProblem(code, message, entry, offset, fix))


def parse_shell_pattern(spec: str, entry: str, offset: int) -> WordPattern:
    """`offset` is where `spec` starts inside `entry` (errors point into the entry)."""
    words: list[list[tuple[str, bool]]] = []  # each word: chunks of (text, quoted)
    current: list[tuple[str, bool]] | None = None
    i, n = 0, len(spec)
    while i < n:
        ch = spec[i]
        if ch in " \t":
            current = None
            i += 1
            continue
        if ch in "\n\r":
            _fail("PC351", "a shell specifier is one line", entry, offset + i)
        if current is None:
            current = []
            words.append(current)
        if ch == "'":
            end = spec.find("'", i + 1)
            if end < 0:
                _fail("PC350", "unterminated single quote", entry, offset + i, "close the quote")
            current.append((spec[i + 1 : end], True))
            i = end + 1
        elif ch == '"':
            j, text = i + 1, []
            while j < n and spec[j] != '"':
                if spec[j] == "\\" and j + 1 < n and spec[j + 1] in _DOUBLE_ESCAPABLE:
                    text.append(spec[j + 1])
                    j += 2
                    continue
                if spec[j] in "$`":
                    _fail(
                        "PC351",
                        f"expansion {spec[j]!r} in a shell specifier",
                        entry,
                        offset + j,
                        "use single quotes for literal text",
                    )
                text.append(spec[j])
                j += 1
            if j >= n:
                _fail("PC350", "unterminated double quote", entry, offset + i, "close the quote")
            current.append(("".join(text), True))
            i = j + 1
        elif ch == "\\":
            if i + 1 >= n:
                _fail("PC350", "a specifier cannot end with a backslash", entry, offset + i)
            current.append((spec[i + 1], True))
            i += 2
        elif ch in _OPERATORS or ch == "$":
            what = "expansion" if ch in "$`" else "shell operator"
            _fail(
                "PC351",
                f"{what} {ch!r} in a shell specifier: a specifier matches one simple command",
                entry,
                offset + i,
                "write one entry per command, or quote the character to match it literally",
            )
        else:
            j = i
            while j < n and spec[j] not in " \t\n\r'\"\\$" and spec[j] not in _OPERATORS:
                j += 1
            current.append((spec[i:j], False))
            i = j
    if not words:
        _fail("PC350", "empty shell specifier", entry, offset, 'use "tool" or "tool(*)"')
    _colon_star(words)
    return WordPattern(tuple(_item(w) for w in words))


def _colon_star(words: list[list[tuple[str, bool]]]) -> None:
    """Claude Code's `git:*` -> `git *` (only an unquoted `:*` that ends the last word)."""
    last = words[-1]
    text, quoted = last[-1]
    if not quoted and text.endswith(":*") and (len(text) > 2 or len(last) > 1):
        last[-1] = (text[:-2], False)
        if last[-1][0] == "" and len(last) > 1:
            last.pop()
        words.append([("*", False)])


def _item(chunks: list[tuple[str, bool]]) -> PatternItem:
    if len(chunks) == 1 and chunks[0] == ("*", False):
        return STAR
    parts = [""]
    for text, quoted in chunks:
        if quoted:
            parts[-1] += text
            continue
        pieces = text.split("*")
        parts[-1] += pieces[0]
        parts.extend(pieces[1:])
    return WordGlob(tuple(parts))
