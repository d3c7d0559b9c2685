"""Allocation items (pk=ALLOC#<id>) and the conditions that order writes to them.

Every write carries the version it was computed from; a concurrent writer
makes the condition fail and the service recomputes from a fresh read.
"""

from __future__ import annotations

from typing import Any

from chalicelib.allocations.models import AllocationRecord
from chalicelib.allocations.rules import Observed, Status
from chalicelib.store.codec import to_item
from chalicelib.store.keys import ItemKey, key
from chalicelib.store.ops import Op, get_item, query_pages
from chalicelib.store.size import fits

__all__ = [
    "AllocationRecord", "AllocationRepository", "allocation_key", "check_op", "item_of", "put_op",
    "record_from_item", "storable",
]


def allocation_key(allocation_id: str) -> ItemKey:
    return key(f"ALLOC#{allocation_id}")


def project_index_key(site: str, project_id: str) -> str:
    return f"ALLOCP#{site}#{project_id}"


def record_from_item(item: dict[str, Any] | None) -> AllocationRecord | None:
    if item is None:
        return None
    observed = Observed(
        project_id=item.get("projectId"),
        provider_state=item["providerState"],
        paused=bool(item["paused"]),
        native_scope=item.get("nativeScope"),
        configured=item["configured"],
        applied=item.get("applied"),
    )
    return AllocationRecord(
        allocation_id=item["pk"].split("#", 1)[1],
        site=item["site"],
        resource_ref=item["resourceRef"],
        offering_ref=item["offeringRef"],
        provider_project_ref=item["providerProjectRef"],
        status=Status(observed, item["lifecycle"], tuple(item.get("reasons") or ())),
        used=item.get("used"),
        observed_at=item["observedAt"],
        fingerprint=item["fp"],
        revision=int(item["revision"]),
        version=int(item["version"]),
    )


def item_of(record: AllocationRecord) -> dict[str, Any]:
    o = record.status.observed
    values: dict[str, Any] = {
        "site": record.site,
        "resourceRef": record.resource_ref,
        "offeringRef": record.offering_ref,
        "providerProjectRef": record.provider_project_ref,
        "projectId": o.project_id,
        "providerState": o.provider_state,
        "paused": o.paused,
        "nativeScope": o.native_scope,
        "configured": dict(o.configured),
        "applied": dict(o.applied) if o.applied is not None else None,
        "used": record.used,
        "observedAt": record.observed_at,
        "fp": record.fingerprint,
        "lifecycle": record.status.lifecycle,
        "reasons": list(record.status.reasons),
        "revision": record.revision,
        "version": record.version,
    }
    # Sparse index: only live allocations with a Project are found by (site, project).
    if o.project_id is not None and record.status.lifecycle != "retired":
        values["gsi1pk"] = project_index_key(record.site, o.project_id)
        values["gsi1sk"] = record.allocation_id
    return {**allocation_key(record.allocation_id), **to_item(values)}


def storable(record: AllocationRecord) -> bool:
    """Whether the record's item is within DynamoDB's item size and name limits (see store/size.py)."""
    return fits(item_of(record))


def _version_condition(expected_version: int | None) -> dict[str, Any]:
    if expected_version is None:
        return {"ConditionExpression": "attribute_not_exists(pk)"}
    return {
        "ConditionExpression": "version = :v",
        "ExpressionAttributeValues": {":v": {"N": str(expected_version)}},
    }


def put_op(table: str, record: AllocationRecord, expected_version: int | None) -> Op:
    return Op("allocation", {"Put": {"TableName": table, "Item": item_of(record),
                                     **_version_condition(expected_version)}})


def check_op(table: str, allocation_id: str, expected_version: int | None) -> Op:
    return Op("allocation", {"ConditionCheck": {"TableName": table, "Key": allocation_key(allocation_id),
                                                **_version_condition(expected_version)}})


class AllocationRepository:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def get(self, allocation_id: str) -> AllocationRecord | None:
        return record_from_item(get_item(self._client, self._table, allocation_key(allocation_id)))

    def project_has_live_allocation(self, site: str, project_id: str) -> bool:
        # One page of at most one key from the sparse index (GSIs read eventually consistent).
        first = next(query_pages(
            self._client, self._table, IndexName="gsi1", Limit=1, ConsistentRead=False,
            KeyConditionExpression="gsi1pk = :p",
            ExpressionAttributeValues={":p": {"S": project_index_key(site, project_id)}},
        ))
        return bool(first)
