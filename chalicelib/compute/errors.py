"""The compute API's errors (pure): `{"error": {"code", "message", "details"}}`.

Messages are fixed sentences; details name fields (JSON pointers), methods and
permissions, never input values or secrets.
"""

from __future__ import annotations

from typing import Any


class ComputeError(Exception):
    status = 400
    code = "INVALID_ARGUMENT"
    message = "The request is invalid."

    def __init__(self, message: str | None = None, **details: Any) -> None:
        super().__init__(message or self.message)
        if message:
            self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class InvalidArgument(ComputeError):
    status, code, message = 400, "INVALID_ARGUMENT", "The request is invalid."

    def __init__(self, field: str, message: str | None = None, **details: Any) -> None:
        super().__init__(message, field=field, **details)


class Unauthenticated(ComputeError):
    status, code, message = 401, "UNAUTHENTICATED", "A valid bearer token is required."


class PermissionDenied(ComputeError):
    status, code, message = 403, "PERMISSION_DENIED", "The principal lacks the permission this method needs."


class NotFound(ComputeError):
    status, code, message = 404, "NOT_FOUND", "Not found."


class AlreadyExists(ComputeError):
    status, code, message = 409, "ALREADY_EXISTS", "An object with this identity already exists."


class ConfigDrift(ComputeError):
    status, code, message = 409, "CONFIG_DRIFT", "The fleet changed since the plan was made."


class InvalidState(ComputeError):
    status, code, message = 422, "INVALID_STATE", "The object's state does not allow this change."


class Unsupported(ComputeError):
    status, code, message = 501, "UNSUPPORTED", "This request is not supported."


class Unavailable(ComputeError):
    status, code, message = 503, "UNAVAILABLE", "The service is unavailable; repeat the request."
