"""Placement as an API family of the app: microversion first, X-Auth-Token, Placement's errors
and headers on every answer."""

from __future__ import annotations

import logging
import uuid as uuidlib

from chalicelib import errors as service_errors
from chalicelib.auth.credentials import AmbiguousCredential, header_token
from chalicelib.auth.principals import Principal
from chalicelib.http.family import Family, Forbidden, Reply, Request
from chalicelib.placement import microversion
from chalicelib.placement.errors import PlacementError, error_body

logger = logging.getLogger(__name__)

REQUEST_ID_HEADER = "x-openstack-request-id"


def request_id(request: Request) -> str:
    """`req-<uuid>`, the same in the header and in errors[0].request_id."""
    raw = request.request_id or ""
    if raw.startswith("req-"):
        return raw
    try:
        return f"req-{uuidlib.UUID(raw)}"
    except ValueError:
        return f"req-{uuidlib.uuid5(uuidlib.NAMESPACE_OID, raw)}"


def _negotiated(request: Request) -> tuple[int, int] | None:
    try:
        return microversion.negotiate(request.headers)
    except PlacementError:
        return None


def as_placement_error(error: Exception) -> PlacementError:
    if isinstance(error, PlacementError):
        return error
    if isinstance(error, Forbidden):
        return PlacementError(403, "Policy does not allow this operation to be performed.")
    if isinstance(error, service_errors.Unauthorized):
        return PlacementError(401, "The request you have made requires authentication.")
    if isinstance(error, service_errors.MethodNotAllowed):
        allowed = sorted(getattr(error, "allowed", None) or [])
        headers = {"allow": ", ".join(allowed)} if allowed else {}
        return PlacementError(405, "", headers=headers)
    if isinstance(error, service_errors.NotFound):
        return PlacementError(404, "")
    if isinstance(error, service_errors.Unavailable):
        return PlacementError(503, "The data store did not answer; nothing was changed. Retry the request.")
    if isinstance(error, service_errors.BadRequest):
        return PlacementError(400, "")
    logger.exception("unexpected error in a placement handler", exc_info=error)
    return PlacementError(500, "")


class PlacementFamily(Family):
    name = "placement"
    prefixes = ("/placement",)

    def begin(self, request: Request) -> None:
        microversion.negotiate(request.headers)  # 400 / 406 before anything else
        if request.body and not request.headers.get("content-type"):
            raise PlacementError(400, "content-type header required when content-length is set")

    def credential(self, request: Request) -> str | None:
        try:
            return header_token(request.all("x-auth-token"))
        except AmbiguousCredential:  # two tokens: a proxy reading the first would see another caller
            raise service_errors.Unauthorized() from None

    def accepts(self, principal: Principal) -> bool:
        """Only Placement keys open Placement (a Site or service key is a wrong token here: 401)."""
        return principal.kind == "placement"

    def render(self, request: Request, error: Exception) -> Reply:
        problem = as_placement_error(error)
        if problem.status == 405 and not problem.detail:
            problem.detail = f"The method {request.method} is not allowed for this resource."
        body = error_body(problem, request_id(request), _negotiated(request))
        return Reply(status=problem.status, body=body, headers=dict(problem.headers))

    def finish(self, request: Request, reply: Reply) -> Reply:
        version = _negotiated(request)
        if version is not None:
            reply.headers["openstack-api-version"] = microversion.response_header(version)
            reply.headers["vary"] = microversion.HEADER.lower()
        reply.headers[REQUEST_ID_HEADER] = request_id(request)
        return reply
