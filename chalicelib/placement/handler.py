"""The Placement API's one route table (as upstream's placement/handler.py); the composition root,
chalicelib.runtime, builds its blueprint. The handlers are in chalicelib/placement/handlers/, one
module per resource, each taking the Placement service; they are imported on the first request that
needs them, so `import app` does not pay for Placement's schemas and jsonschema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalicelib.auth.principals import PLACEMENT_GRANT
from chalicelib.http.family import Reply, Request, Route, lazy

P = "/placement"
RP = f"{P}/resource_providers/{{uuid}}"
G = PLACEMENT_GRANT

UNBUILT_PATHS = (  # allocation candidates: 404 (handlers/unbuilt.py)
    "/placement/allocation_candidates",
)


def _serve(module: str, function: str) -> Callable[[Any, Request], Reply]:
    """handlers.<module>.<function>, loaded on its first call; it is given the Placement service the
    composition root built once (chalicelib/runtime.py, through the one factory in placement/deps.py)."""
    return lazy(f"chalicelib.placement.handlers.{module}", function)


def _route(name: str, method: str, path: str, grant: str | None, module: str, function: str) -> Route[Any]:
    return Route(name, method, path, grant, _serve(module, function))


ROUTES: list[Route[Any]] = [
    # API Gateway (and Chalice's local matcher) drop the trailing slash: this serves /placement/ too.
    _route("placement.root", "GET", P, None, "root", "home"),
    _route("placement.resource_providers.list", "GET", f"{P}/resource_providers", G, "resource_provider", "list_all"),
    _route("placement.resource_providers.create", "POST", f"{P}/resource_providers", G, "resource_provider",
           "create"),
    _route("placement.resource_providers.show", "GET", RP, G, "resource_provider", "show"),
    _route("placement.resource_providers.update", "PUT", RP, G, "resource_provider", "update"),
    _route("placement.resource_providers.delete", "DELETE", RP, G, "resource_provider", "delete"),
    _route("placement.aggregates.show", "GET", f"{RP}/aggregates", G, "aggregate", "show"),
    _route("placement.aggregates.replace", "PUT", f"{RP}/aggregates", G, "aggregate", "replace"),
    _route("placement.inventories.list", "GET", f"{RP}/inventories", G, "inventory", "list_all"),
    _route("placement.inventories.create", "POST", f"{RP}/inventories", G, "inventory", "add_one"),
    _route("placement.inventories.replace", "PUT", f"{RP}/inventories", G, "inventory", "replace_all"),
    _route("placement.inventories.delete_all", "DELETE", f"{RP}/inventories", G, "inventory", "delete_all"),
    _route("placement.inventory.show", "GET", f"{RP}/inventories/{{resource_class}}", G, "inventory", "show_one"),
    _route("placement.inventory.update", "PUT", f"{RP}/inventories/{{resource_class}}", G, "inventory",
           "update_one"),
    _route("placement.inventory.delete", "DELETE", f"{RP}/inventories/{{resource_class}}", G, "inventory",
           "delete_one"),
    _route("placement.usages.provider", "GET", f"{RP}/usages", G, "usage", "for_provider"),
    _route("placement.allocations.provider", "GET", f"{RP}/allocations", G, "allocation", "list_for_provider"),
    _route("placement.allocations.post", "POST", f"{P}/allocations", G, "allocation", "post_many"),
    _route("placement.allocations.show", "GET", f"{P}/allocations/{{consumer_uuid}}", G, "allocation",
           "show_for_consumer"),
    _route("placement.allocations.put", "PUT", f"{P}/allocations/{{consumer_uuid}}", G, "allocation",
           "put_for_consumer"),
    _route("placement.allocations.delete", "DELETE", f"{P}/allocations/{{consumer_uuid}}", G, "allocation",
           "delete_for_consumer"),
    _route("placement.reshaper", "POST", f"{P}/reshaper", G, "reshaper", "reshape"),
    _route("placement.usages.totals", "GET", f"{P}/usages", G, "usage", "totals"),
    _route("placement.resource_classes.list", "GET", f"{P}/resource_classes", G, "resource_class", "list_all"),
    _route("placement.resource_classes.create", "POST", f"{P}/resource_classes", G, "resource_class", "create"),
    _route("placement.resource_classes.show", "GET", f"{P}/resource_classes/{{name}}", G, "resource_class",
           "show"),
    _route("placement.resource_classes.put", "PUT", f"{P}/resource_classes/{{name}}", G, "resource_class", "put"),
    _route("placement.resource_classes.delete", "DELETE", f"{P}/resource_classes/{{name}}", G, "resource_class",
           "delete"),
    _route("placement.traits.list", "GET", f"{P}/traits", G, "trait", "list_all"),
    _route("placement.traits.show", "GET", f"{P}/traits/{{name}}", G, "trait", "show"),
    _route("placement.traits.put", "PUT", f"{P}/traits/{{name}}", G, "trait", "put"),
    _route("placement.traits.delete", "DELETE", f"{P}/traits/{{name}}", G, "trait", "delete"),
    _route("placement.traits.provider", "GET", f"{RP}/traits", G, "trait", "list_for_provider"),
    _route("placement.traits.provider_set", "PUT", f"{RP}/traits", G, "trait", "set_for_provider"),
    _route("placement.traits.provider_delete", "DELETE", f"{RP}/traits", G, "trait", "delete_for_provider"),
    *[
        _route("placement.unbuilt", method, path, G, "unbuilt", "not_built")
        for path in UNBUILT_PATHS
        for method in ("GET", "PUT", "POST", "DELETE")
    ],
]
