"""The Placement API's one route table (as upstream's placement/handler.py); the composition root,
chalicelib.runtime, builds its blueprint. The handlers are in chalicelib/placement/handlers/, one
module per resource, each taking the Placement service; they are imported on the first request that
needs them, so `import app` does not pay for Placement's schemas and jsonschema.

Each route's grant is the policy rule upstream's handler enforces (`placement:...`, placement 16.0.0's
`placement/policies/`), decided by Placement's policy from the caller's roles and scope
(PlacementFamily.permits; docs/placement-keystone.md). A new route names its rule here;
tests/unit/test_placement_callers.py checks each against upstream's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalicelib.http.family import Reply, Request, Route, lazy

P = "/placement"
RP = f"{P}/resource_providers/{{uuid}}"


def _serve(module: str, function: str) -> Callable[[Any, Request], Reply]:
    """handlers.<module>.<function>, loaded on its first call; it is given the Placement service the
    composition root built once (chalicelib/runtime.py, through the one factory in placement/deps.py)."""
    return lazy(f"chalicelib.placement.handlers.{module}", function)


def _route(name: str, method: str, path: str, rule: str | None, module: str, function: str) -> Route[Any]:
    """`rule`: the policy rule the route enforces; None: the route needs no credential."""
    return Route(name, method, path, rule, _serve(module, function))


# A path's methods in Placement's own route-table order: a 405's `Allow` lists them so.
ROUTES: list[Route[Any]] = [
    # API Gateway (and Chalice's local matcher) drop the trailing slash: this serves /placement/ too.
    _route("placement.root", "GET", P, None, "root", "home"),
    _route("placement.resource_providers.list", "GET", f"{P}/resource_providers",
           "placement:resource_providers:list", "resource_provider", "list_all"),
    _route("placement.resource_providers.create", "POST", f"{P}/resource_providers",
           "placement:resource_providers:create", "resource_provider", "create"),
    _route("placement.resource_providers.show", "GET", RP,
           "placement:resource_providers:show", "resource_provider", "show"),
    _route("placement.resource_providers.delete", "DELETE", RP,
           "placement:resource_providers:delete", "resource_provider", "delete"),
    _route("placement.resource_providers.update", "PUT", RP,
           "placement:resource_providers:update", "resource_provider", "update"),
    _route("placement.aggregates.show", "GET", f"{RP}/aggregates",
           "placement:resource_providers:aggregates:list", "aggregate", "show"),
    _route("placement.aggregates.replace", "PUT", f"{RP}/aggregates",
           "placement:resource_providers:aggregates:update", "aggregate", "replace"),
    _route("placement.inventories.list", "GET", f"{RP}/inventories",
           "placement:resource_providers:inventories:list", "inventory", "list_all"),
    _route("placement.inventories.create", "POST", f"{RP}/inventories",
           "placement:resource_providers:inventories:create", "inventory", "add_one"),
    _route("placement.inventories.replace", "PUT", f"{RP}/inventories",
           "placement:resource_providers:inventories:update", "inventory", "replace_all"),
    _route("placement.inventories.delete_all", "DELETE", f"{RP}/inventories",
           "placement:resource_providers:inventories:delete", "inventory", "delete_all"),
    _route("placement.inventory.show", "GET", f"{RP}/inventories/{{resource_class}}",
           "placement:resource_providers:inventories:show", "inventory", "show_one"),
    _route("placement.inventory.update", "PUT", f"{RP}/inventories/{{resource_class}}",
           "placement:resource_providers:inventories:update", "inventory", "update_one"),
    _route("placement.inventory.delete", "DELETE", f"{RP}/inventories/{{resource_class}}",
           "placement:resource_providers:inventories:delete", "inventory", "delete_one"),
    _route("placement.usages.provider", "GET", f"{RP}/usages",
           "placement:resource_providers:usages", "usage", "for_provider"),
    _route("placement.allocations.provider", "GET", f"{RP}/allocations",
           "placement:resource_providers:allocations:list", "allocation", "list_for_provider"),
    _route("placement.allocations.post", "POST", f"{P}/allocations",
           "placement:allocations:manage", "allocation", "post_many"),
    _route("placement.allocations.show", "GET", f"{P}/allocations/{{consumer_uuid}}",
           "placement:allocations:list", "allocation", "show_for_consumer"),
    _route("placement.allocations.put", "PUT", f"{P}/allocations/{{consumer_uuid}}",
           "placement:allocations:update", "allocation", "put_for_consumer"),
    _route("placement.allocations.delete", "DELETE", f"{P}/allocations/{{consumer_uuid}}",
           "placement:allocations:delete", "allocation", "delete_for_consumer"),
    _route("placement.reshaper", "POST", f"{P}/reshaper", "placement:reshaper:reshape", "reshaper", "reshape"),
    _route("placement.usages.totals", "GET", f"{P}/usages", "placement:usages", "usage", "totals"),
    _route("placement.resource_classes.list", "GET", f"{P}/resource_classes",
           "placement:resource_classes:list", "resource_class", "list_all"),
    _route("placement.resource_classes.create", "POST", f"{P}/resource_classes",
           "placement:resource_classes:create", "resource_class", "create"),
    _route("placement.resource_classes.show", "GET", f"{P}/resource_classes/{{name}}",
           "placement:resource_classes:show", "resource_class", "show"),
    _route("placement.resource_classes.put", "PUT", f"{P}/resource_classes/{{name}}",
           "placement:resource_classes:update", "resource_class", "put"),
    _route("placement.resource_classes.delete", "DELETE", f"{P}/resource_classes/{{name}}",
           "placement:resource_classes:delete", "resource_class", "delete"),
    _route("placement.traits.list", "GET", f"{P}/traits", "placement:traits:list", "trait", "list_all"),
    _route("placement.traits.show", "GET", f"{P}/traits/{{name}}", "placement:traits:show", "trait", "show"),
    _route("placement.traits.put", "PUT", f"{P}/traits/{{name}}", "placement:traits:update", "trait", "put"),
    _route("placement.traits.delete", "DELETE", f"{P}/traits/{{name}}", "placement:traits:delete", "trait", "delete"),
    _route("placement.traits.provider", "GET", f"{RP}/traits",
           "placement:resource_providers:traits:list", "trait", "list_for_provider"),
    _route("placement.traits.provider_set", "PUT", f"{RP}/traits",
           "placement:resource_providers:traits:update", "trait", "set_for_provider"),
    _route("placement.traits.provider_delete", "DELETE", f"{RP}/traits",
           "placement:resource_providers:traits:delete", "trait", "delete_for_provider"),
    _route("placement.allocation_candidates.list", "GET", f"{P}/allocation_candidates",
           "placement:allocation_candidates:list", "allocation_candidate", "list_all"),
]
