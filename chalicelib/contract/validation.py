"""Validating decoded JSON against a contract model, with a fixed error code and never the input.

The answer is the code alone (`{"code":"invalid_request"}`: the contract never echoes input). What
was wrong goes to the log only, as `InvalidInput.pointer` (a JSON pointer into the request, RFC 6901)
and `.rule` (pydantic's error type, e.g. `missing`, `string_too_long`); never a value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chalicelib.errors import BadRequest

M = TypeVar("M", bound=BaseModel)

# A pointer token is a name from the request (an unknown field's is attacker-chosen): only plain ones are kept.
_PLAIN_TOKEN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_RULE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class InvalidInput(BadRequest):
    """A 400 whose log line (never its body) says where the request broke which rule."""

    def __init__(self, code: str, pointer: str, rule: str, violations: int) -> None:
        super().__init__(code)
        self.pointer = pointer
        self.rule = rule
        self.violations = violations

    def log_fields(self) -> dict[str, Any]:
        return {"pointer": self.pointer, "rule": self.rule, "violations": self.violations}


def json_pointer(location: Sequence[int | str], data: Any) -> str:
    """The pointer to where pydantic's `loc` points in `data`.

    `loc` also names the members of a union it tried (a model's or a tag's name), which are no part of
    the document: a step that is not in the data is skipped, except the last (a missing field's name).
    """
    tokens: list[str] = []
    here = data
    for position, step in enumerate(location):
        last = position == len(location) - 1
        in_object = isinstance(here, dict) and isinstance(step, str) and step in here
        in_array = isinstance(here, list) and isinstance(step, int) and 0 <= step < len(here)
        if in_object or in_array:
            here = here[step]
        elif not last:
            continue
        token = str(step)
        tokens.append(token if _PLAIN_TOKEN.match(token) else "*")  # plain: nothing to escape (RFC 6901 ~0, ~1)
    return "".join(f"/{token}" for token in tokens)


def invalid_input(exc: ValidationError, data: Any, code: str = "invalid_request") -> InvalidInput:
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    if not errors:
        return InvalidInput(code, "", "invalid", 0)
    first = errors[0]
    rule = first["type"] if _RULE.match(first["type"]) else "invalid"
    return InvalidInput(code, json_pointer(first["loc"], data), rule, len(errors))


def validate_model(model: type[M], data: dict[str, Any]) -> M:
    """Validate against a contract model; the error names only a fixed code, never the input."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        kinds = {err["type"] for err in exc.errors(include_url=False, include_input=False)}
        raise invalid_input(exc, data, "unknown_component" if "unknown_component" in kinds
                            else "invalid_request") from None
