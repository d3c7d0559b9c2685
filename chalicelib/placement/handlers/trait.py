"""/placement/traits[/{name}] and /placement/resource_providers/{uuid}/traits (1.6), as Placement 16.0.0's
placement/handlers/trait.py answers them; from 1.15 answers carry no-cache and last-modified."""

from __future__ import annotations

from typing import Any

from chalicelib.http.family import Reply, Request
from chalicelib.placement import web
from chalicelib.placement.models import Provider
from chalicelib.placement.schemas import trait as schema
from chalicelib.placement.service import PlacementService
from chalicelib.placement.traits import parse_list_filter

TRAITS = (1, 6)


def list_all(service: PlacementService, request: Request) -> Reply:
    web.introduced(request, TRAITS)
    web.check_accept(request)
    params = web.query(request, schema.LIST_QUERY)
    wanted = parse_list_filter(params.get("name"), params.get("associated"))
    found = service.list_traits(wanted, created_at=web.sends_cache_headers(request))
    latest = max((at for _name, at in found if at), default=None)
    return web.reply(request, 200, {"traits": [name for name, _at in found]}, last_modified=latest)


def show(service: PlacementService, request: Request) -> Reply:
    web.introduced(request, TRAITS)
    with web.answering_not_found():
        created_at = service.trait_created_at(request.params["name"])
    return Reply(204, None, web.cache_headers(request, created_at))  # upstream's body-less answers carry them


def put(service: PlacementService, request: Request) -> Reply:
    web.introduced(request, TRAITS)
    name = request.params["name"]
    created, created_at = service.create_trait(name)
    headers = {"location": web.absolute(request, f"/traits/{name}"), **web.cache_headers(request, created_at)}
    return Reply(201 if created else 204, None, headers)


def delete(service: PlacementService, request: Request) -> Reply:
    web.introduced(request, TRAITS)
    with web.answering_not_found():
        service.delete_trait(request.params["name"])
    return web.no_content(request)


def _provider_traits(request: Request, provider: Provider) -> Reply:
    body: dict[str, Any] = {"traits": sorted(provider.traits),
                            "resource_provider_generation": provider.generation}
    return web.reply(request, 200, body)


def list_for_provider(service: PlacementService, request: Request) -> Reply:
    web.introduced(request, TRAITS)
    web.check_accept(request)
    uuid = request.params["uuid"]
    with web.answering_not_found():
        provider = service.provider(
            uuid, f"No resource provider with uuid {uuid} found: No resource provider with uuid {uuid} found")
    return _provider_traits(request, provider)


def set_for_provider(service: PlacementService, request: Request) -> Reply:
    web.introduced(request, TRAITS)
    web.require_json(request)
    data = web.json_body(request, schema.SET_PROVIDER_TRAITS)
    provider = service.set_provider_traits(request.params["uuid"], data["resource_provider_generation"],
                                           data["traits"])
    return _provider_traits(request, provider)


def delete_for_provider(service: PlacementService, request: Request) -> Reply:
    web.introduced(request, TRAITS)
    service.set_provider_traits(request.params["uuid"], None, [])
    return web.no_content(request)
