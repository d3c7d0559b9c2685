"""The agent contract's family: `Authorization: Bearer`, `{"code": ...}` errors, no 5xx but 503.

An unexpected failure is logged and answered as `unavailable`, which an agent
may safely repeat. A key that lacks the route's grant (another Site's key, a
Site key on the service's routes) is 401, as the contract has always answered.
"""

from __future__ import annotations

from chalicelib.auth.principals import Principal
from chalicelib.contract.validation import InvalidInput
from chalicelib.errors import MethodNotAllowed, ServiceError, Unauthorized, Unavailable
from chalicelib.http.family import Family, Forbidden, Reply, Request, bearer_credential
from chalicelib.observability import logger, record_request

UNAUTHORIZED_HEADERS = {"WWW-Authenticate": "Bearer"}


def error_body(code: str) -> dict[str, str]:
    return {"code": code}


class ContractFamily(Family):
    name = "contract"
    prefixes = ("/resource-provisioning", "/api/resource-provisioning")

    def credential(self, request: Request) -> str | None:
        return bearer_credential(request)

    def accepts(self, principal: Principal) -> bool:
        return principal.kind in ("site", "service")

    def render(self, request: Request, error: Exception) -> Reply:
        if isinstance(error, Forbidden):
            error = Unauthorized()
        if not isinstance(error, ServiceError):
            logger.error("unexpected failure", exc_info=error, extra={"operation": request.operation})
            error = Unavailable()
        headers: dict[str, str] = {}
        if isinstance(error, Unauthorized):
            headers.update(UNAUTHORIZED_HEADERS)
        elif isinstance(error, MethodNotAllowed) and error.allowed:
            headers["Allow"] = ", ".join(sorted(error.allowed))
        elif isinstance(error, InvalidInput):
            # Where and which rule, for whoever reads the log; the answer stays the code alone.
            logger.info("invalid request", extra={"operation": request.operation, "code": error.code,
                                                  **error.log_fields()})
        elif isinstance(error, Unavailable):
            # The class only: a store error's message may quote item values.
            logger.warning("unavailable", extra={"operation": request.operation, "cause": _cause_name(error)})
        return Reply(error.status, error_body(error.code), headers)

    def record(self, request: Request, reply: Reply, latency_ms: float) -> None:
        record_request(operation=request.operation, status=reply.status, latency_ms=latency_ms,
                       request=request, params=request.params, body=reply.body)


def _cause_name(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    return type(cause).__name__ if cause is not None else type(error).__name__


CONTRACT = ContractFamily()
