"""The Placement service over the process's DynamoDB client and table (the composition root of Placement).

Inventory writes and deletes of a fleet pool's provider also move that tenant's fleet version, in the
same transaction (chalicelib/fleet/keys.py), so a fleet apply planned before such a write is CONFIG_DRIFT.
"""

from __future__ import annotations

from typing import Any

from chalicelib.fleet.keys import provider_write_items
from chalicelib.placement.service import PlacementService
from chalicelib.placement.store import PlacementStore


def placement(svc: Any) -> PlacementService:
    def fleet_items(provider_uuid: str, provider_name: str) -> list[dict[str, Any]]:
        return provider_write_items(svc.client, svc.table, provider_uuid, provider_name)

    return PlacementService(PlacementStore(svc.client, svc.table, provider_write_hook=fleet_items))
