"""`extends` as the README states it: mappings deep-merge, lists are replaced, `deny` lists are
unioned (base entries first), and `null` never erases a base value."""

from __future__ import annotations

from typing import Any


def merged(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in child.items():
        if key == "extends":
            continue
        if value is None:
            continue
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            out[key] = merged(old, value)
        elif key == "deny" and isinstance(old, list) and isinstance(value, list):
            out[key] = [*old, *(v for v in value if v not in old)]
        else:
            out[key] = value
    out.pop("extends", None)
    return out
