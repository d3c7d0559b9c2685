"""Saved request results, scoped to (Site, operation, requestId).

A saved result is returned again for the same content; the same requestId
with other content is `request_id_reused`. Records expire through DynamoDB
TTL after `idempotency_ttl_days` (at least 7 days).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from chalicelib.contract.results import rejected
from chalicelib.store.codec import key, to_item
from chalicelib.store.schema import TTL_ATTRIBUTE


def fingerprint(data: Any) -> str:
    """Content identity of a JSON document compared as data (key order and spacing ignored)."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def request_key(site: str, operation: str, request_id: str) -> dict[str, Any]:
    return key(f"REQ#{site}#{operation}#{request_id}")


REQUEST_ID_REUSED = "request_id_reused"
REQUEST_ID_REUSED_MESSAGE = "This requestId was already used for different content."


@dataclass(frozen=True)
class SavedResult:
    fingerprint: str
    status: int
    body: dict[str, Any]


def saved_result(item: dict[str, Any] | None) -> SavedResult | None:
    if item is None:
        return None
    return SavedResult(item["fp"], int(item["status"]), json.loads(item["body"]))


def replay_answer(
    saved: SavedResult | None, content: str, request_id: str, allocation_id: str
) -> tuple[int, dict[str, Any]] | None:
    """The answer owed for a requestId already saved: its result for the same content,
    `request_id_reused` for other content (nothing changes, the saved one is kept); None when free."""
    if saved is None:
        return None
    if saved.fingerprint == content:
        return saved.status, saved.body
    return 422, rejected(request_id, allocation_id, REQUEST_ID_REUSED, REQUEST_ID_REUSED_MESSAGE)


def save_result_op(
    table: str, site: str, operation: str, request_id: str, result: SavedResult, ttl_days: int
) -> dict[str, Any]:
    """A transaction Put that saves the result only if the requestId is still free."""
    now = int(time.time())
    pk = request_key(site, operation, request_id)
    return {
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
    }
