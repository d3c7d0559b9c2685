"""The errors every capability raises; each API family renders them in its own shape.

Codes are fixed snake_case words and never carry any part of the input.
"""

from __future__ import annotations

from collections.abc import Sequence


class ConfigurationError(ValueError):
    """A setting that cannot be used; the message names the variable and what it must be, never its value."""


class ServiceError(Exception):
    status: int = 400
    default_code: str = "invalid_request"

    def __init__(self, code: str | None = None) -> None:
        self.code = code or self.default_code
        super().__init__(self.code)


class BadRequest(ServiceError):
    status = 400
    default_code = "invalid_request"


class Unauthorized(ServiceError):
    status = 401
    default_code = "unauthorized"


class NotFound(ServiceError):
    status = 404
    default_code = "not_found"


class MethodNotAllowed(ServiceError):
    status = 405
    default_code = "method_not_allowed"

    def __init__(self, code: str | None = None, *, allowed: Sequence[str] = ()) -> None:
        super().__init__(code)
        self.allowed = list(allowed)


class Unavailable(ServiceError):
    """The store (or a view) failed; the caller repeats the same request."""

    status = 503
    default_code = "unavailable"
