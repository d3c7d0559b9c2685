"""Saved request results, scoped to (Site, operation, requestId): the pure part.

A saved result is returned again for the same content; the same requestId
with other content is `request_id_reused`. This module decides; the items and
the write that saves a result are in chalicelib/store/saved_results.py, the
loop that runs an idempotent command in chalicelib/store/commands.py. It
imports nothing of the store, so the decisions that fingerprint content stay pure.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from chalicelib.contract.results import rejected


def fingerprint(data: Any) -> str:
    """Content identity of a JSON document compared as data (key order and spacing ignored)."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


REQUEST_ID_REUSED = "request_id_reused"
REQUEST_ID_REUSED_MESSAGE = "This requestId was already used for different content."


@dataclass(frozen=True)
class SavedResult:
    fingerprint: str
    status: int
    body: dict[str, Any]


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
