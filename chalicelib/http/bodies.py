"""Request bodies: size limit, media type and JSON decoding, before any model sees them."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chalicelib.errors import BadRequest

MAX_BODY_BYTES = 5 * 1024 * 1024

M = TypeVar("M", bound=BaseModel)


def _reject_constant(_: str) -> Any:
    raise ValueError("NaN and Infinity are not JSON")


def is_json_media_type(content_type: str | None) -> bool:
    if content_type is None:
        return True  # API Gateway and Chalice treat a missing type as JSON
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def decode_json_object(raw: bytes | None, content_type: str | None) -> dict[str, Any]:
    """The body as a JSON object, numbers with fractions as Decimal (exact)."""
    raw = raw or b""
    if len(raw) > MAX_BODY_BYTES:
        raise BadRequest("too_large")
    if not is_json_media_type(content_type):
        raise BadRequest("unsupported_media_type")
    try:
        data = json.loads(raw.decode("utf-8"), parse_float=Decimal, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadRequest("invalid_json") from exc
    if not isinstance(data, dict):
        raise BadRequest("invalid_request")
    return data


def validate_model(model: type[M], data: dict[str, Any]) -> M:
    """Validate against a contract model; the error names only a fixed code, never the input."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        kinds = {err["type"] for err in exc.errors(include_url=False, include_input=False)}
        raise BadRequest("unknown_component" if "unknown_component" in kinds else "invalid_request") from None
