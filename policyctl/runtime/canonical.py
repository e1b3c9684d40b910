"""One text per JSON value: what the runtime compares calls by.

Python's `==` says `True == 1` and a dict's hash says `hash(-1) == hash(-2)`, so neither can
say whether two calls are the same call. `canonical_json` is the value's JSON text in one
form (after RFC 8785): keys sorted, no whitespace, non-ASCII kept, and a number written by its
value, so `1.0` and `1` are one number (JSON has one number type, and a tool receives the same
value) while `true` and `1`, or `-1` and `-2`, stay apart. Loop detection identifies a call by
it, and a hook's rewrite counts as a change exactly when it differs.
"""

from __future__ import annotations

import json
import math
from typing import Any

#: the text of values that have none (a cycle, nesting beyond the stack): all alike, so
#: repeats of such calls are still counted (failing towards detecting a loop)
UNREPRESENTABLE = "\x00unrepresentable"


def _number(value: float) -> float | int:
    return int(value) if math.isfinite(value) and value.is_integer() else value


def _normal(value: Any) -> Any:
    if type(value) is float:
        return _number(value)
    if isinstance(value, dict):
        return {str(k): _normal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    return value


def _other(value: object) -> str:
    """A value JSON has no form for, written with its type so it equals no JSON string."""
    return f"\x00{type(value).__qualname__}:{value}"


def canonical_json(value: Any) -> str:
    """The canonical JSON text of `value` (see the module docstring)."""
    try:
        return json.dumps(
            _normal(value),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            default=_other,
        )
    except (RecursionError, ValueError, TypeError):
        return UNREPRESENTABLE
