"""Every route goes through `dispatch`: authenticate, authorize, check the method, run, answer.

Authentication comes first, before the method or the body are looked at; a
key opens only its own audience (one Site's paths, or the service's `/api`
routes). Nothing but a `{"code": ...}` body leaves on an error, and no 5xx
but 503: an unexpected failure is logged and answered as `unavailable`, which
a client may safely repeat.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chalice import Response

from chalicelib.errors import MethodNotAllowed, ServiceError, Unauthorized, Unavailable
from chalicelib.http.responses import error_body, json_response
from chalicelib.observability import logger, record_request
from chalicelib.runtime import Services, services

SITE = "site"
SERVICE = "service"

Handler = Callable[[Services, Any, dict[str, str]], tuple[int, dict[str, Any]]]

ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
ANY_CONTENT_TYPE = ["*/*"]


@dataclass(frozen=True)
class Operation:
    name: str
    method: str
    audience: str
    handler: Handler


def _authorize(svc: Services, operation: Operation, request: Any, params: dict[str, str]) -> None:
    principal = svc.authenticator.principal(request.headers.get("authorization"))
    if operation.audience == SITE:
        if principal.site is None or principal.site != params.get("site"):
            raise Unauthorized()
    elif not principal.is_service:
        raise Unauthorized()


def dispatch(request: Any, operation: Operation, params: dict[str, str]) -> Response:
    started = time.perf_counter()
    headers: dict[str, str] = {}
    try:
        svc = services()
        _authorize(svc, operation, request, params)
        if request.method != operation.method:
            headers["Allow"] = operation.method
            raise MethodNotAllowed()
        status, body = operation.handler(svc, request, params)
    except ServiceError as exc:
        status, body = exc.status, error_body(exc.code)
        if isinstance(exc, Unauthorized):
            headers["WWW-Authenticate"] = "Bearer"
        if isinstance(exc, Unavailable):
            # The class only: a store error's message may quote item values.
            logger.warning("unavailable", extra={"operation": operation.name, "cause": type(exc.__cause__).__name__})
    except Exception:  # noqa: BLE001 - the contract allows no 5xx but 503
        logger.exception("unexpected failure", extra={"operation": operation.name})
        status, body = 503, error_body("unavailable")
    record_request(
        operation=operation.name,
        status=status,
        latency_ms=(time.perf_counter() - started) * 1000,
        request=request,
        params=params,
        body=body,
    )
    return json_response(status, body, headers)
