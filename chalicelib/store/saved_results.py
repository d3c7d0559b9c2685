"""Saved-result items (pk=REQ#<site>#<operation>#<requestId>): reading one, and the Put that saves one.

Records expire through DynamoDB TTL after `idempotency_ttl_days` (at least 7 days).
"""

from __future__ import annotations

import json
import time
from typing import Any

from chalicelib.idempotency import SavedResult
from chalicelib.store.codec import to_item
from chalicelib.store.keys import ItemKey, key
from chalicelib.store.ops import Op
from chalicelib.store.schema import TTL_ATTRIBUTE


def request_key(site: str, operation: str, request_id: str) -> ItemKey:
    return key(f"REQ#{site}#{operation}#{request_id}")


def saved_result(item: dict[str, Any] | None) -> SavedResult | None:
    if item is None:
        return None
    return SavedResult(item["fp"], int(item["status"]), json.loads(item["body"]))


def save_result_op(
    table: str, site: str, operation: str, request_id: str, result: SavedResult, ttl_days: int
) -> Op:
    """A transaction Put that saves the result only if the requestId is still free."""
    now = int(time.time())
    pk = request_key(site, operation, request_id)
    return Op("saved_result", {
        "Put": {
            "TableName": table,
            "Item": {
                **pk,
                **to_item({
                    "fp": result.fingerprint,
                    "status": result.status,
                    "body": json.dumps(result.body, separators=(",", ":")),
                    "createdAt": now,
                    TTL_ATTRIBUTE: now + ttl_days * 86400,
                }),
            },
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    })
