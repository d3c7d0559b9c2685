"""Custom resource class names (POST body, PUT path)."""

from chalicelib.placement.schemas.common import CUSTOM_RC_PATTERN

CUSTOM_CLASS = {
    "type": "object",
    "properties": {"name": {"type": "string", "pattern": CUSTOM_RC_PATTERN, "maxLength": 255}},
    "required": ["name"],
    "additionalProperties": False,
}
