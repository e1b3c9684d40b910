"""`policyctl matrix --summary`: per agent, the tools it has in every, some or no context.

The matrix itself is a table of thousands of rows and dozens of columns; this view answers
"what can each agent use?" in lines that fit 120 columns (tool lists wrap, indented).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..analysis.matrix import MatrixContext

WIDTH = 120
_ALLOWED = ("ok", "ok+")


def summary_lines(
    total: int,
    shown: int,
    sampled: bool,
    tools: Sequence[str],
    rows: Sequence[tuple[MatrixContext, list[str]]],
) -> list[str]:
    counts: dict[str | None, list[int]] = {}
    sizes: dict[str | None, int] = {}
    for cell, cells in rows:
        agent = cell.context.agent
        found = counts.setdefault(agent, [0] * len(tools))
        sizes[agent] = sizes.get(agent, 0) + 1
        for i, code in enumerate(cells):
            if code in _ALLOWED:
                found[i] += 1
    head = f"{total} contexts"
    if sampled:
        head += f", {shown} shown (a deterministic sample)"
    out = [head + "; per agent, the tools it has in every, some or no context"]
    for agent, found in counts.items():
        n = sizes[agent]
        every = [t for t, c in zip(tools, found, strict=True) if c == n]
        some = [f"{t} ({c}/{n})" for t, c in zip(tools, found, strict=True) if 0 < c < n]
        none = [t for t, c in zip(tools, found, strict=True) if c == 0]
        out.append(f"agent {agent or '(none)'} ({n} contexts)")
        for name, items in (("every", every), ("some", some), ("none", none)):
            out += _wrapped(f"  {name + ':':<7}", items or ["(none)"])
    return out


def _wrapped(head: str, items: list[str]) -> list[str]:
    """`head` then the items, comma-separated, a line broken only between items (an item
    longer than a line, a tool name of 200 characters, is cut by textwrap)."""
    lines: list[str] = []
    line = head
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        if line.strip() and len(line) + 1 + len(piece) > WIDTH and line != head:
            lines.append(line.rstrip())
            line = " " * len(head)
        line += piece if line.endswith(" ") else " " + piece
    lines.append(line.rstrip())
    return [
        part
        for long in lines
        for part in textwrap.wrap(long, WIDTH, subsequent_indent=" " * 9, drop_whitespace=False)
        or [""]
    ]


def print_summary(
    total: int,
    shown: int,
    sampled: bool,
    tools: Sequence[str],
    rows: Sequence[tuple[MatrixContext, list[str]]],
) -> None:
    print("\n".join(summary_lines(total, shown, sampled, tools, rows)))
