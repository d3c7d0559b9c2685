"""GET /usages query string (1.9; `consumer_type` 1.38)."""

import copy
from typing import Any

from chalicelib.placement.schemas.common import CONSUMER_TYPE_GET_PATTERN, id_string

TOTALS_QUERY: dict[str, Any] = {
    "type": "object",
    "properties": {"project_id": id_string(), "user_id": id_string()},
    "required": ["project_id"],
    "additionalProperties": False,
}

TOTALS_QUERY_1_38 = copy.deepcopy(TOTALS_QUERY)
TOTALS_QUERY_1_38["properties"]["consumer_type"] = {
    "type": "string", "pattern": CONSUMER_TYPE_GET_PATTERN, "minLength": 1, "maxLength": 255,
}


def totals_query(version: tuple[int, int]) -> dict:
    return TOTALS_QUERY_1_38 if version >= (1, 38) else TOTALS_QUERY
