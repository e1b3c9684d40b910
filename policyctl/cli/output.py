"""Human output: colour only on a terminal (and never under NO_COLOR), located diagnostics.

Everything the CLI writes passes through `SafeStream` (installed by `main`), which shows every
control character as a visible `\\uXXXX` (see `escape`): a policy or a caller can put an ESC
into an id, an entry or a source line, but never into the terminal. The colours of `Painter`
are the one exception, and they are marked with a token chosen when the process starts, which
no input can know.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any, TextIO

from ..diagnostics import Diagnostic, Severity
from ..escape import printable, printable_line

#: Marks the ESC of a colour sequence that `Painter` wrote (any other ESC is escaped): 16
#: bytes from the operating system's CSPRNG, what `secrets.token_hex` reads, without the
#: import of `secrets` (hmac, base64) that every command's start-up would pay for.
_COLOUR_MARK = "\x1b" + os.urandom(16).hex()
_ESCAPED_MARK = printable(_COLOUR_MARK)
#: Longest part of a source line quoted under a diagnostic (a generated file may have one
#: line of megabytes).
_QUOTE_WIDTH = 160

_COLOURS = {"red": "31", "yellow": "33", "green": "32", "bold": "1", "dim": "2", "cyan": "36"}


def use_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") is not None or os.environ.get("TERM") == "dumb":
        return False
    return hasattr(stream, "isatty") and stream.isatty()


class Painter:
    def __init__(self, stream: TextIO) -> None:
        # colours only where SafeStream turns the marks back into escapes
        self.enabled = isinstance(stream, SafeStream) and use_colour(stream)

    def __call__(self, text: str, colour: str) -> str:
        if not self.enabled:
            return text
        return f"{_COLOUR_MARK}[{_COLOURS[colour]}m{text}{_COLOUR_MARK}[0m"


class SafeStream:
    """A text stream that escapes control characters on the way out (see the module doc)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    @property
    def raw(self) -> TextIO:
        """The stream underneath, for output that is data (a file's content), not text."""
        return self._stream

    def write(self, text: str) -> int:
        safe = printable(text).replace(_ESCAPED_MARK, "\x1b")
        try:
            self._stream.write(safe)
        except UnicodeEncodeError:  # a terminal that cannot show some character
            encoding = getattr(self._stream, "encoding", None) or "ascii"
            self._stream.write(safe.encode(encoding, "backslashreplace").decode(encoding))
        return len(text)

    def isatty(self) -> bool:
        return hasattr(self._stream, "isatty") and self._stream.isatty()

    def __getattr__(self, name: str) -> Any:  # flush, encoding, fileno, ...
        return getattr(self._stream, name)


@lru_cache(maxsize=64)
def _source_lines(path: str) -> tuple[str, ...]:
    from ..formats.files import read_capped
    from ..settings import default_limits

    try:
        raw = read_capped(Path(path), default_limits().max_file_bytes)
    except OSError:
        return ()
    return tuple(raw.decode("utf-8", errors="replace").lstrip("\ufeff").splitlines())


def render_diagnostic(d: Diagnostic, paint: Painter, show_source: bool = True) -> str:
    colour = {"error": "red", "warning": "yellow", "info": "cyan"}[d.severity.value]
    where = f"{d.source}: " if d.source else ""
    head = f"{paint(printable_line(where), 'bold')}{paint(d.code, colour)} "
    out = [head + printable_line(d.message)]
    if show_source and d.quote and d.source is not None:
        lines = _source_lines(d.source.file)
        if 0 < d.source.line <= len(lines):
            out.extend(
                _quote(lines[d.source.line - 1], d.source.line, d.source.column, colour, paint)
            )
    if d.fix:
        out.append(f"  {paint('fix:', 'green')} {printable_line(d.fix)}")
    return "\n".join(out)


def _quote(line: str, number: int, column: int, colour: str, paint: Painter) -> list[str]:
    """The source line (its part around the column when long) and the underline.

    Characters that would not show as one column (controls, tabs) are escaped before the
    caret is placed, so the caret still points at the token."""
    start = max(0, column - 1 - _QUOTE_WIDTH // 2) if len(line) > _QUOTE_WIDTH else 0
    shown = line[start : start + _QUOTE_WIDTH]
    before = printable_line(shown[: column - 1 - start])
    text = printable_line(shown)
    width = _token_width(shown, column - 1 - start)
    token = printable_line(shown[column - 1 - start : column - 1 - start + width])
    cut = "..." if start else ""
    tail = "..." if start + _QUOTE_WIDTH < len(line) else ""
    return [
        f"  {number:>4} | {cut}{text}{tail}",
        "       | " + " " * (len(cut) + len(before)) + paint("^" * max(len(token), 1), colour),
    ]


def _token_width(line: str, start: int) -> int:
    """Underline the token at `start`: a quoted string, or a run up to a delimiter."""
    if start >= len(line):
        return 1
    if line[start] in "\"'":
        end = line.find(line[start], start + 1)
        return (end - start + 1) if end > start else 1
    end = start
    while end < len(line) and line[end] not in ",]}:# \t":
        end += 1
    return max(end - start, 1)


def render_diagnostics(diags: Iterable[Diagnostic], stream: TextIO | None = None) -> str:
    stream = stream or sys.stderr
    paint = Painter(stream)
    return "\n".join(render_diagnostic(d, paint) for d in diags)


def count_summary(diags: Iterable[Diagnostic]) -> str:
    diags = list(diags)
    errors = sum(1 for d in diags if d.severity is Severity.ERROR)
    warnings = sum(1 for d in diags if d.severity is Severity.WARNING)
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
