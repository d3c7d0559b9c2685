"""/placement/resource_providers/{uuid}/inventories[/{resource_class}]."""

from __future__ import annotations

from typing import Any

from chalicelib.http.family import Reply, Request
from chalicelib.placement import errors, web
from chalicelib.placement.models import Inventory, Provider
from chalicelib.placement.rules import inventory_from
from chalicelib.placement.schemas import inventory as schema
from chalicelib.placement.service import PlacementService


def _all(provider: Provider) -> dict[str, Any]:
    return {
        "resource_provider_generation": provider.generation,
        "inventories": {rc: inv.as_dict() for rc, inv in provider.inventories.items()},
    }


def _one(provider: Provider, inventory: Inventory, sent: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = inventory.as_dict()
    if sent is not None:  # a write's answer echoes the numbers as sent (`3` stays 3, `10.0` stays 10.0), as Placement
        data.update({k: v for k, v in sent.items() if k in data})
    if provider.generation:  # Placement leaves a zero generation out of a single record
        data["resource_provider_generation"] = provider.generation
    return data


def _all_as_sent(provider: Provider, sent: dict[str, dict[str, Any]]) -> dict[str, Any]:
    body = _all(provider)
    for rc, record in body["inventories"].items():
        record.update({k: v for k, v in sent.get(rc, {}).items() if k in record})
    return body


def _missing(uuid: str) -> str:
    """Placement's 404 text on its inventory reads (with the space before the colon, as upstream has it)."""
    return f"No resource provider with uuid {uuid} found : No resource provider with uuid {uuid} found"


def _provider(service: PlacementService, request: Request) -> Provider:
    return service.provider(request.params["uuid"])


def list_all(service: PlacementService, request: Request) -> Reply:
    web.check_accept(request)
    uuid = request.params["uuid"]
    with web.answering_not_found():
        provider = service.provider(uuid, _missing(uuid))
    # Placement takes last-modified from the inventories: none, no header.
    last_modified = provider.updated_at if provider.inventories else web.NOT_MODIFIED
    return web.reply(request, 200, _all(provider), last_modified=last_modified)


def replace_all(service: PlacementService, request: Request) -> Reply:
    web.require_json(request)
    read = _provider(service, request)
    data = web.json_body(request, schema.REPLACE_ALL)
    inventories = {rc: inventory_from(raw) for rc, raw in data["inventories"].items()}
    provider = service.replace_inventories(
        request.params["uuid"], data["resource_provider_generation"], inventories, web.features(request),
        read_first=read)
    # As GET: Placement takes last-modified from the inventories, so an emptied provider sends none.
    last_modified = (provider.updated_at or None) if provider.inventories else web.NOT_MODIFIED
    return web.reply(request, 200, _all_as_sent(provider, data["inventories"]), last_modified=last_modified)


def delete_all(service: PlacementService, request: Request) -> Reply:
    if web.version(request) < (1, 5):
        raise web.HttpError(405)
    read = _provider(service, request)
    service.delete_inventories(request.params["uuid"], read_first=read)
    return web.no_content(request)


def add_one(service: PlacementService, request: Request) -> Reply:
    web.require_json(request)
    uuid = request.params["uuid"]
    read = _provider(service, request)
    data = web.json_body(request, schema.CREATE_ONE)
    rc = data["resource_class"]
    inventory = inventory_from(data)
    provider = service.add_inventory(uuid, rc, inventory, web.features(request), read_first=read)
    location = {"location": web.absolute(request, f"/resource_providers/{uuid}/inventories/{rc}")}
    return web.reply(request, 201, _one(provider, inventory, data), headers=location)


def show_one(service: PlacementService, request: Request) -> Reply:
    web.check_accept(request)
    uuid, rc = request.params["uuid"], request.params["resource_class"]
    with web.answering_not_found():
        provider = service.provider(uuid, _missing(uuid))
        inventory = provider.inventories.get(rc)
        if inventory is None:
            raise errors.NotFound(f"No inventory of class {rc} for {uuid}")
    return web.reply(request, 200, _one(provider, inventory), last_modified=provider.updated_at)


def update_one(service: PlacementService, request: Request) -> Reply:
    web.require_json(request)
    uuid, rc = request.params["uuid"], request.params["resource_class"]
    read = _provider(service, request)
    data = web.json_body(request, schema.UPDATE_ONE)
    inventory = inventory_from(data)
    provider = service.update_inventory(
        uuid, rc, data["resource_provider_generation"], inventory, web.features(request), read_first=read)
    return web.reply(request, 200, _one(provider, inventory, data))


def delete_one(service: PlacementService, request: Request) -> Reply:
    read = _provider(service, request)  # an unknown provider escapes upstream's handler too
    with web.answering_not_found(except_for=errors.ProviderNotFound):
        service.delete_inventory(request.params["uuid"], request.params["resource_class"], read_first=read)
    return web.no_content(request)
