"""Located values: mappings and lists that remember where each member was written.

The loaders build these; `extends` merges them; `flatten` turns the result into plain data
(for the schema) plus a `LocationIndex` keyed by path (for diagnostics and the audit trail).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .diagnostics import Source

Path = tuple[str | int, ...]


class LocMap(dict[str, Any]):
    """A mapping with the source of every key and of every value."""

    __slots__ = ("key_src", "src", "val_src")

    def __init__(self, src: Source | None = None) -> None:
        super().__init__()
        self.src = src
        self.key_src: dict[str, Source] = {}
        self.val_src: dict[str, Source] = {}

    def put(self, key: str, value: Any, key_src: Source | None, val_src: Source | None) -> None:
        self[key] = value
        if key_src is not None:
            self.key_src[key] = key_src
        if val_src is not None:
            self.val_src[key] = val_src


class LocSeq(list[Any]):
    """A list with the source of every item."""

    __slots__ = ("item_src", "src")

    def __init__(self, src: Source | None = None) -> None:
        super().__init__()
        self.src = src
        self.item_src: list[Source | None] = []

    def add(self, value: Any, src: Source | None) -> None:
        self.append(value)
        self.item_src.append(src)


@dataclass(slots=True)
class LocationIndex:
    """Path -> where the value (and, for mapping members, the key) was written."""

    values: dict[Path, Source] = field(default_factory=dict)
    keys: dict[Path, Source] = field(default_factory=dict)

    def value(self, path: Path) -> Source | None:
        """The source of the value at path, else of its nearest located ancestor."""
        return self._nearest(self.values, path)

    def key(self, path: Path) -> Source | None:
        """The source of the key at path (falls back to the value's source)."""
        return self.keys.get(path) or self._nearest(self.values, path)

    @staticmethod
    def _nearest(table: dict[Path, Source], path: Path) -> Source | None:
        for end in range(len(path), -1, -1):
            found = table.get(path[:end])
            if found is not None:
                return found
        return None


def flatten(value: Any) -> tuple[Any, LocationIndex]:
    """Plain dicts and lists (for validation) and the location of every path."""
    index = LocationIndex()
    root_src = getattr(value, "src", None)
    if root_src is not None:
        index.values[()] = root_src
    # An explicit stack: a document may be deep, recursion would be the wrong tool.
    out_root: list[Any] = [None]
    stack: list[tuple[Any, Path, Any, Any]] = [(value, (), out_root, 0)]
    while stack:
        node, path, parent, slot = stack.pop()
        if isinstance(node, dict):
            plain: dict[str, Any] = {}
            parent[slot] = plain
            key_src = getattr(node, "key_src", {})
            val_src = getattr(node, "val_src", {})
            for k, v in node.items():
                sub = (*path, k)
                if k in key_src:
                    index.keys[sub] = key_src[k]
                if k in val_src:
                    index.values[sub] = val_src[k]
                plain[k] = None
                stack.append((v, sub, plain, k))
        elif isinstance(node, list):
            plain_list: list[Any] = [None] * len(node)
            parent[slot] = plain_list
            item_src = getattr(node, "item_src", [])
            for i, v in enumerate(node):
                sub = (*path, i)
                if i < len(item_src) and item_src[i] is not None:
                    index.values[sub] = item_src[i]
                stack.append((v, sub, plain_list, i))
        else:
            parent[slot] = node
    return out_root[0], index


def format_path(path: Path) -> str:
    """`("tools", "deny", 2)` -> `tools.deny[2]`."""
    return _format(tuple(path))


@lru_cache(maxsize=1 << 12)
def _format(path: Path) -> str:
    # Built from the cached text of the parent path: siblings share all but the last step.
    if not path:
        return ""
    return join_path(_format(path[:-1]), path[-1])


def list_path(key: str) -> str:
    """`tools.deny[3]` -> `tools.deny`: the list an entry's key points into."""
    cut = key.rfind("[")
    return key[:cut] if key.endswith("]") and key[cut + 1 : -1].isdigit() else key


def join_path(head: str, part: str | int) -> str:
    """The text of a path one step below `head`."""
    if isinstance(part, int):
        return f"{head}[{part}]"
    if not _plain_key(part):
        return f'{head}["{part}"]'
    return f"{head}.{part}" if head else part


def scope_list(scope: str, name: str) -> str:
    """The path of one list of a scope (`tools.toolsBySender["id:42"]` + `deny`): every label
    that names the list a rule is written in (trail, refusals, approvals, JSON) is made here."""
    return join_path(scope, name)


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _plain_key(key: str) -> bool:
    return _PLAIN_KEY.fullmatch(key) is not None
