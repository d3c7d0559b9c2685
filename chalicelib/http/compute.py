"""The compute family (`/api/compute/...`, tenant principals) and the operator routes that share its envelope.

Errors are `{"error": {"code", "message", "details"}}`; a wrong method and an
unknown method name are both NOT_FOUND, after authentication. A principal of
another family (a Site, service or Placement key on a compute method; a tenant
token on an operator route) is UNAUTHENTICATED.
"""

from __future__ import annotations

from chalicelib.auth.principals import Principal
from chalicelib.compute import errors as ce
from chalicelib.errors import BadRequest, MethodNotAllowed, NotFound, ServiceError, Unauthorized, Unavailable
from chalicelib.http.family import Family, Forbidden, Reply, Request, bearer_credential
from chalicelib.observability import logger


def _as_compute_error(error: Exception, request: Request) -> ce.ComputeError:
    if isinstance(error, ce.ComputeError):
        return error
    if isinstance(error, Forbidden):
        return ce.PermissionDenied(method=error.route.name, permission=error.grant)
    if isinstance(error, Unauthorized):
        return ce.Unauthenticated()
    if isinstance(error, NotFound | MethodNotAllowed):
        return ce.NotFound()
    if isinstance(error, Unavailable):
        logger.warning("unavailable", extra={"operation": request.operation, "cause": _cause(error)})
        return ce.Unavailable()
    if isinstance(error, BadRequest):
        return ce.InvalidArgument("")
    if not isinstance(error, ServiceError):
        logger.error("unexpected failure", exc_info=error, extra={"operation": request.operation})
    return ce.Unavailable()


def _cause(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    return type(cause or error).__name__


class ComputeFamily(Family):
    name = "compute"
    prefixes: tuple[str, ...] = ("/api/compute",)
    wrong_method_needs_grant = False

    def credential(self, request: Request) -> str | None:
        return bearer_credential(request)

    def accepts(self, principal: Principal) -> bool:
        return principal.kind == "tenant"

    def render(self, request: Request, error: Exception) -> Reply:
        compute_error = _as_compute_error(error, request)
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
