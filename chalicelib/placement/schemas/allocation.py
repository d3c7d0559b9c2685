"""Allocation bodies in their four formats: list (1.0, +project/user 1.8), dict (1.12),
with consumer_generation (1.28); and POST /allocations (1.13, 1.28)."""

from __future__ import annotations

import copy
from typing import Any

from chalicelib.placement.schemas.common import RC_PATTERN, UUID_PATTERN, id_string

_RESOURCES: dict[str, Any] = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {RC_PATTERN: {"type": "integer", "minimum": 1}},
    "additionalProperties": False,
}

LIST_1_0: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "resource_provider": {
                        "type": "object",
                        "properties": {"uuid": {"type": "string", "format": "uuid"}},
                        "additionalProperties": False,
                        "required": ["uuid"],
                    },
                    "resources": _RESOURCES,
                },
                "required": ["resource_provider", "resources"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["allocations"],
    "additionalProperties": False,
}

LIST_1_8: dict[str, Any] = copy.deepcopy(LIST_1_0)
LIST_1_8["properties"]["project_id"] = id_string()
LIST_1_8["properties"]["user_id"] = id_string()
LIST_1_8["required"].extend(["project_id", "user_id"])

DICT_1_12: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "object",
            "minProperties": 1,
            "patternProperties": {
                UUID_PATTERN: {
                    "type": "object",
                    "properties": {"generation": {"type": "integer"}, "resources": _RESOURCES},
                    "required": ["resources"],
                    "additionalProperties": False,
                }
            },
            "additionalProperties": False,
        },
        "project_id": id_string(),
        "user_id": id_string(),
    },
    "additionalProperties": False,
    "required": ["allocations", "project_id", "user_id"],
}

# A consumer entry whose allocations may be empty (removal), as POST and 1.28 PUT allow.
_EMPTIABLE: dict[str, Any] = copy.deepcopy(DICT_1_12)
_EMPTIABLE["properties"]["allocations"]["minProperties"] = 0

DICT_1_28: dict[str, Any] = copy.deepcopy(_EMPTIABLE)
DICT_1_28["properties"]["consumer_generation"] = {"type": ["integer", "null"], "additionalProperties": False}
DICT_1_28["required"].append("consumer_generation")


def _post(entry: dict) -> dict:
    return {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": False,
        "patternProperties": {UUID_PATTERN: entry},
    }


POST_1_13 = _post(_EMPTIABLE)
POST_1_28 = _post(DICT_1_28)


def for_put(version: tuple[int, int]) -> dict:
    if version >= (1, 28):
        return DICT_1_28
    if version >= (1, 12):
        return DICT_1_12
    if version >= (1, 8):
        return LIST_1_8
    return LIST_1_0


def for_post(version: tuple[int, int]) -> dict:
    return POST_1_28 if version >= (1, 28) else POST_1_13
