"""The inventories this process last read, per provider: what a claim for new consumers is decided from
without reading first (docs/decisions/0050-claims-on-known-inventories.md).

An entry is only a guess. The write made from it is conditioned on the provider's identity (`createdUs`),
its inventory version and room for every class it grows, so a stale entry costs one canceled transaction,
never a wrong write. Usage is not kept: the write's condition is the capacity check.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import replace

from chalicelib.placement.models import Provider


class KnownInventories:
    """A bounded, thread-safe map provider uuid -> the provider as last read (its usage dropped), least
    recently used out first. `capacity` 0 keeps nothing: every claim reads first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, Provider] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, providers: Iterable[Provider | None]) -> None:
        """Keep these (as read, consistently, with their inventories and write tokens). A provider without
        a creation stamp (an item older than the stamp) cannot be told from a later one of the same uuid:
        not kept."""
        if self.capacity <= 0:
            return
        with self._lock:
            for provider in providers:
                if provider is None or not provider.created_at or provider.fence:
                    continue
                self._entries[provider.uuid] = replace(provider, usages={})
                self._entries.move_to_end(provider.uuid)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def known(self, uuids: Iterable[str]) -> dict[str, Provider] | None:
        """Every one of these, or None when any is not known."""
        with self._lock:
            found: dict[str, Provider] = {}
            for uuid in uuids:
                provider = self._entries.get(uuid)
                if provider is None:
                    return None
                self._entries.move_to_end(uuid)
                found[uuid] = provider
            return found

    def __len__(self) -> int:
        return len(self._entries)

    def forget(self, uuids: Iterable[str]) -> None:
        with self._lock:
            for uuid in uuids:
                self._entries.pop(uuid, None)
