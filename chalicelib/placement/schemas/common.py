"""Patterns and bounds shared by the schemas."""

UUID_PATTERN = "^[0-9a-fA-F-]{36}$"
RC_PATTERN = "^[A-Z0-9_]+$"
CUSTOM_RC_PATTERN = "^CUSTOM_[A-Z0-9_]+$"
CONSUMER_TYPE_PATTERN = RC_PATTERN  # 1.38
# GET /usages?consumer_type= (1.38): a type, or `all` / `unknown` (upstream's `^all` is unanchored at its end).
CONSUMER_TYPE_GET_PATTERN = f"{CONSUMER_TYPE_PATTERN}|^all|^unknown$"
# A request group suffix from 1.33 (unanchored, as upstream's, where it is used as a patternProperties key).
GROUP_PATTERN_1_33 = "[a-zA-Z0-9_-]{1,64}"
MAX_INT = 2147483647
# The largest single-precision float: Placement stores allocation_ratio in a FLOAT column.
MAX_FLOAT = 3.40282e38


def bounded_integer(minimum: int) -> dict:
    return {"type": "integer", "maximum": MAX_INT, "minimum": minimum}


def id_string() -> dict:
    """project_id / user_id: 1..255 characters."""
    return {"type": "string", "minLength": 1, "maxLength": 255}
