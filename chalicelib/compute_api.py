"""The compute API's route table: which service answers each method of the registry, and its routes.

Beside the agent contract's (chalicelib/api.py) and the operators' (chalicelib/operator_api.py)
tables. Nothing happens at import: `compute_registry()` lists the methods and
binds each to a service through the typed `ComputeDeps` it is handed;
`compute_routes()` turns a registry into routes (one per method, `methods/list`,
and NOT_FOUND for any other name after authentication). The methods are named
from `chalicelib.fleet.catalog`; fleet's models and services load with the
dependencies (`compute_deps`), on the family's first request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chalicelib.auth.principals import Principal
from chalicelib.compute.errors import NotFound
from chalicelib.compute.registry import MethodHandler, MethodSpec, Registry
from chalicelib.compute.validation import NoInput, parse
from chalicelib.fleet.catalog import KINDS, MODULE_METHODS
from chalicelib.http.compute import decode_object
from chalicelib.http.family import ANY_PRINCIPAL, Reply, Request, Route
from chalicelib.store.table import TableAccess

if TYPE_CHECKING:
    from chalicelib.fleet.service import FleetService
    from chalicelib.tenants.store import TenantStore


@dataclass(frozen=True)
class ComputeDeps:
    """What the compute methods are answered with."""

    fleet: FleetService
    tenants: TenantStore


def compute_deps(table: TableAccess, tenants: TenantStore) -> ComputeDeps:
    """The compute family's dependencies over one table (the composition root builds them once)."""
    from chalicelib.fleet.service import FleetService
    from chalicelib.fleet.store import FleetStore

    return ComputeDeps(FleetService(FleetStore(table.client, table.table)), tenants)


def _sites_list(deps: ComputeDeps, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
    from chalicelib.tenants.service import list_sites

    parse(NoInput, body)
    assert principal.tenant is not None
    return list_sites(deps.tenants, principal.tenant)


def _fleet_list(kind: str) -> MethodHandler[ComputeDeps]:
    return lambda deps, principal, body: deps.fleet.list_of(kind, principal, body)


def _fleet_call(kind: str, method: str) -> MethodHandler[ComputeDeps]:
    return lambda deps, principal, body: deps.fleet.call(kind, method, principal, body)


def compute_registry() -> Registry[ComputeDeps]:
    """Every compute method: the Sites list, each fleet kind's `list` and mutations, and `fleet` itself
    (`fleet.apply` authorizes each planned call by this same registry)."""
    registry = Registry[ComputeDeps]()
    registry.add(MethodSpec("sites", "list", "read", _sites_list))
    for kind in KINDS:
        registry.add(MethodSpec(kind, "list", "read", _fleet_list(kind)))
    for (kind, method) in MODULE_METHODS:
        registry.add(MethodSpec(kind, method, "mutation", _fleet_call(kind, method)))
    registry.add(MethodSpec("fleet", "export", "read", lambda d, p, b: d.fleet.export(p, b, registry)))
    registry.add(MethodSpec("fleet", "plan", "read", lambda d, p, b: d.fleet.plan(p, b)))
    registry.add(MethodSpec("fleet", "apply", "mutation", lambda d, p, b: d.fleet.apply(p, b, registry),
                            composite=True))
    registry.add(MethodSpec("fleet", "status", "read", lambda d, p, b: d.fleet.status(p, b)))
    return registry


def _route(spec: MethodSpec[ComputeDeps]) -> Route[ComputeDeps]:
    def handler(deps: ComputeDeps, request: Request) -> Reply:
        assert request.principal is not None
        return Reply(200, spec.handler(deps, request.principal, decode_object(request.body)))

    return Route(spec.name, "POST", spec.path, spec.authorization, handler)


def compute_routes(registry: Registry[ComputeDeps]) -> list[Route[ComputeDeps]]:
    def methods_list(deps: ComputeDeps, request: Request) -> Reply:
        parse(NoInput, decode_object(request.body))
        return Reply(200, {"items": [spec.describe() for spec in registry]})

    def unknown_method(deps: ComputeDeps, request: Request) -> Reply:
        raise NotFound()

    return [
        Route("compute.methods.list", "POST", "/api/compute/methods/list", ANY_PRINCIPAL, methods_list),
        *(_route(spec) for spec in registry),
        # Any other module or method: NOT_FOUND, after authentication.
        Route("compute.unknown", "POST", "/api/compute/{module}/{method}", ANY_PRINCIPAL, unknown_method),
    ]
