"""POST /reshaper bodies (1.30; allocations with `mappings` 1.34, with `consumer_type` 1.38): every provider's
whole new inventory, and the allocations of every consumer to rewrite, as POST /allocations of that version
but possibly empty."""

from __future__ import annotations

import copy
from typing import Any

from chalicelib.placement.schemas import allocation
from chalicelib.placement.schemas.common import UUID_PATTERN
from chalicelib.placement.schemas.inventory import REPLACE_ALL


def _reshaper(allocations: dict[str, Any]) -> dict[str, Any]:
    emptiable = copy.deepcopy(allocations)
    emptiable["minProperties"] = 0
    return {
        "type": "object",
        "properties": {
            "inventories": {
                "type": "object",
                "patternProperties": {UUID_PATTERN: REPLACE_ALL},
                "minProperties": 1,  # upstream: at least one, or there is no reason to call the reshaper
                "additionalProperties": False,
            },
            "allocations": emptiable,
        },
        "required": ["inventories", "allocations"],
        "additionalProperties": False,
    }


POST_1_30 = _reshaper(allocation.POST_1_28)
POST_1_34 = _reshaper(allocation.POST_1_34)
POST_1_38 = _reshaper(allocation.POST_1_38)


def for_post(version: tuple[int, int]) -> dict[str, Any]:
    if version >= (1, 38):
        return POST_1_38
    return POST_1_34 if version >= (1, 34) else POST_1_30
