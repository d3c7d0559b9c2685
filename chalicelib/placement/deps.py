"""The one factory of Placement's service: every caller (the Placement routes, the commitment sync) gets the
same store, whose transactions carry every invariant other packages rely on (chalicelib/placement/items.py);
there is no optional hook to forget."""

from __future__ import annotations

from typing import Any

from chalicelib.config import PlacementCandidateSettings
from chalicelib.placement.service import PlacementService
from chalicelib.placement.store import PlacementStore


def placement_service(client: Any, table: str,
                      candidates: PlacementCandidateSettings | None = None) -> PlacementService:
    """`candidates` None: read from the environment (RP_PLACEMENT_MAX_CANDIDATES, ..._CANDIDATE_STRATEGY)."""
    return PlacementService(PlacementStore(client, table), candidates)

