"""What goes back to the model is bounded: long text keeps its head and tail, and says the cut."""

from __future__ import annotations

import json
from typing import Any

NO_OUTPUT = "(no output)"


def truncate(text: str, limit: int) -> str:
    """At most about `limit` characters: the head and the tail, and how much was cut between."""
    if len(text) <= limit:
        return text
    head = max(limit // 2, 0)
    tail = max(limit - head, 0)
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut} characters cut] ...\n{text[len(text) - tail :]}"


def render_result(result: Any) -> str:
    """A tool's return value as the text the model reads; nothing at all is "(no output)"."""
    if result is None:
        return NO_OUTPUT
    if isinstance(result, str):
        return result if result.strip() else NO_OUTPUT
    try:
        return json.dumps(result, default=str, allow_nan=False)
    except (ValueError, TypeError, RecursionError):  # NaN, a cycle, or worse: show it plainly
        return repr(result)
