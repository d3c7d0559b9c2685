"""Trait bodies and the GET /traits query string (as Placement's placement/schemas/trait.py)."""

from __future__ import annotations

from typing import Any

TRAIT: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 255}

SET_PROVIDER_TRAITS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "traits": {"type": "array", "items": TRAIT},
        "resource_provider_generation": {"type": "integer"},
    },
    "required": ["traits", "resource_provider_generation"],
    "additionalProperties": False,
}

LIST_QUERY: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "associated": {"type": "string"}},
    "additionalProperties": False,
}
