"""A bounded, thread-safe map that drops its least recently used entry first: what a process keeps of what it
has read, as a hint for its next read or write (docs/decisions/0050, 0051). Nothing kept here is trusted:
each user checks it against what it reads or conditions its write on it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedLru(Generic[K, V]):
    """At most `capacity` entries (0: keeps nothing); a get or a put makes its entry the most recent."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def put_all(self, entries: Iterable[tuple[K, V]]) -> None:
        if self.capacity <= 0:
            return
        with self._lock:
            for key, value in entries:
                self._entries[key] = value
                self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def get_all(self, keys: Iterable[K]) -> dict[K, V] | None:
        """Every one of these, or None when any is not kept."""
        with self._lock:
            found: dict[K, V] = {}
            for key in keys:
                if key not in self._entries:
                    return None
                self._entries.move_to_end(key)
                found[key] = self._entries[key]
            return found

    def get(self, key: K) -> V | None:
        found = self.get_all([key])
        return None if found is None else found[key]

    def drop(self, keys: Iterable[K]) -> None:
        with self._lock:
            for key in keys:
                self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)
