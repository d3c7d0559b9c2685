"""How Placement reads a uuid it is sent (oslo's `is_uuid_like`): any spelling `uuid.UUID` reads, dashless,
braced and `urn:uuid:` ones included, compared without dashes. One rule for bodies, filters and queries."""

from __future__ import annotations

import uuid as uuidlib


def normal_uuid(value: str) -> str | None:
    """The canonical dashed form, or None when `value` is not a UUID."""
    try:
        parsed = uuidlib.UUID(value)
    except (ValueError, AttributeError, TypeError):
        return None
    stripped = value.lower().replace("urn:", "").replace("uuid:", "").strip("{}").replace("-", "")
    return str(parsed) if parsed.hex == stripped else None


def is_uuid_like(value: str) -> bool:
    return normal_uuid(value) is not None
