"""The Placement service over the process's DynamoDB client and table."""

from __future__ import annotations

from typing import Any

from chalicelib.placement.service import PlacementService
from chalicelib.placement.store import PlacementStore


def placement(svc: Any) -> PlacementService:
    return PlacementService(PlacementStore(svc.client, svc.table))
