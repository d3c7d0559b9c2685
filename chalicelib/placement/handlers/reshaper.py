"""POST /placement/reshaper (1.30): a provider tree's inventories and allocations changed as one
(docs/decisions/0041-reshaper-protocol.md)."""

from __future__ import annotations

from chalicelib.http.family import Reply, Request
from chalicelib.placement import web
from chalicelib.placement.handlers.allocation import consumer_write
from chalicelib.placement.rules import inventory_from
from chalicelib.placement.schemas import reshaper as schema
from chalicelib.placement.service import PlacementService


def reshape(service: PlacementService, request: Request) -> Reply:
    version = web.introduced(request, (1, 30))
    web.require_json(request)
    data = web.json_body(request, schema.for_post(version))
    inventories = {rp: (int(entry["resource_provider_generation"]),
                        {rc: inventory_from(raw) for rc, raw in entry["inventories"].items()})
                   for rp, entry in data["inventories"].items()}
    writes = [consumer_write(web.normal_uuid(c) or c, entry, version) for c, entry in data["allocations"].items()]
    service.reshape(inventories, writes)
    return web.no_content(request)
