"""/placement/resource_providers/{uuid}/inventories[/{resource_class}]."""

from __future__ import annotations

from typing import Any

from chalicelib.http.family import Reply, Request
from chalicelib.placement import errors, web
from chalicelib.placement.deps import placement
from chalicelib.placement.models import Inventory, Provider
from chalicelib.placement.rules import inventory_from
from chalicelib.placement.schemas import inventory as schema


def _all(provider: Provider) -> dict[str, Any]:
    return {
        "resource_provider_generation": provider.generation,
        "inventories": {rc: inv.as_dict() for rc, inv in provider.inventories.items()},
    }


def _one(provider: Provider, inventory: Inventory) -> dict[str, Any]:
    data: dict[str, Any] = inventory.as_dict()
    if provider.generation:  # Placement leaves a zero generation out of a single record
        data["resource_provider_generation"] = provider.generation
    return data


def _provider(svc: Any, request: Request) -> Provider:
    return placement(svc).provider(request.params["uuid"])


def list_all(svc: Any, request: Request) -> Reply:
    web.check_accept(request)
    uuid = request.params["uuid"]
    provider = placement(svc).store.provider(uuid)
    if provider is None:
        raise errors.not_found(
            f"No resource provider with uuid {uuid} found : No resource provider with uuid {uuid} found")
    return web.reply(request, 200, _all(provider), last_modified=provider.updated_at)


def replace_all(svc: Any, request: Request) -> Reply:
    web.require_json(request)
    _provider(svc, request)
    data = web.json_body(request, schema.REPLACE_ALL)
    inventories = {rc: inventory_from(raw) for rc, raw in data["inventories"].items()}
    provider = placement(svc).replace_inventories(
        request.params["uuid"], data["resource_provider_generation"], inventories, web.version(request))
    return web.reply(request, 200, _all(provider), last_modified=provider.updated_at or None)


def delete_all(svc: Any, request: Request) -> Reply:
    if web.version(request) < (1, 5):
        raise errors.PlacementError(405)
    _provider(svc, request)
    placement(svc).delete_inventories(request.params["uuid"])
    return web.no_content(request)


def add_one(svc: Any, request: Request) -> Reply:
    web.require_json(request)
    uuid = request.params["uuid"]
    _provider(svc, request)
    data = web.json_body(request, schema.CREATE_ONE)
    rc = data["resource_class"]
    inventory = inventory_from(data)
    provider = placement(svc).add_inventory(uuid, rc, inventory, web.version(request))
    location = {"location": web.absolute(request, f"/resource_providers/{uuid}/inventories/{rc}")}
    return web.reply(request, 201, _one(provider, inventory), headers=location)


def show_one(svc: Any, request: Request) -> Reply:
    web.check_accept(request)
    uuid, rc = request.params["uuid"], request.params["resource_class"]
    provider = placement(svc).store.provider(uuid)
    if provider is None:
        raise errors.not_found(
            f"No resource provider with uuid {uuid} found : No resource provider with uuid {uuid} found")
    inventory = provider.inventories.get(rc)
    if inventory is None:
        raise errors.not_found(f"No inventory of class {rc} for {uuid}")
    return web.reply(request, 200, _one(provider, inventory), last_modified=provider.updated_at)


def update_one(svc: Any, request: Request) -> Reply:
    web.require_json(request)
    uuid, rc = request.params["uuid"], request.params["resource_class"]
    _provider(svc, request)
    data = web.json_body(request, schema.UPDATE_ONE)
    inventory = inventory_from(data)
    provider = placement(svc).update_inventory(
        uuid, rc, data["resource_provider_generation"], inventory, web.version(request))
    return web.reply(request, 200, _one(provider, inventory))


def delete_one(svc: Any, request: Request) -> Reply:
    _provider(svc, request)
    placement(svc).delete_inventory(request.params["uuid"], request.params["resource_class"])
    return web.no_content(request)
