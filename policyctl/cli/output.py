"""Human output: colour only on a terminal (and never under NO_COLOR), located diagnostics."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from functools import lru_cache
from typing import TextIO

from ..diagnostics import Diagnostic, Severity

_COLOURS = {"red": "31", "yellow": "33", "green": "32", "bold": "1", "dim": "2", "cyan": "36"}


def use_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") is not None or os.environ.get("TERM") == "dumb":
        return False
    return hasattr(stream, "isatty") and stream.isatty()


class Painter:
    def __init__(self, stream: TextIO) -> None:
        self.enabled = use_colour(stream)

    def __call__(self, text: str, colour: str) -> str:
        if not self.enabled:
            return text
        return f"\x1b[{_COLOURS[colour]}m{text}\x1b[0m"


@lru_cache(maxsize=64)
def _source_lines(path: str) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return tuple(fh.read().lstrip("\ufeff").splitlines())
    except OSError:
        return ()


def render_diagnostic(d: Diagnostic, paint: Painter, show_source: bool = True) -> str:
    colour = {"error": "red", "warning": "yellow", "info": "cyan"}[d.severity.value]
    where = f"{d.source}: " if d.source else ""
    head = f"{paint(where, 'bold')}{paint(d.code, colour)} {d.message}"
    out = [head]
    if show_source and d.source is not None:
        lines = _source_lines(d.source.file)
        if 0 < d.source.line <= len(lines):
            text = lines[d.source.line - 1]
            out.append(f"  {d.source.line:>4} | {text}")
            width = _token_width(text, d.source.column - 1)
            out.append("       | " + " " * (d.source.column - 1) + paint("^" * width, colour))
    if d.fix:
        out.append(f"  {paint('fix:', 'green')} {d.fix}")
    return "\n".join(out)


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
