"""Placement's error codes and its error body, in one place.

The body follows the API-WG guideline Placement implements:
`{"errors": [{"status", "title", "detail", "code" (from 1.23), "request_id"}]}`; `title`
is the HTTP reason phrase and `detail` is webob's explanation of the status followed by
the handler's own text, so the substrings Placement's tests look for read the same.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

# The `code` values (Placement's placement/errors.py names the same strings).
UNDEFINED = "placement.undefined_code"
CONCURRENT_UPDATE = "placement.concurrent_update"
INVENTORY_INUSE = "placement.inventory.inuse"
DUPLICATE_NAME = "placement.duplicate_name"
PROVIDER_IN_USE = "placement.resource_provider.inuse"
PROVIDER_NOT_FOUND = "placement.resource_provider.not_found"
QUERY_BAD_VALUE = "placement.query.bad_value"

CODE_MICROVERSION = (1, 23)

# webob's explanation of each status, which Placement puts before the detail.
EXPLANATIONS = {
    400: "The server could not comply with the request since it is either malformed or otherwise incorrect.",
    401: "This server could not verify that you are authorized to access the document you requested.",
    404: "The resource could not be found.",
    405: "The method specified is not allowed for this resource.",
    406: "The resource could not be generated that was acceptable to your browser.",
    409: "There was a conflict when trying to complete your request.",
    415: "The request media type is not supported by this server.",
    500: "The server has either erred or is incapable of performing the requested operation.",
    503: "The server is currently unavailable. Please try again at a later time.",
}


class PlacementError(Exception):
    """An answer in Placement's error format: status, the handler's detail, the error code."""

    def __init__(self, status: int, detail: str = "", code: str = UNDEFINED,
                 headers: dict[str, str] | None = None, extra: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code
        self.headers = headers or {}
        self.extra = extra or {}


def bad_request(detail: str, code: str = UNDEFINED) -> PlacementError:
    return PlacementError(400, detail, code)


def not_found(detail: str = "", code: str = UNDEFINED) -> PlacementError:
    return PlacementError(404, detail, code)


def conflict(detail: str, code: str = UNDEFINED) -> PlacementError:
    return PlacementError(409, detail, code)


def concurrent_update(detail: str) -> PlacementError:
    return PlacementError(409, detail, CONCURRENT_UPDATE)


def error_body(error: PlacementError, request_id: str, version: tuple[int, int] | None) -> dict[str, Any]:
    """The JSON body of an error answer; `version` None when negotiation itself failed."""
    explanation = EXPLANATIONS.get(error.status, "")
    detail = f"{explanation}\n\n {error.detail}  " if error.detail else f"{explanation}\n\n   "
    entry: dict[str, Any] = {
        "status": error.status,
        "title": HTTPStatus(error.status).phrase,
        "detail": detail,
    }
    if version is not None and version >= CODE_MICROVERSION:
        entry["code"] = error.code
    entry["request_id"] = request_id
    entry.update(error.extra)
    return {"errors": [entry]}
