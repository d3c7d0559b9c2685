"""Request bodies: size limit, media type and JSON decoding, before any model sees them.

Validation against the contract's models is chalicelib/contract/validation.py.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from chalicelib.errors import BadRequest

MAX_BODY_BYTES = 5 * 1024 * 1024


class _NotAcceptedJson(Exception):
    """Valid JSON that we still cannot take as it is: a duplicate key, an integer too long to convert."""


def _reject_constant(_: str) -> Any:
    raise ValueError("NaN and Infinity are not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # With duplicate names, readers disagree on which value counts (json keeps the last, others the
    # first): refuse the object rather than pick one.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _NotAcceptedJson()
    return obj


def _integer(text: str) -> int:
    # Python refuses to convert more than sys.get_int_max_str_digits() (4,300) digits; such a number
    # is still JSON, and larger than every integer the contract bounds.
    try:
        return int(text)
    except ValueError as exc:
        raise _NotAcceptedJson() from exc


def _is_json(text: str) -> bool:
    """Whether the text is JSON at all, converting nothing and keeping every name."""
    try:
        json.loads(text, parse_float=str, parse_int=str, parse_constant=_reject_constant, object_pairs_hook=list)
    except (ValueError, RecursionError):
        return False
    return True


def is_json_media_type(content_type: str | None) -> bool:
    if content_type is None:
        return True  # API Gateway and Chalice treat a missing type as JSON
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def decode_json_object(raw: bytes | None, content_type: str | None) -> dict[str, Any]:
    """The body as a JSON object, numbers with fractions as Decimal (exact).

    400 `invalid_json` for what is no JSON; 400 `invalid_request` for JSON that is
    no object, has an object with a name twice, or an integer too long to convert.
    """
    raw = raw or b""
    if len(raw) > MAX_BODY_BYTES:
        raise BadRequest("too_large")
    if not is_json_media_type(content_type):
        raise BadRequest("unsupported_media_type")
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_float=Decimal, parse_int=_integer,
                          parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except _NotAcceptedJson:
        # Found before the parser reached the end: the rest must still be JSON for this to be the answer.
        raise BadRequest("invalid_request" if _is_json(text) else "invalid_json") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadRequest("invalid_json") from exc
    if not isinstance(data, dict):
        raise BadRequest("invalid_request")
    return data
