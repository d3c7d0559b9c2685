"""Strict input models for the compute API (pure): a pydantic error becomes one `InvalidInput` at a JSON pointer.

Inputs are strict: `"64"` is not an integer and `"yes"` not a boolean; unknown
fields are refused. The pointer names the first offending field, never its value.

This is vocabulary shared by the capabilities behind the compute API (fleet,
tenants): it imports no capability and no HTTP layer. `InvalidInput` is a domain
error; the compute family renders it as INVALID_ARGUMENT (chalicelib/http/compute.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"

M = TypeVar("M", bound=BaseModel)


class InvalidInput(ValueError):
    """Input no repetition can make valid: where (a JSON pointer into the request) and a fixed sentence."""

    message = "The request is invalid."

    def __init__(self, field: str, message: str | None = None, **details: Any) -> None:
        super().__init__(message or self.message)
        if message:
            self.message = message
        self.field = field
        self.details = details


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class NoInput(StrictModel):
    """The input of a method that takes none: `{}` (any member is INVALID_ARGUMENT at it)."""


def pointer(location: Sequence[str | int], base: str = "") -> str:
    """A JSON pointer (RFC 6901) from a pydantic error location."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in location]
    return base + "".join(f"/{p}" for p in parts)


def parse(model: type[M], data: Any, base: str = "") -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        # pydantic marks a bad mapping key with a trailing "[key]" and validators with "function-..." steps:
        # neither is a member of the body.
        location = [p for p in first["loc"] if not (isinstance(p, str) and (p.startswith("function-") or p == "[key]"))]
        raise InvalidInput(pointer(location, base)) from None
