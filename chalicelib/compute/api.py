"""The compute API's routes, generated from the method registry, and the modules registered in it."""

from __future__ import annotations

from typing import Any

from chalicelib.auth.principals import Principal
from chalicelib.compute.errors import NotFound
from chalicelib.compute.registry import MethodSpec, Registry
from chalicelib.compute.validation import StrictModel, decode_object, parse
from chalicelib.fleet import models as fleet_models
from chalicelib.fleet import modules as fleet_modules
from chalicelib.fleet import service as fleet_service
from chalicelib.http.family import ANY_PRINCIPAL, Reply, Request, Route
from chalicelib.runtime import Services
from chalicelib.tenants.service import list_sites

REGISTRY = Registry()


class NoInput(StrictModel):
    pass


def _sites_list(svc: Any, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
    parse(NoInput, body)
    assert principal.tenant is not None
    return list_sites(svc.tenants, principal.tenant)


REGISTRY.add(MethodSpec("sites", "list", "read", _sites_list))

# The fleet modules (chalicelib/fleet): each kind's `list`, then its own mutations; `fleet.apply` composes them.
for _kind in fleet_models.KINDS:
    REGISTRY.add(MethodSpec(_kind, "list", "read", fleet_service.module_list(_kind)))
for (_kind, _method) in fleet_modules.METHODS:
    REGISTRY.add(MethodSpec(_kind, _method, "mutation", fleet_service.module_method(_kind, _method)))
REGISTRY.add(MethodSpec("fleet", "export", "read", fleet_service.exporter(REGISTRY)))
REGISTRY.add(MethodSpec("fleet", "plan", "read", fleet_service.plan))
REGISTRY.add(MethodSpec("fleet", "apply", "mutation", fleet_service.applier(REGISTRY), composite=True))
REGISTRY.add(MethodSpec("fleet", "status", "read", fleet_service.status))


def _route(spec: MethodSpec) -> Route:
    def handler(svc: Services, request: Request) -> Reply:
        assert request.principal is not None
        return Reply(200, spec.handler(svc, request.principal, decode_object(request.body)))

    return Route(spec.name, "POST", spec.path, spec.authorization, handler)


def _methods_list(svc: Services, request: Request) -> Reply:
    decode_object(request.body)
    return Reply(200, {"items": [spec.describe() for spec in REGISTRY]})


def _unknown_method(svc: Services, request: Request) -> Reply:
    raise NotFound()


def routes(registry: Registry) -> list[Route]:
    return [
        Route("compute.methods.list", "POST", "/api/compute/methods/list", ANY_PRINCIPAL, _methods_list),
        *(_route(spec) for spec in registry),
        # Any other module or method: NOT_FOUND, after authentication.
        Route("compute.unknown", "POST", "/api/compute/{module}/{method}", ANY_PRINCIPAL, _unknown_method),
    ]

