"""Operator routes (the service key), answered in the compute API's error envelope.

Tenants: principals (tokens with grants) and registered Sites.
"""

from __future__ import annotations

from chalicelib.auth.principals import SERVICE_GRANT
from chalicelib.compute.validation import decode_object
from chalicelib.http.compute import OPERATOR
from chalicelib.http.family import Reply, Request, Route, build_blueprint
from chalicelib.runtime import Services
from chalicelib.tenants import service as tenants

TENANT = "/api/tenants/{tenant}"


def _issue(svc: Services, request: Request) -> Reply:
    return Reply(201, tenants.issue_principal(svc.tenants, request.params["tenant"], decode_object(request.body)))


def _revoke(svc: Services, request: Request) -> Reply:
    tenants.revoke_principal(svc.tenants, request.params["tenant"], request.params["principal"])
    return Reply(204)


def _principals(svc: Services, request: Request) -> Reply:
    return Reply(200, tenants.list_principals(svc.tenants, request.params["tenant"]))


def _register_site(svc: Services, request: Request) -> Reply:
    return Reply(201, tenants.register_site(svc.tenants, request.params["tenant"], decode_object(request.body)))


def _sites(svc: Services, request: Request) -> Reply:
    return Reply(200, tenants.list_sites(svc.tenants, request.params["tenant"]))


ROUTES = [
    Route("tenants.principals.issue", "POST", f"{TENANT}/principals", SERVICE_GRANT, _issue),
    Route("tenants.principals.list", "GET", f"{TENANT}/principals", SERVICE_GRANT, _principals),
    Route("tenants.principals.revoke", "DELETE", f"{TENANT}/principals/{{principal}}", SERVICE_GRANT, _revoke),
    Route("tenants.sites.register", "POST", f"{TENANT}/sites", SERVICE_GRANT, _register_site),
    Route("tenants.sites.list", "GET", f"{TENANT}/sites", SERVICE_GRANT, _sites),
]

operator_blueprint = build_blueprint(OPERATOR, ROUTES)
