"""The operator routes' handlers: tenants' principals and Sites, fleet reconciliation and its events.

Loaded on the first operator request (chalicelib/operator_api.py names them lazily); the commitment sync's
handlers are chalicelib/commitments/api.py.
"""

from __future__ import annotations

from typing import Any, Protocol

from chalicelib.auth.service import Authenticator
from chalicelib.compute.errors import InvalidArgument
from chalicelib.compute.validation import NoInput, parse
from chalicelib.fleet import reconciler
from chalicelib.fleet.eventbridge import eventbridge_publisher
from chalicelib.fleet.store import FleetStore
from chalicelib.http.compute import decode_object
from chalicelib.http.family import Reply, Request
from chalicelib.tenants import service as tenants
from chalicelib.tenants.inputs import TenantPath
from chalicelib.tenants.store import TenantStore


class OperatorDeps(Protocol):
    """What the operator handlers use of the composition root."""

    @property
    def client(self) -> Any: ...

    @property
    def table(self) -> str: ...

    @property
    def tenants(self) -> TenantStore: ...

    @property
    def authenticator(self) -> Authenticator: ...


def issue(svc: OperatorDeps, request: Request) -> Reply:
    issued = tenants.issue_principal(svc.tenants, request.params["tenant"], decode_object(request.body))
    svc.authenticator.forget_tenant_principal(issued["tenant"], issued["principal"])  # its grants are new
    return Reply(201, issued)


def revoke(svc: OperatorDeps, request: Request) -> Reply:
    tenants.revoke_principal(svc.tenants, request.params["tenant"], request.params["principal"])
    svc.authenticator.forget_tenant_principal(request.params["tenant"], request.params["principal"])
    return Reply(204)


def principals(svc: OperatorDeps, request: Request) -> Reply:
    return Reply(200, tenants.list_principals(svc.tenants, request.params["tenant"]))


def register_site(svc: OperatorDeps, request: Request) -> Reply:
    return Reply(201, tenants.register_site(svc.tenants, request.params["tenant"], decode_object(request.body)))


def sites(svc: OperatorDeps, request: Request) -> Reply:
    return Reply(200, tenants.list_sites(svc.tenants, request.params["tenant"]))


def reconcile(svc: OperatorDeps, request: Request) -> Reply:
    parse(NoInput, decode_object(request.body))
    return Reply(200, reconciler.reconcile(FleetStore(svc.client, svc.table), eventbridge_publisher()))


def fleet_events(svc: OperatorDeps, request: Request) -> Reply:
    tenants_given = request.query.get("tenant") or []
    if len(tenants_given) != 1:
        raise InvalidArgument("/tenant")
    parse(TenantPath, {"tenant": tenants_given[0]})
    return Reply(200, reconciler.events(FleetStore(svc.client, svc.table), tenants_given[0]))
