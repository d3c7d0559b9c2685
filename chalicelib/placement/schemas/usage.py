"""GET /usages query string (1.9)."""

from chalicelib.placement.schemas.common import id_string

TOTALS_QUERY = {
    "type": "object",
    "properties": {"project_id": id_string(), "user_id": id_string()},
    "required": ["project_id"],
    "additionalProperties": False,
}
