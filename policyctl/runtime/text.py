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


class UnrenderableResult(Exception):
    """A tool returned a value that has no text: a cycle, or an object whose str() raises."""


def render_result(result: Any) -> str:
    """A tool's return value as the text the model reads; nothing at all is "(no output)".

    Raises UnrenderableResult when no text can be made of it (the gate turns that into a
    tool error the model reads, rather than ending the turn)."""
    if result is None:
        return NO_OUTPUT
    if isinstance(result, str):
        return result if result.strip() else NO_OUTPUT
    try:
        return json.dumps(result, default=str, allow_nan=False)
    except (ValueError, TypeError, RecursionError):  # NaN, a cycle, or worse: decide below
        pass
    except Exception as exc:  # default=str ran an object's __str__, and it raised
        raise UnrenderableResult(_why(exc)) from None
    try:
        # only NaN or infinity stopped the strict encoding: show the value plainly
        json.dumps(result, default=str, allow_nan=True)
        return repr(result)
    except Exception as exc:  # a cycle, nesting too deep, a str() or repr() that raises
        raise UnrenderableResult(_why(exc)) from None


def _why(exc: BaseException) -> str:
    """The exception's type only: its own str() may be what raised."""
    return f"{type(exc).__name__} while encoding it"


def safe_str(exc: BaseException) -> str:
    """An exception's message, or its type name when its __str__ raises."""
    try:
        return str(exc)
    except Exception:
        return f"{type(exc).__name__} (its message could not be rendered)"
