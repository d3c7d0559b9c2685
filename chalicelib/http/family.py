"""API families: one route table per family, served through one Chalice Blueprint each.

A family (the agent contract, Placement, compute) brings its own credential
reader, error renderer and headers; the order of checks is the same for all:

    begin (family-wide request checks) -> authenticate -> grant -> method -> handler -> finish

Authentication comes before the method and the body are looked at, so an
unauthenticated caller learns nothing about routes. A method no route of the
path serves is the family's 405 (HEAD is served by the GET route, without a
body, unless the family says otherwise). Any exception a handler lets out is
rendered by the family, so a framework default never reaches a client.

The framework is generic: it knows no service. A family's routes are
`Route[D]`, whose handlers take the family's dependencies `D`; the composition
root (`chalicelib.runtime`) builds each blueprint with a `Wiring[D]` that
supplies those dependencies (built once, on first use) and the authenticator.
"""

from __future__ import annotations

import importlib
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from chalice import Blueprint, Response

from chalicelib.auth.credentials import AmbiguousCredential, bearer_token
from chalicelib.auth.principals import Principal
from chalicelib.errors import MethodNotAllowed, NotFound, Unauthorized
from chalicelib.observability import logger

ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
ANY_CONTENT_TYPE = ["*/*"]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: dict[str, str]
    query: dict[str, list[str]]
    headers: Mapping[str, str]
    header_values: Mapping[str, list[str]]  # lower-case name -> every value received (duplicates kept)
    body: bytes
    url_root: str
    request_id: str
    context: Mapping[str, Any] = field(default_factory=dict)
    lambda_context: Any = None
    operation: str = ""  # the route's name once routed ("" when no route serves the method)
    principal: Principal | None = None

    def all(self, header: str) -> list[str]:
        """Every value of a header, however many times it was sent."""
        return self.header_values.get(header.lower(), [])


@dataclass
class Reply:
    status: int
    body: Any = None  # JSON-serialisable; None: no body and no Content-Type
    headers: dict[str, str] = field(default_factory=dict)


D = TypeVar("D")
Handler = Callable[[D, Request], Reply]

# A route whose grant is this is open to every principal its family accepts (e.g. compute's methods/list).
ANY_PRINCIPAL = ""


@dataclass(frozen=True)
class Route(Generic[D]):
    name: str
    method: str
    path: str
    grant: str | None  # a `permission@scope` template over the path parameters; None: no credential needed
    handler: Callable[[D, Request], Reply]


@dataclass(frozen=True)
class Wiring(Generic[D]):
    """What the composition root hands a family: its dependencies (built once, on first use) and the
    authenticator of credentials (a token, or None when the request carried none)."""

    deps: Callable[[], D]
    authenticate: Callable[[str | None], Principal]


def lazy(module: str, name: str) -> Callable[[Any, Request], Reply]:
    """A handler imported on its first call: a family's heavy modules (schemas, models) load on its first
    request, not when the app is imported (the cold start of every other family)."""
    target: list[Callable[[Any, Request], Reply]] = []

    def handler(deps: Any, request: Request) -> Reply:
        if not target:
            target.append(getattr(importlib.import_module(module), name))
        return target[0](deps, request)

    handler.__qualname__ = handler.__name__ = name
    return handler


def bearer_credential(request: Request) -> str | None:
    """The token of the request's one `Authorization: Bearer` header; two headers are 401."""
    try:
        return bearer_token(request.all("authorization"))
    except AmbiguousCredential:
        raise Unauthorized() from None


class Family:
    """The conventions of one API family. Subclasses override what differs."""

    name = "family"
    prefixes: tuple[str, ...] = ()
    # True: a wrong method is answered only to a principal holding a grant of the path (the agent contract);
    # False: to any principal the family accepts (compute: "not found, after authentication").
    wrong_method_needs_grant = True
    # True: HEAD is served by the path's GET route, without its body; False: HEAD is a wrong method (405).
    head_from_get = True

    def begin(self, request: Request) -> None:
        """Family-wide checks before authentication (Placement: the microversion)."""

    def credential(self, request: Request) -> str | None:
        raise NotImplementedError

    def accepts(self, principal: Principal) -> bool:
        """Whether this family's routes are open to this kind of principal at all (else 401)."""
        return True

    def permits(self, principal: Principal, grant: str, request: Request) -> bool:
        """Whether the principal may use a route declaring `grant` (Placement: a policy rule, decided by
        its policy from the caller's roles and scope)."""
        return principal.allows(grant)

    def render(self, request: Request, error: Exception) -> Reply:
        raise NotImplementedError

    def finish(self, request: Request, reply: Reply) -> Reply:
        return reply

    def encode(self, reply: Reply) -> Response:
        headers: dict[str, str | list[str]] = dict(reply.headers)
        if reply.body is None:
            return Response(body="", status_code=reply.status, headers=headers)
        headers = {"Content-Type": "application/json", **headers}
        return Response(body=json.dumps(reply.body, separators=(",", ":")), status_code=reply.status,
                        headers=headers)

    def record(self, request: Request, reply: Reply, latency_ms: float) -> None:
        logger.info("request", extra={"family": self.name, "operation": request.operation or None,
                                      "status": reply.status, "latencyMs": round(latency_ms, 2),
                                      "requestId": request.request_id})


# --- the request as the families see it ------------------------------------------------------------

def _header_values(event: Mapping[str, Any]) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    multi = event.get("multiValueHeaders") or {}
    for name, items in multi.items():
        values.setdefault(name.lower(), []).extend(items or [])
    for name, value in (event.get("headers") or {}).items():
        values.setdefault(name.lower(), [value])
    return values


def _url_root(headers: Mapping[str, str], context: Mapping[str, Any]) -> str:
    host = headers.get("host") or "localhost"
    scheme = headers.get("x-forwarded-proto") or ("https" if context.get("stage") else "http")
    stage = context.get("stage")
    # Behind API Gateway's default endpoint the stage is the first path segment; on a custom domain it is not.
    if stage and str(context.get("path", "")).startswith(f"/{stage}/"):
        return f"{scheme}://{host}/{stage}"
    return f"{scheme}://{host}"


def request_from_chalice(current: Any) -> Request:
    event = current.to_original_event()
    context = current.context or {}
    headers = {k.lower(): v for k, v in (current.headers or {}).items()}
    query_params = current.query_params
    query = {k: query_params.getlist(k) for k in query_params} if query_params is not None else {}
    return Request(
        method=str(context.get("httpMethod") or current.method).upper(),
        path=str(context.get("path") or current.path),
        params=dict(current.uri_params or {}),  # API Gateway (and the local gateway) decoded them once already
        query=query,
        headers=headers,
        header_values=_header_values(event),
        body=current.raw_body or b"",
        url_root=_url_root(headers, context),
        request_id=str(context.get("requestId") or uuid.uuid4()),
        context=context,
        lambda_context=current.lambda_context,
    )


# --- dispatch ---------------------------------------------------------------------------------------

# Credential headers of the families. A request carrying more than one kind is ambiguous: a proxy or a
# middleware reading the other one would act for another caller.
CREDENTIAL_HEADERS = ("authorization", "x-auth-token")


def _credential(family: Family, request: Request) -> str | None:
    if sum(1 for header in CREDENTIAL_HEADERS if request.all(header)) > 1:
        raise Unauthorized()
    return family.credential(request)


def _authorize(wiring: Wiring[Any], family: Family, routes: Sequence[Route[Any]], request: Request) -> Request:
    """Authenticate, then require the grant of the route (or, for a method no route serves, of any route of
    the path: a caller learns that a method is wrong only for a path it may use)."""
    if routes and all(route.grant is None for route in routes):
        return request
    principal = wiring.authenticate(_credential(family, request))
    if not family.accepts(principal):
        raise Unauthorized()
    needed = [route.grant.format(**request.params) for route in routes if route.grant is not None]
    if needed and not any(grant == ANY_PRINCIPAL or family.permits(principal, grant, request) for grant in needed):
        raise Forbidden(routes[0], needed[0])
    return replace(request, principal=principal)


class Forbidden(Exception):
    """An authenticated principal without the grant a route needs; each family decides how to answer."""

    def __init__(self, route: Route[Any], grant: str) -> None:
        super().__init__(route.name)
        self.route = route
        self.grant = grant


def _served_by(family: Family, routes: Mapping[str, Route[D]], method: str) -> Route[D] | None:
    if method == "HEAD" and "HEAD" not in routes and family.head_from_get:
        return routes.get("GET")
    return routes.get(method)


def dispatch(family: Family, routes: Mapping[str, Route[D]], request: Request, wiring: Wiring[D]) -> Reply:
    """One request through the family's conventions; never raises."""
    started = time.perf_counter()
    route = _served_by(family, routes, request.method)
    # A wrong method is still recorded under the path's operation.
    request = replace(request, operation=(route or next(iter(routes.values()))).name)
    try:
        family.begin(request)
        checked = [route] if route else list(routes.values()) if family.wrong_method_needs_grant else []
        request = _authorize(wiring, family, checked, request)
        if route is None:
            raise MethodNotAllowed(allowed=list(routes))  # the route table's order; each family renders it
        reply = route.handler(wiring.deps(), request)
    except Exception as exc:  # noqa: BLE001 - every failure is answered in the family's own shape
        reply = family.render(request, exc)
    reply = family.finish(request, reply)
    family.record(request, reply, (time.perf_counter() - started) * 1000)
    return reply


def not_found(family: Family, request: Request) -> Reply:
    """What `make run` answers for a path under the family's prefix that no route matches."""
    try:
        family.begin(request)
        reply = family.render(request, NotFound())
    except Exception as exc:  # noqa: BLE001
        reply = family.render(request, exc)
    return family.finish(request, reply)


# --- registration ------------------------------------------------------------------------------------

REGISTERED: list[Family] = []


def family_for_path(path: str) -> Family | None:
    """The family whose prefix is the longest match for a path (the one that answers its unknown routes)."""
    best: tuple[int, Family] | None = None
    for family in REGISTERED:
        for prefix in family.prefixes:
            under = path == prefix or path.startswith(prefix.rstrip("/") + "/")
            if under and (best is None or len(prefix) > best[0]):
                best = (len(prefix), family)
    return best[1] if best else None


def build_blueprint(family: Family, routes: Sequence[Route[D]], wiring: Wiring[D]) -> Blueprint:
    """A Blueprint with every distinct path registered once, for every method and content type."""
    blueprint = Blueprint(f"chalicelib.families.{family.name}")
    by_path: dict[str, dict[str, Route[D]]] = {}
    for route in routes:
        methods = by_path.setdefault(route.path, {})
        if route.method in methods:
            raise ValueError(f"two routes for {route.method} {route.path}")
        methods[route.method] = route
    for path, methods in by_path.items():
        _register(blueprint, family, path, methods, wiring)
    if family not in REGISTERED:
        REGISTERED.append(family)
    return blueprint


def _register(blueprint: Blueprint, family: Family, path: str, methods: dict[str, Route[D]],
              wiring: Wiring[D]) -> None:
    name = next(iter(methods.values())).name.replace(".", "_")

    def view(**_: str) -> Response:
        request = request_from_chalice(blueprint.current_request)
        response = family.encode(dispatch(family, methods, request, wiring))
        if request.method == "HEAD":
            # The GET answer's status and headers, its length included (RFC 9110 section 8.6), without its body.
            body = response.body
            response.headers["Content-Length"] = str(len(body.encode() if isinstance(body, str) else body or b""))
            response.body = ""
        return response

    view.__name__ = name
    blueprint.route(path, methods=ALL_METHODS, content_types=ANY_CONTENT_TYPE)(view)


def unknown_route(method: str, path: str, headers: Mapping[str, str]) -> dict[str, Any]:
    """The Lambda-proxy-shaped answer `make run` gives for a path no route matches: the family of the path's
    prefix renders it; elsewhere the agent contract's `{"code":"not_found"}` (what API Gateway is configured to
    answer deployed, for every path)."""
    family = family_for_path(path.split("?", 1)[0])
    lowered = {k.lower(): v for k, v in headers.items()}
    if family is None:
        return {"statusCode": 404, "headers": {"Content-Type": "application/json"}, "body": '{"code":"not_found"}'}
    request = Request(method=method.upper(), path=path.split("?", 1)[0], params={}, query={}, headers=lowered,
                      header_values={k: [v] for k, v in lowered.items()}, body=b"",
                      url_root=_url_root(lowered, {}), request_id=str(uuid.uuid4()))
    response = family.encode(not_found(family, request))
    return {"statusCode": response.status_code, "headers": dict(response.headers), "body": response.body}
