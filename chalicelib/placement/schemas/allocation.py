"""Allocation bodies in their formats: list (1.0, +project/user 1.8), dict (1.12), with
consumer_generation (1.28), with `mappings` (1.34), with a required `consumer_type` (1.38); and
POST /allocations (1.13, 1.28, 1.34, 1.38), each consumer's entry as the PUT body of its version."""

from __future__ import annotations

import copy
from typing import Any

from chalicelib.placement.schemas.common import (
    CONSUMER_TYPE_PATTERN,
    GROUP_PATTERN_1_33,
    RC_PATTERN,
    UUID_PATTERN,
    id_string,
)

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


# 1.34: the `mappings` of the allocation request the allocations came from (request group suffix -> the
# providers that satisfied it), as upstream: accepted, validated, and neither stored nor shown. Upstream's
# pattern is unanchored and there is no additionalProperties, so keys match as loosely as there.
MAPPINGS: dict[str, Any] = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {
        GROUP_PATTERN_1_33: {"type": "array", "minItems": 1, "items": {"type": "string", "format": "uuid"}},
    },
}

DICT_1_34: dict[str, Any] = copy.deepcopy(DICT_1_28)
DICT_1_34["properties"]["mappings"] = MAPPINGS

DICT_1_38: dict[str, Any] = copy.deepcopy(DICT_1_34)
DICT_1_38["properties"]["consumer_type"] = {
    "type": "string", "pattern": CONSUMER_TYPE_PATTERN, "minLength": 1, "maxLength": 255,
}
DICT_1_38["required"].append("consumer_type")

POST_1_13 = _post(_EMPTIABLE)
POST_1_28 = _post(DICT_1_28)
POST_1_34 = _post(DICT_1_34)
POST_1_38 = _post(DICT_1_38)


def for_put(version: tuple[int, int]) -> dict:
    if version >= (1, 38):
        return DICT_1_38
    if version >= (1, 34):
        return DICT_1_34
    if version >= (1, 28):
        return DICT_1_28
    if version >= (1, 12):
        return DICT_1_12
    if version >= (1, 8):
        return LIST_1_8
    return LIST_1_0


def for_post(version: tuple[int, int]) -> dict:
    if version >= (1, 38):
        return POST_1_38
    if version >= (1, 34):
        return POST_1_34
    return POST_1_28 if version >= (1, 28) else POST_1_13
