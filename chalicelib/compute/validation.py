"""Strict input models for the compute API (pure): pydantic errors become one INVALID_ARGUMENT at a JSON pointer.

Inputs are strict: `"64"` is not an integer and `"yes"` not a boolean; unknown
fields are refused. The pointer names the first offending field, never its value.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from chalicelib.compute.errors import InvalidArgument

NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
MAX_BODY_BYTES = 5 * 1024 * 1024

M = TypeVar("M", bound=BaseModel)


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def pointer(location: Sequence[str | int], base: str = "") -> str:
    """A JSON pointer (RFC 6901) from a pydantic error location."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in location]
    return base + "".join(f"/{p}" for p in parts)


def parse(model: type[M], data: Any, base: str = "") -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        location = [p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        raise InvalidArgument(pointer(location, base)) from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate object key")
    return dict(pairs)


def decode_object(raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object (`{}` when empty); anything else is INVALID_ARGUMENT at the root."""
    if not raw:
        return {}
    if len(raw) > MAX_BODY_BYTES:
        raise InvalidArgument("", "The request body is too large.")
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise InvalidArgument("", "The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise InvalidArgument("", "The request body must be a JSON object.")
    return data
