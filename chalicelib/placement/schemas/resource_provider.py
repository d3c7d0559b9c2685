"""Resource provider bodies and the GET /resource_providers query string."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from chalicelib.placement.microversion import Features
from chalicelib.placement.traits import TraitQuery, parse_required

CREATE_1_0: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 200}, "uuid": {"type": "string", "format": "uuid"}},
    "required": ["name"],
    "additionalProperties": False,
}
CREATE_1_14: dict[str, Any] = copy.deepcopy(CREATE_1_0)
CREATE_1_14["properties"]["parent_provider_uuid"] = {
    "anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]
}

UPDATE_1_0: dict[str, Any] = copy.deepcopy(CREATE_1_0)
UPDATE_1_0["properties"].pop("uuid")
UPDATE_1_14: dict[str, Any] = copy.deepcopy(CREATE_1_14)
UPDATE_1_14["properties"].pop("uuid")

# Query parameters by the version that introduced them; those of unbuilt features are
# accepted by the schema and refused by the handler with a 400 that says so.
_LIST_PARAMS: list[tuple[tuple[int, int], str, dict]] = [
    ((1, 0), "name", {"type": "string"}),
    ((1, 0), "uuid", {"type": "string", "format": "uuid"}),
    ((1, 3), "member_of", {"type": "string"}),
    ((1, 4), "resources", {"type": "string"}),
    ((1, 14), "in_tree", {"type": "string", "format": "uuid"}),
    ((1, 18), "required", {"type": "string"}),
]


@cache
def list_query(version: tuple[int, int]) -> dict:
    return {
        "type": "object",
        "properties": {name: schema for since, name, schema in _LIST_PARAMS if version >= since},
        "additionalProperties": False,
    }


def create(version: tuple[int, int]) -> dict:
    return CREATE_1_14 if version >= (1, 14) else CREATE_1_0


def update(version: tuple[int, int]) -> dict:
    return UPDATE_1_14 if version >= (1, 14) else UPDATE_1_0


def required_traits(values: list[str], features: Features) -> TraitQuery:
    """Every `required` parameter sent (1.18): forbidden `!T` from 1.22, `in:` and repetition from 1.39."""
    return parse_required(values, allow_forbidden=features.forbidden_traits, allow_any=features.any_traits)
