"""The inventories this process last read, per provider: what a claim for new consumers is decided from
without reading first (docs/decisions/0050-claims-on-known-inventories.md).

An entry is only a guess. The write made from it is conditioned on the provider's identity (`createdUs`),
its inventory version and room for every class it grows, so a stale entry costs one canceled transaction,
never a wrong write. Usage is not kept: the write's condition is the capacity check.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from chalicelib.placement.lru import BoundedLru
from chalicelib.placement.models import Provider


class KnownInventories:
    """Provider uuid -> the provider as last read (its usage dropped), at most `capacity` of them, least
    recently used out first. `capacity` 0 keeps nothing: every claim reads first."""

    def __init__(self, capacity: int) -> None:
        self._entries: BoundedLru[str, Provider] = BoundedLru(capacity)

    def remember(self, providers: Iterable[Provider | None]) -> None:
        """Keep these (as read, consistently, with their inventories and write tokens). A provider without
        a creation stamp (an item older than the stamp) cannot be told from a later one of the same uuid:
        not kept."""
        self._entries.put_all((p.uuid, replace(p, usages={})) for p in providers
                              if p is not None and p.created_at and not p.fence)

    def known(self, uuids: Iterable[str]) -> dict[str, Provider] | None:
        """Every one of these, or None when any is not known."""
        return self._entries.get_all(uuids)

    def __len__(self) -> int:
        return len(self._entries)

    def forget(self, uuids: Iterable[str]) -> None:
        self._entries.drop(uuids)
