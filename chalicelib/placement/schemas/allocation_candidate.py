"""GET /allocation_candidates' query string by microversion (as Placement 16.0.0 validates it, before
candidate_query.py parses the values)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from chalicelib.placement.candidate_query import GROUP_SUFFIX, GROUP_SUFFIX_1_33

_1_10: dict[str, Any] = {
    "type": "object",
    "properties": {"resources": {"type": "string"}},
    "required": ["resources"],
    "additionalProperties": False,
}
_1_16 = copy.deepcopy(_1_10)
_1_16["properties"]["limit"] = {"type": ["integer", "string"], "pattern": "^[1-9][0-9]*$", "minimum": 1,
                                "minLength": 1}
_1_17 = copy.deepcopy(_1_16)
_1_17["properties"]["required"] = {"type": ["string"]}
_1_21 = copy.deepcopy(_1_17)
_1_21["properties"]["member_of"] = {"type": ["string"]}

# 1.25: resources, required and member_of become patterns with a group suffix.
_1_25 = copy.deepcopy(_1_21)
for _name in ("resources", "required", "member_of"):
    del _1_25["properties"][_name]
del _1_25["required"]
_1_25["patternProperties"] = {f"^{kind}({GROUP_SUFFIX})?$": {"type": "string"}
                              for kind in ("resources", "required", "member_of")}
_1_25["properties"]["group_policy"] = {"type": "string", "enum": ["none", "isolate"]}
_1_31 = copy.deepcopy(_1_25)
_1_31["patternProperties"][f"^in_tree({GROUP_SUFFIX})?$"] = {"type": "string"}
_1_33 = copy.deepcopy(_1_31)
_1_33["patternProperties"] = {f"^{kind}({GROUP_SUFFIX_1_33})?$": {"type": "string"}
                              for kind in ("resources", "required", "member_of", "in_tree")}
_1_35 = copy.deepcopy(_1_33)
_1_35["properties"]["root_required"] = {"type": ["string"]}
_1_36 = copy.deepcopy(_1_35)
_1_36["properties"]["same_subtree"] = {"type": ["string"]}

_BY_VERSION: list[tuple[tuple[int, int], dict[str, Any]]] = [
    ((1, 36), _1_36), ((1, 35), _1_35), ((1, 33), _1_33), ((1, 31), _1_31), ((1, 25), _1_25),
    ((1, 21), _1_21), ((1, 17), _1_17), ((1, 16), _1_16),
]


@cache
def list_query(version: tuple[int, int]) -> dict[str, Any]:
    return next((schema for since, schema in _BY_VERSION if version >= since), _1_10)
