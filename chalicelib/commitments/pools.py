"""Where the commitment sync reads pools: one small interface, and its implementation over fleet's store.

A pool is a Placement resource provider whose uuid is the pool's id (issue 9). The sync
needs, per pool of the commitments tenant: id, name, availability zone, whether it is
active, and the provider's inventories and usage as Placement keeps them, so that whether
a hold fits is decided by Placement's own allocation rule (rules.placement_refusal). An
archived pool is not active (and its inventories have reserved = total, so it has no room either).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from chalicelib.commitments.models import Pool
from chalicelib.fleet.models import POOLS
from chalicelib.fleet.store import FleetStore
from chalicelib.placement.models import Provider


class PoolSource(Protocol):
    def pools(self, tenant: str) -> list[Pool]:
        """The tenant's pools (archived ones with active=False), each with its provider's free capacity."""
        ...


def pool_view(pool_id: str, name: str, fields: Mapping[str, Any], archived: bool,
              provider: Provider | None) -> Pool:
    return Pool(name=name, availability_zone=str(fields.get("availabilityZone") or ""),
                active=not archived and provider is not None,
                inventories=dict(provider.inventories) if provider is not None else {},
                used=dict(provider.usages) if provider is not None else {}, id=pool_id)


class FleetPoolSource:
    """Pools from fleet's store (read only): one consistent snapshot of the tenant and its pools' providers."""

    def __init__(self, client: Any, table: str) -> None:
        self._store = FleetStore(client, table)

    def pools(self, tenant: str) -> list[Pool]:
        snapshot = self._store.snapshot(tenant, providers=True)
        return [pool_view(obj.id, obj.name or obj.id, obj.fields, obj.archived, snapshot.providers.get(obj.id))
                for obj in snapshot.state.of(POOLS).values()]
