"""/placement/resource_providers/{uuid}/usages and /placement/usages (1.9)."""

from __future__ import annotations

from chalicelib.http.family import Reply, Request
from chalicelib.placement import web
from chalicelib.placement.schemas import usage as schema
from chalicelib.placement.service import PlacementService


def for_provider(service: PlacementService, request: Request) -> Reply:
    """Every inventory class with its usage, 0 when unused."""
    web.check_accept(request)
    uuid = request.params["uuid"]
    with web.answering_not_found():
        provider = service.provider(
            uuid, f"No resource provider with uuid {uuid} found: No resource provider with uuid {uuid} found")
    usages = {rc: provider.used(rc) for rc in provider.inventories}
    return web.reply(request, 200, {"resource_provider_generation": provider.generation, "usages": usages})


def totals(service: PlacementService, request: Request) -> Reply:
    """Usage summed over a project (and user): only classes with allocations; from 1.38 per consumer type."""
    web.introduced(request, (1, 9))
    web.check_accept(request)
    version = web.version(request)
    params = web.query(request, schema.totals_query(version))
    if version >= (1, 38):  # by consumer type, each with its consumer_count
        by_type = service.usages_by_consumer_type(params["project_id"], params.get("user_id"),
                                                  params.get("consumer_type"))
        return web.reply(request, 200, {"usages": by_type})
    usages = service.usage_totals(params["project_id"], params.get("user_id"))
    return web.reply(request, 200, {"usages": usages})
