"""Operator routes (the service key), answered in the compute API's error envelope.

Tenants: principals (tokens with grants) and registered Sites.
Commitment sync: a pass on demand, its runs and reservations (chalicelib/commitments/api.py).
"""

from __future__ import annotations

from chalicelib.auth.principals import SERVICE_GRANT
from chalicelib.commitments import api as commitments
from chalicelib.compute.errors import InvalidArgument
from chalicelib.compute.validation import decode_object, parse
from chalicelib.fleet import reconciler
from chalicelib.fleet.models import NoInput
from chalicelib.http.family import Reply, Request, Route
from chalicelib.runtime import Services
from chalicelib.tenants import service as tenants
from chalicelib.tenants.models import TenantPath

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


def _reconcile(svc: Services, request: Request) -> Reply:
    parse(NoInput, decode_object(request.body))
    return Reply(200, reconciler.reconcile(svc, reconciler.eventbridge_publisher()))


def _fleet_events(svc: Services, request: Request) -> Reply:
    tenants_given = request.query.get("tenant") or []
    if len(tenants_given) != 1:
        raise InvalidArgument("/tenant")
    parse(TenantPath, {"tenant": tenants_given[0]})
    return Reply(200, reconciler.events(svc, tenants_given[0]))


ROUTES = [
    Route("tenants.principals.issue", "POST", f"{TENANT}/principals", SERVICE_GRANT, _issue),
    Route("tenants.principals.list", "GET", f"{TENANT}/principals", SERVICE_GRANT, _principals),
    Route("tenants.principals.revoke", "DELETE", f"{TENANT}/principals/{{principal}}", SERVICE_GRANT, _revoke),
    Route("tenants.sites.register", "POST", f"{TENANT}/sites", SERVICE_GRANT, _register_site),
    Route("tenants.sites.list", "GET", f"{TENANT}/sites", SERVICE_GRANT, _sites),
    Route("fleet.reconcile", "POST", "/api/fleet/reconcile", SERVICE_GRANT, _reconcile),
    Route("fleet.events", "GET", "/api/fleet/events", SERVICE_GRANT, _fleet_events),
    # --- commitment sync (issue 10) ---
    Route("commitments.sync", "POST", "/api/commitments/sync", SERVICE_GRANT, commitments.sync_now),
    Route("commitments.runs", "GET", "/api/commitments/runs", SERVICE_GRANT, commitments.runs),
    Route("commitments.reservations", "GET", "/api/commitments/reservations", SERVICE_GRANT,
          commitments.reservations),
    # --- end commitment sync ---
]
