"""Inventory bodies: one record (POST, PUT one) and the whole set (PUT)."""

from __future__ import annotations

import copy
from typing import Any

from chalicelib.placement.schemas.common import MAX_FLOAT, RC_PATTERN, bounded_integer


def _record(required: list[str]) -> dict:
    return {
        "type": "object",
        "properties": {
            "resource_provider_generation": {"type": "integer"},
            "total": bounded_integer(1),
            "reserved": bounded_integer(0),
            "min_unit": bounded_integer(1),
            "max_unit": bounded_integer(1),
            "step_size": bounded_integer(1),
            "allocation_ratio": {"type": "number", "maximum": MAX_FLOAT},
        },
        "required": required,
        "additionalProperties": False,
    }


# PUT /resource_providers/{uuid}/inventories/{resource_class}
UPDATE_ONE = _record(["total", "resource_provider_generation"])

# POST /resource_providers/{uuid}/inventories (the class is in the body, no generation)
CREATE_ONE: dict[str, Any] = copy.deepcopy(_record(["total"]))
CREATE_ONE["properties"]["resource_class"] = {"type": "string", "pattern": RC_PATTERN}
CREATE_ONE["required"].append("resource_class")

# PUT /resource_providers/{uuid}/inventories. Upstream's schema leaves a key that is no class name
# unvalidated (an inventory record under it is refused later, as an unknown class); any other value makes it
# crash (500). Here that value must be an inventory record too, so such input is a 400.
REPLACE_ALL: dict[str, Any] = {
    "type": "object",
    "properties": {
        "resource_provider_generation": {"type": "integer"},
        "inventories": {"type": "object", "patternProperties": {RC_PATTERN: _record(["total"])},
                        "additionalProperties": _record(["total"])},
    },
    "required": ["resource_provider_generation", "inventories"],
    "additionalProperties": False,
}
