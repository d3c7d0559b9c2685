"""Validating decoded JSON against a contract model, with a fixed error code and never the input."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chalicelib.errors import BadRequest

M = TypeVar("M", bound=BaseModel)


def validate_model(model: type[M], data: dict[str, Any]) -> M:
    """Validate against a contract model; the error names only a fixed code, never the input."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        kinds = {err["type"] for err in exc.errors(include_url=False, include_input=False)}
        raise BadRequest("unknown_component" if "unknown_component" in kinds else "invalid_request") from None
