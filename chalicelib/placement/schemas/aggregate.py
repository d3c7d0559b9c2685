"""Aggregates bodies (1.1: a list of uuids; 1.19: with the provider's generation)."""

from __future__ import annotations

import copy
from typing import Any

AGGREGATES_LIST: dict[str, Any] = {"type": "array", "items": {"type": "string", "format": "uuid"},
                                   "uniqueItems": True}
PUT_1_1: dict[str, Any] = copy.deepcopy(AGGREGATES_LIST)
PUT_1_19: dict[str, Any] = {
    "type": "object",
    "properties": {"aggregates": copy.deepcopy(AGGREGATES_LIST), "resource_provider_generation": {"type": "integer"}},
    "required": ["aggregates", "resource_provider_generation"],
    "additionalProperties": False,
}


def put(version: tuple[int, int]) -> dict[str, Any]:
    return PUT_1_19 if version >= (1, 19) else PUT_1_1
