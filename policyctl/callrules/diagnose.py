"""A specifier problem -> a diagnostic at file:line:col (for compile, once call rules are wired).

The problem's offset counts characters inside the entry text; the entry's own location points
at its first character as written, so `opening_quote` is 1 when the entry was written quoted
(`"exec(rm *)"` in YAML) and the column moves past the quote.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic, Source
from .model import SpecifierProblem


def to_diagnostic(
    problem: SpecifierProblem, entry_at: Source | None, path: str, opening_quote: int = 0
) -> Diagnostic:
    source = None
    if entry_at is not None:
        source = Source(
            entry_at.file, entry_at.line, entry_at.column + opening_quote + problem.offset
        )
    message = f'{problem.message} in "{problem.entry}"'
    return Diagnostic.make(problem.code, message, source, path, problem.fix)
