"""Resource provider bodies and the GET /resource_providers query string."""

from __future__ import annotations

import copy
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chalicelib.http.family import Request
    from chalicelib.placement.list_filters import MemberOf

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

# Query parameters by the version that introduced them.
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


def parent_of(data: dict[str, Any]) -> str | None:
    """The body's parent_provider_uuid in its canonical spelling (bodies accept any uuid spelling)."""
    from chalicelib.placement.web import normal_uuid

    parent = data.get("parent_provider_uuid")
    return normal_uuid(parent) if parent else None


def member_of(request: Request, version: tuple[int, int]) -> MemberOf | None:
    """Every `member_of` of the query (1.3; several 1.24; forbidden 1.32), or None when there is none."""
    from chalicelib.placement.list_filters import parse_member_of

    values = request.query.get("member_of") or []
    if not values or version < (1, 3):
        return None
    return parse_member_of(values, several=version >= (1, 24), forbidden=version >= (1, 32))


def resources(params: dict[str, str]) -> dict[str, int] | None:
    """The `resources` filter (1.4; the schema admits it from then), or None when absent."""
    from chalicelib.placement.list_filters import parse_resources

    return parse_resources(params["resources"]) if "resources" in params else None


def required_traits(values: list[str], features: Features) -> TraitQuery:
    """Every `required` parameter sent (1.18): forbidden `!T` from 1.22, `in:` and repetition from 1.39."""
    return parse_required(values, allow_forbidden=features.forbidden_traits, allow_any=features.any_traits)
