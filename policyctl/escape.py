"""Escaping for output: text a policy author or a caller wrote never controls a terminal or a
Markdown page.

A source line, an agent id or a group id may hold terminal escapes (ESC, CSI, carriage
returns: a file could erase its own error and print a fake "0 errors"), bidirectional-text
overrides (which reorder what a reader sees) or lone surrogates (which no output encoding can
write). `printable` shows each as a visible `\\uXXXX`, which also keeps JSON valid and equal in
meaning (JSON reads `\\u001b` as the same character). `md_literal` writes text so that
Markdown shows it literally: no table cell, code span, HTML comment or link can be opened.
"""

from __future__ import annotations

import re

#: C0 controls except newline and tab, DEL and C1 controls, bidi controls, lone surrogates
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_UNSAFE_LINE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_MD_PLAIN = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -.:,/@=()\"'+?;"
)


def _visible(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: str) -> str:
    """Every unsafe character as `\\uXXXX`; newlines and tabs kept (for whole outputs)."""
    return _UNSAFE.sub(_visible, text)


def printable_line(text: str) -> str:
    """The same for one line of output: newlines and tabs become `\\u000a`, `\\u0009` too."""
    return _UNSAFE_LINE.sub(_visible, text)


def md_literal(text: str) -> str:
    """Text that Markdown (GitHub's included, in tables) shows exactly as written.

    Letters, digits and a few harmless punctuation marks stay; every other character becomes
    a numeric character reference (`|` is `&#124;`, a backtick `&#96;`, `<` `&#60;`), which
    Markdown decodes after it has decided the page's structure; unsafe characters become a
    visible `\\uXXXX`."""
    out = []
    for ch in text:
        if ch in _MD_PLAIN:
            out.append(ch)
        elif _UNSAFE_LINE.match(ch):
            out.append(f"&#92;u{ord(ch):04x}")
        else:
            out.append(f"&#{ord(ch)};")
    return "".join(out)


def md_code(text: str) -> str:
    """`text` in code style, literally (see `md_literal`)."""
    return f"<code>{md_literal(text)}</code>"
