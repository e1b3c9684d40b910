"""`BoundedCache`: the one cache shape every memo of policyctl uses (bounded, thread-safe).

- a value is built completely before it is stored, and stored by one dictionary assignment,
  so a reader sees a whole entry or none;
- eviction never iterates or deletes: a cache has two generations, and when the young one is
  full it becomes the old one (the previous old one is dropped). A read consults both; a hit
  in the old generation is promoted. Nothing can raise `RuntimeError` or `KeyError`;
- writes take a lock (one per cache); reads take none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """At most `2 * half` entries; see the module docstring for why it cannot raise."""

    __slots__ = ("_half", "_lock", "_old", "_young", "young_get")

    def __init__(self, half: int) -> None:
        self._half = half
        self._young: dict[K, V] = {}
        self._old: dict[K, V] = {}
        self._lock = threading.Lock()
        #: the young generation's `dict.get` (rebound when it is replaced): a hot path asks
        #: it first, in C with no Python frame, and calls `get` only on a miss
        self.young_get: Callable[[K], V | None] = self._young.get

    def get(self, key: K) -> V | None:
        found = self._young.get(key)
        if found is None:
            found = self._old.get(key)
            if found is not None:
                self.put(key, found)
        return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            young = self._young
            if len(young) >= self._half:
                self._old = young
                self._young = young = {}
                self.young_get = young.get
            young[key] = value

    def __len__(self) -> int:
        return len(self._young) + len(self._old)
