"""The Placement API's one route table (the composition root, chalicelib.runtime, builds its blueprint)."""

from __future__ import annotations

from chalicelib.auth.principals import PLACEMENT_GRANT
from chalicelib.http.family import Route
from chalicelib.placement import (
    allocations,
    inventories,
    resource_classes,
    resource_providers,
    root,
    unbuilt,
    usages,
)

P = "/placement"
RP = f"{P}/resource_providers/{{uuid}}"
G = PLACEMENT_GRANT

ROUTES: list[Route] = [
    # API Gateway (and Chalice's local matcher) drop the trailing slash: this serves /placement/ too.
    Route("placement.root", "GET", P, None, root.home),
    Route("placement.resource_providers.list", "GET", f"{P}/resource_providers", G, resource_providers.list_all),
    Route("placement.resource_providers.create", "POST", f"{P}/resource_providers", G, resource_providers.create),
    Route("placement.resource_providers.show", "GET", RP, G, resource_providers.show),
    Route("placement.resource_providers.update", "PUT", RP, G, resource_providers.update),
    Route("placement.resource_providers.delete", "DELETE", RP, G, resource_providers.delete),
    Route("placement.inventories.list", "GET", f"{RP}/inventories", G, inventories.list_all),
    Route("placement.inventories.create", "POST", f"{RP}/inventories", G, inventories.add_one),
    Route("placement.inventories.replace", "PUT", f"{RP}/inventories", G, inventories.replace_all),
    Route("placement.inventories.delete_all", "DELETE", f"{RP}/inventories", G, inventories.delete_all),
    Route("placement.inventory.show", "GET", f"{RP}/inventories/{{resource_class}}", G, inventories.show_one),
    Route("placement.inventory.update", "PUT", f"{RP}/inventories/{{resource_class}}", G, inventories.update_one),
    Route("placement.inventory.delete", "DELETE", f"{RP}/inventories/{{resource_class}}", G,
          inventories.delete_one),
    Route("placement.usages.provider", "GET", f"{RP}/usages", G, usages.for_provider),
    Route("placement.allocations.provider", "GET", f"{RP}/allocations", G, allocations.list_for_provider),
    Route("placement.allocations.post", "POST", f"{P}/allocations", G, allocations.post_many),
    Route("placement.allocations.show", "GET", f"{P}/allocations/{{consumer_uuid}}", G,
          allocations.show_for_consumer),
    Route("placement.allocations.put", "PUT", f"{P}/allocations/{{consumer_uuid}}", G,
          allocations.put_for_consumer),
    Route("placement.allocations.delete", "DELETE", f"{P}/allocations/{{consumer_uuid}}", G,
          allocations.delete_for_consumer),
    Route("placement.usages.totals", "GET", f"{P}/usages", G, usages.totals),
    Route("placement.resource_classes.list", "GET", f"{P}/resource_classes", G, resource_classes.list_all),
    Route("placement.resource_classes.create", "POST", f"{P}/resource_classes", G, resource_classes.create),
    Route("placement.resource_classes.show", "GET", f"{P}/resource_classes/{{name}}", G, resource_classes.show),
    Route("placement.resource_classes.put", "PUT", f"{P}/resource_classes/{{name}}", G, resource_classes.put),
    Route("placement.resource_classes.delete", "DELETE", f"{P}/resource_classes/{{name}}", G,
          resource_classes.delete),
    *[
        Route("placement.unbuilt", method, path, G, unbuilt.not_built)
        for path in unbuilt.PATHS
        for method in ("GET", "PUT", "POST", "DELETE")
    ],
]
