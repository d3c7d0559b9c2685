"""Placement as an API family of the app: its edge.

Microversion first (negotiated once, kept in the request's context), X-Auth-Token, and every
failure turned into Placement's error answer here, once: the domain errors of rules, store and
service by their kind (`STATUS_OF`), the framework's by theirs. Error bodies are rendered as
webob renders Placement's (the explanation, the detail with newlines folded, `code` from 1.23),
as JSON, HTML or plain text by the Accept header, as Placement answers.
"""

from __future__ import annotations

import html
import logging
import re
import sys
import uuid as uuidlib
from collections.abc import Callable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from chalice import Response

from chalicelib import errors as service_errors
from chalicelib.auth.credentials import AmbiguousCredential, header_token
from chalicelib.auth.principals import Principal
from chalicelib.http.family import Family, Forbidden, Reply, Request
from chalicelib.placement import errors, microversion, web
from chalicelib.placement.web import HttpError

if TYPE_CHECKING:
    from chalicelib.placement.policy import PlacementPolicy

logger = logging.getLogger(__name__)

REQUEST_ID_HEADER = "x-openstack-request-id"
CODE_MICROVERSION = (1, 23)
ROOT_WITH_SLASH = "/placement/"

# The one translation of the domain errors (chalicelib/placement/errors.py) into statuses.
STATUS_OF: dict[type[errors.PlacementError], int] = {
    errors.Invalid: 400,
    errors.NotFound: 404,
    errors.Conflict: 409,
}

# webob's explanation of each status, which Placement puts before the detail.
EXPLANATIONS = {
    400: "The server could not comply with the request since it is either malformed or otherwise incorrect.",
    401: "This server could not verify that you are authorized to access the document you requested.",
    403: "Access was denied to this resource.",
    404: "The resource could not be found.",
    406: "The resource could not be generated that was acceptable to your browser.",
    409: "There was a conflict when trying to complete your request.",
    500: "The server has either erred or is incapable of performing the requested operation.",
    503: "The server is currently unavailable. Please try again at a later time.",
}


def request_id(request: Request) -> str:
    """`req-<uuid>`, the same in the header and in errors[0].request_id."""
    raw = request.request_id or ""
    if raw.startswith("req-"):
        return raw
    try:
        return f"req-{uuidlib.UUID(raw)}"
    except ValueError:
        return f"req-{uuidlib.uuid5(uuidlib.NAMESPACE_OID, raw)}"


def as_http_error(error: Exception) -> HttpError:
    if isinstance(error, HttpError):
        return error
    if isinstance(error, errors.PlacementError):
        status = next(STATUS_OF[kind] for kind in type(error).__mro__ if kind in STATUS_OF)
        return HttpError(status, error.detail, error.code)
    if isinstance(error, microversion.Malformed):
        return HttpError(400, str(error))
    if isinstance(error, microversion.Unacceptable):
        return HttpError(406, str(error), extra={"max_version": microversion.text(microversion.MAX_VERSION),
                                                 "min_version": microversion.text(microversion.MIN_VERSION)})
    if isinstance(error, Forbidden):  # the route's grant is the policy rule that refused (Placement's text)
        return HttpError(403, f"Policy does not allow {error.grant} to be performed.")
    if isinstance(error, service_errors.Unauthorized):
        return HttpError(401, "The request you have made requires authentication.")
    if isinstance(error, service_errors.MethodNotAllowed):
        allowed = list(getattr(error, "allowed", None) or [])  # as Placement: its route table's order
        return HttpError(405, "The method specified is not allowed for this resource.",
                         headers={"allow": ", ".join(allowed)} if allowed else {})
    if isinstance(error, service_errors.NotFound):
        return HttpError(404, "")
    keystone = sys.modules.get("chalicelib.auth.keystone")  # loaded by whoever raised its error
    if keystone is not None and isinstance(error, keystone.KeystoneUnavailable):
        return HttpError(503, "The identity service could not validate the token; nothing was done. "
                              "Retry the request.")
    if isinstance(error, service_errors.Unavailable):
        return HttpError(503, "The data store did not answer; nothing was changed. Retry the request.")
    if isinstance(error, service_errors.BadRequest):
        return HttpError(400, "")
    logger.exception("unexpected error in a placement handler", exc_info=error)
    return HttpError(500, "")


# --- webob's error body, as Placement's json_error_formatter and webob's text renderers produce it -----

_TAG = re.compile(r"<.*?>", re.S)
_BR = re.compile(r"<br.*?>", re.I | re.S)
_COMMENT = re.compile(r"<!--|-->")


def _strip_tags(value: str) -> str:
    value = value.replace("\n", " ").replace("\r", "")
    value = _BR.sub("\n", value)
    value = _COMMENT.sub("", value)
    return _TAG.sub("", value)


def effective_accept(request: Request) -> str:
    """The Accept header as Placement reads it: none, or `*/*`, means application/json (its requestlog)."""
    accept = request.headers.get("accept")
    return web.JSON if not accept or accept == "*/*" else accept


def _template_body(error: HttpError, request: Request, escape: Any) -> str:
    """webob's body template of the status (405, 406 and 415 have their own), before tags are stripped."""
    detail = escape(error.detail)
    if error.status == 406:
        return ("The resource could not be generated that was acceptable to your browser\n"
                f"(content of type {escape(effective_accept(request))}. <br /><br />\n{detail}")
    if error.status == 405:
        return f"The method {escape(request.method)} is not allowed for this resource. <br /><br />\n{detail}"
    if error.status == 415:
        declared = escape(request.headers.get("content-type") or "")
        return f"The request media type {declared} is not supported by this server.\n<br /><br />\n{detail}"
    explanation = escape(EXPLANATIONS.get(error.status, ""))
    return f"{explanation}<br /><br />\n{detail}\n\n"


def error_entry(error: HttpError, request: Request, version: microversion.Version | None) -> dict[str, Any]:
    """errors[0] of the JSON body; `version` None when negotiation itself failed."""
    entry: dict[str, Any] = {
        "status": error.status,
        "title": HTTPStatus(error.status).phrase,
        "detail": _strip_tags(_template_body(error, request, lambda text: text)),
    }
    if version is not None and version >= CODE_MICROVERSION:
        entry["code"] = error.code
    entry["request_id"] = request_id(request)
    entry.update(error.extra)
    return entry


def error_format(accept: str) -> str:
    """What webob answers an error in: "json", "html" or "plain", by the offers it can make (`accept` as
    `effective_accept` reads it).

    An Accept admitting `application/json` with parameters (`; charset=utf-8`) is answered in JSON: its
    success answers are JSON too (see docs/placement.md: Placement's 406 there is a bug we do not copy)."""
    if accept.strip().lower() == web.JSON:
        return "json"
    from webob.acceptparse import create_accept_header  # on the first error with another Accept header

    offers = create_accept_header(header_value=accept).acceptable_offers(offers=["text/html", web.JSON])
    if offers:
        return "html" if offers[0][0] == "text/html" else "json"
    ranges = [part.split(";", 1)[0].strip().lower() for part in accept.split(",")]
    return "json" if web.JSON in ranges else "plain"


def error_text(error: HttpError, request: Request, kind: str) -> str:
    status = f"{error.status} {HTTPStatus(error.status).phrase}"
    if kind == "html":
        body = _template_body(error, request, lambda text: html.escape(text, quote=True))
        return (f"<html>\n <head>\n  <title>{status}</title>\n </head>\n <body>\n  <h1>{status}</h1>\n"
                f"  {body}\n </body>\n</html>")
    return f"{status}\n\n{_strip_tags(_template_body(error, request, lambda text: text))}"


class PlacementFamily(Family):
    """`policy` gives Placement's policy (built once, on the first request that needs it, by the
    composition root); each route's grant is the policy rule it enforces (handler.py)."""

    name = "placement"
    prefixes = ("/placement",)
    head_from_get = False  # Placement answers HEAD 405 with Allow on every route
    # A method no route serves is 405 for any caller Placement accepts, before any policy (as upstream,
    # whose handlers call the policy only once routed).
    wrong_method_needs_grant = False

    def __init__(self, policy: Callable[[], PlacementPolicy] | None = None) -> None:
        self._policy = policy or _policy_from_env

    def permits(self, principal: Principal, grant: str, request: Request) -> bool:
        """The route's rule, decided by Placement's policy from the caller's credential, with the target
        upstream's handler passes (GET /usages: the project asked about)."""
        if principal.credential is None:
            return False
        from chalicelib.placement.policy import target_of_rule

        creds = principal.credential.policy_values()
        query = {name: values[0] for name, values in request.query.items() if values}
        return self._policy().enforce(grant, creds, target_of_rule(grant, creds, query))

    def begin(self, request: Request) -> None:
        sent = request.all(microversion.HEADER.lower())
        folded = {microversion.HEADER.lower(): ", ".join(sent)} if sent else {}
        web.keep_version(request, microversion.negotiate(folded))  # 400 / 406 before anything else
        if _path(request).endswith("/") and _path(request) != ROOT_WITH_SLASH:
            raise service_errors.NotFound()  # as Placement: `/resource_providers/` is not `/resource_providers`
        if request.body and not request.headers.get("content-type"):  # upstream checks before its handlers
            raise HttpError(400, "content-type header required when content-length is set", vary=False)

    def credential(self, request: Request) -> str | None:
        try:
            return header_token(request.all("x-auth-token"))
        except AmbiguousCredential:  # two tokens: a proxy reading the first would see another caller
            raise service_errors.Unauthorized() from None

    def accepts(self, principal: Principal) -> bool:
        """Only Placement keys open Placement (a Site or service key is a wrong token here: 401)."""
        return principal.kind == "placement"

    def render(self, request: Request, error: Exception) -> Reply:
        problem = as_http_error(error)
        web.keep_vary(request, problem.vary)
        headers = dict(problem.headers)
        if request.method == "HEAD":  # webob's answer to HEAD: the status and headers, no body
            headers["content-type"] = "text/html; charset=UTF-8"
            return Reply(status=problem.status, body=None, headers=headers)
        kind = error_format(effective_accept(request))
        if kind != "json":
            headers["content-type"] = f"text/{kind}; charset=UTF-8"
            return Reply(status=problem.status, body=error_text(problem, request, kind), headers=headers)
        entry = error_entry(problem, request, web.negotiated(request))
        return Reply(status=problem.status, body={"errors": [entry]}, headers=headers)

    def finish(self, request: Request, reply: Reply) -> Reply:
        version = web.negotiated(request)
        if version is not None:
            reply.headers["openstack-api-version"] = microversion.response_header(version)
            if web.sends_vary(request):  # an error that escaped upstream's handlers has none (HttpError)
                reply.headers["vary"] = microversion.HEADER.lower()
        reply.headers[REQUEST_ID_HEADER] = request_id(request)
        return reply

    def encode(self, reply: Reply) -> Response:
        if isinstance(reply.body, str):  # an error body in HTML or plain text (its content-type is set)
            return Response(body=reply.body, status_code=reply.status, headers=dict(reply.headers))
        return super().encode(reply)


def _path(request: Request) -> str:
    """The request's path below the stage (API Gateway's default endpoint puts the stage first)."""
    path = request.path
    stage = request.context.get("stage")
    if stage and path.startswith(f"/{stage}/"):
        return path[len(stage) + 1:]
    return path


_from_env: list[PlacementPolicy] = []


def _policy_from_env() -> PlacementPolicy:
    """The policy the environment names, read once (a family built without the composition root's)."""
    if not _from_env:
        from chalicelib.config import PlacementAuthSettings
        from chalicelib.placement.policy import load_policy

        _from_env.append(load_policy(PlacementAuthSettings.from_env()))
    return _from_env[0]
