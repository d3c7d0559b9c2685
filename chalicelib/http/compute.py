"""The compute family (`/api/compute/...`, tenant principals) and the operator routes that share its envelope.

Errors are `{"error": {"code", "message", "details"}}`; a wrong method and an
unknown method name are both NOT_FOUND, after authentication. A principal of
another family (a Site, service or Placement key on a compute method; a tenant
token on an operator route) is UNAUTHENTICATED.

The capabilities behind these routes (fleet, tenants) raise their own domain
errors; `RENDERED` is the one place they become the envelope's codes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from chalicelib.auth.principals import Principal
from chalicelib.compute import errors as ce
from chalicelib.compute.validation import InvalidInput
from chalicelib.errors import BadRequest, MethodNotAllowed, NotFound, ServiceError, Unauthorized, Unavailable
from chalicelib.fleet import errors as fleet
from chalicelib.http.bodies import MAX_BODY_BYTES
from chalicelib.http.family import Family, Forbidden, Reply, Request, bearer_credential
from chalicelib.observability import logger
from chalicelib.tenants import errors as tenants


def _cause(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    return type(cause or error).__name__


def _unavailable(error: Any, operation: str) -> ce.ComputeError:
    logger.warning("unavailable", extra={"operation": operation, "cause": _cause(error)})
    return ce.Unavailable()


def _unexpected(error: Any, operation: str) -> ce.ComputeError:
    logger.error("unexpected failure", exc_info=error, extra={"operation": operation})
    return ce.Unavailable()


def _as(code: type[ce.ComputeError]) -> Callable[[Any, str], ce.ComputeError]:
    """A domain error carrying `message` (None: the code's own sentence) and `details`, as this code."""
    return lambda error, _operation: code(error.message, **error.details)


# Exception type -> its envelope error; an error is rendered by the first of its classes (MRO order) listed here.
RENDERED: dict[type[BaseException], Callable[[Any, str], ce.ComputeError]] = {
    ce.ComputeError: lambda error, _operation: error,
    InvalidInput: lambda error, _operation: ce.InvalidArgument(error.field, error.message, **error.details),
    fleet.UnknownObject: _as(ce.NotFound),
    fleet.NameTaken: _as(ce.AlreadyExists),
    fleet.WrongState: _as(ce.InvalidState),
    fleet.PlanChanged: _as(ce.ConfigDrift),
    fleet.NotServed: _as(ce.Unsupported),
    fleet.CallRefused: _as(ce.PermissionDenied),
    fleet.Contended: _as(ce.Unavailable),
    tenants.UnknownPrincipal: lambda _error, _operation: ce.NotFound(),
    tenants.SiteNameTaken: lambda _error, _operation: ce.AlreadyExists(),
    Forbidden: lambda error, _operation: ce.PermissionDenied(method=error.route.name, permission=error.grant),
    Unauthorized: lambda _error, _operation: ce.Unauthenticated(),
    NotFound: lambda _error, _operation: ce.NotFound(),
    MethodNotAllowed: lambda _error, _operation: ce.NotFound(),
    Unavailable: _unavailable,
    BadRequest: lambda _error, _operation: ce.InvalidArgument(""),
    ServiceError: lambda _error, _operation: ce.Unavailable(),
    BaseException: _unexpected,
}


def as_compute_error(error: BaseException, operation: str = "") -> ce.ComputeError:
    """The envelope error for any exception (`operation` names the route in the log of a 503)."""
    render = next(RENDERED[cls] for cls in type(error).__mro__ if cls in RENDERED)
    return render(error, operation)


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
        raise ce.InvalidArgument("", "The request body is too large.")
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ce.InvalidArgument("", "The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise ce.InvalidArgument("", "The request body must be a JSON object.")
    return data


class ComputeFamily(Family):
    name = "compute"
    prefixes: tuple[str, ...] = ("/api/compute",)
    wrong_method_needs_grant = False

    def credential(self, request: Request) -> str | None:
        return bearer_credential(request)

    def accepts(self, principal: Principal) -> bool:
        return principal.kind == "tenant"

    def render(self, request: Request, error: Exception) -> Reply:
        compute_error = as_compute_error(error, request.operation)
        headers = {"WWW-Authenticate": "Bearer"} if compute_error.status == 401 else {}
        return Reply(compute_error.status, compute_error.body(), headers)


class OperatorFamily(ComputeFamily):
    """Routes for operators (the service key): tenants, fleet reconciliation, commitment sync."""

    name = "operator"
    prefixes = ("/api/tenants", "/api/fleet", "/api/commitments")

    def accepts(self, principal: Principal) -> bool:
        return principal.kind == "service"


COMPUTE = ComputeFamily()
OPERATOR = OperatorFamily()
