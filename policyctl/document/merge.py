"""`extends` merging: deep-merge on normalised keys; lists replaced, deny and ask lists unioned.

A base file's deny can never be dropped by a file that extends it: deny lists are unioned, no
base value can be erased with `null` (that would drop a deny list by the back door), a base
`callDefault: deny` cannot become `ask` (PC358), keys are
joined on their normal form (`Slack` in the child is the base's `slack`, see `keys`), and
`carry` carries base denies into the more specific scopes a child adds.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic, PolicyError
from ..located import LocMap, LocSeq, format_path
from ..names import fold
from .keys import map_kind, normal_key


def merge(
    base: LocMap,
    over: LocMap,
    diagnostics: list[Diagnostic] | None = None,
    path: tuple[str, ...] = (),
) -> LocMap:
    """`over` (the extending file) on top of `base`; spelling warnings go to `diagnostics`."""
    notes = diagnostics if diagnostics is not None else []
    out = LocMap(over.src or base.src)
    for key, value in base.items():
        out.put(key, value, base.key_src.get(key), base.val_src.get(key))
    kind = map_kind(path)
    spelled: dict[str, str] = {}
    if kind is not None:
        for key in base:
            norm = normal_key(kind, key)
            if norm is not None:
                spelled.setdefault(norm, key)
    for key, value in over.items():
        key_src, val_src = over.key_src.get(key), over.val_src.get(key)
        target = key
        if kind is not None and key not in base:
            norm = normal_key(kind, key)
            if norm is not None and norm in spelled:
                target = spelled[norm]
                notes.append(
                    Diagnostic.make(
                        "PC420",
                        f'{kind} key "{key}" is "{target}" of the extended file; merged into it',
                        key_src,
                        path=format_path((*path, key)),
                        fix=f'spell it "{target}" as the extended file does',
                    )
                )
        if target not in base:
            out.put(key, value, key_src, val_src)
            continue
        old = base[target]
        if value is None and old is not None:
            raise PolicyError(
                [
                    Diagnostic.make(
                        "PC203",
                        f'"{key}" is set in an extended file; null here would erase it',
                        val_src or key_src,
                        path=".".join((*path, key)),
                        fix="remove this key, or override the fields you mean to change",
                    )
                ]
            )
        if isinstance(old, LocMap) and isinstance(value, LocMap):
            out.put(target, merge(old, value, notes, (*path, target)), key_src, val_src)
        elif key in UNIONED and isinstance(old, LocSeq) and isinstance(value, LocSeq):
            out.put(target, union(old, value), key_src, val_src)
        elif key == "callDefault" and old == "deny" and value == "ask":
            raise PolicyError(
                [
                    Diagnostic.make(
                        "PC358",
                        "callDefault is deny in an extended file"
                        + (f" ({base.val_src[target]})" if base.val_src.get(target) else "")
                        + "; ask here would widen it",
                        val_src or key_src,
                        path=".".join((*path, key)),
                        fix="remove this key, or list the calls that may ask in `ask`",
                    )
                ]
            )
        else:
            out.put(target, value, key_src, val_src)
    return out


#: lists an extending file adds to rather than replaces: a base's refusals stay
UNIONED = ("deny", "ask")


def union(first: LocSeq, second: LocSeq) -> LocSeq:
    """Both lists' entries, each once (compared trimmed and lowercased), first's first.

    A call rule's specifier is compared as written (`exec(RM *)` is not `exec(rm *)`: command
    words are case-sensitive), only its tool name is folded."""
    out = LocSeq(second.src or first.src)
    seen: set[Any] = set()
    for seq in (first, second):
        for item, src in zip(seq, seq.item_src, strict=False):
            marker = _marker(item)
            if marker not in seen:
                seen.add(marker)
                out.add(item, src)
    return out


def _marker(item: Any) -> Any:
    if not isinstance(item, str):
        return repr(item)
    tool, paren, specifier = item.strip().partition("(")
    return fold(tool) + paren + specifier if paren else fold(item)
