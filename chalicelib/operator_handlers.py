"""The operator routes' handlers: tenants' principals and Sites, fleet reconciliation and its events.

Loaded on the first operator request (chalicelib/operator_api.py names them lazily); the commitment sync's
handlers are chalicelib/commitments/api.py.
"""

from __future__ import annotations

from typing import Any, Protocol

from chalicelib.compute.errors import InvalidArgument
from chalicelib.compute.validation import decode_object, parse
from chalicelib.fleet import reconciler
from chalicelib.fleet.models import NoInput
from chalicelib.http.family import Reply, Request
from chalicelib.tenants import service as tenants
from chalicelib.tenants.models import TenantPath
from chalicelib.tenants.store import TenantStore


class OperatorDeps(Protocol):
    """What the operator handlers use of the composition root."""

    @property
    def client(self) -> Any: ...

    @property
    def table(self) -> str: ...

    @property
    def tenants(self) -> TenantStore: ...


def issue(svc: OperatorDeps, request: Request) -> Reply:
    return Reply(201, tenants.issue_principal(svc.tenants, request.params["tenant"], decode_object(request.body)))


def revoke(svc: OperatorDeps, request: Request) -> Reply:
    tenants.revoke_principal(svc.tenants, request.params["tenant"], request.params["principal"])
    return Reply(204)


def principals(svc: OperatorDeps, request: Request) -> Reply:
    return Reply(200, tenants.list_principals(svc.tenants, request.params["tenant"]))


def register_site(svc: OperatorDeps, request: Request) -> Reply:
    return Reply(201, tenants.register_site(svc.tenants, request.params["tenant"], decode_object(request.body)))


def sites(svc: OperatorDeps, request: Request) -> Reply:
    return Reply(200, tenants.list_sites(svc.tenants, request.params["tenant"]))


def reconcile(svc: OperatorDeps, request: Request) -> Reply:
    parse(NoInput, decode_object(request.body))
    return Reply(200, reconciler.reconcile(svc, reconciler.eventbridge_publisher()))


def fleet_events(svc: OperatorDeps, request: Request) -> Reply:
    tenants_given = request.query.get("tenant") or []
    if len(tenants_given) != 1:
        raise InvalidArgument("/tenant")
    parse(TenantPath, {"tenant": tenants_given[0]})
    return Reply(200, reconciler.events(svc, tenants_given[0]))
