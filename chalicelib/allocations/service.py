"""`GET /resource-provisioning/{site}/allocations/{allocationId}`."""

from __future__ import annotations

from typing import Any

from chalicelib.allocations.repository import AllocationRepository
from chalicelib.contract.types import is_id
from chalicelib.errors import BadRequest, NotFound
from chalicelib.store.table import TableAccess


def get_allocation(db: TableAccess, site: str, allocation_id: str) -> dict[str, Any]:
    if not is_id(allocation_id):
        raise BadRequest("invalid_allocation_id")
    record = AllocationRepository(db.client, db.table).get(allocation_id)
    # Another Site's allocation is indistinguishable from none at all.
    if record is None or record.site != site:
        raise NotFound()
    return {
        "allocationId": record.allocation_id,
        "lifecycle": record.lifecycle,
        "revision": record.revision,
        "reasons": list(record.status.reasons),
        "observedAt": record.observed_at,
    }
