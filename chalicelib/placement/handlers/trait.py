"""/placement/traits[/{name}] and /placement/resource_providers/{uuid}/traits (1.6), as Placement 16.0.0's
placement/handlers/trait.py answers them; from 1.15 answers carry no-cache and last-modified."""

from __future__ import annotations

from typing import Any

from chalicelib.http.family import Reply, Request
from chalicelib.placement import web
from chalicelib.placement.microversion import Version
from chalicelib.placement.models import Provider
from chalicelib.placement.schemas import trait as schema
from chalicelib.placement.service import PlacementService
from chalicelib.placement.traits import parse_list_filter

CACHE_HEADERS_SINCE = (1, 15)


def _gate(request: Request) -> Version:
    version = web.version(request)
    if version < (1, 6):
        raise web.not_found()
    return version


def _cache_headers(version: Version, last_modified: float | None) -> dict[str, str]:
    """What upstream sets on its body-less trait answers from 1.15 (None: now)."""
    if version < CACHE_HEADERS_SINCE:
        return {}
    return {"cache-control": "no-cache", "last-modified": web.http_date(last_modified)}


def list_all(service: PlacementService, request: Request) -> Reply:
    _gate(request)
    web.check_accept(request)
    params = web.query(request, schema.LIST_QUERY)
    wanted = parse_list_filter(params.get("name"), params.get("associated"))
    found = service.list_traits(wanted)
    latest = max((at for _name, at in found if at), default=None)
    return web.reply(request, 200, {"traits": [name for name, _at in found]}, last_modified=latest)


def show(service: PlacementService, request: Request) -> Reply:
    version = _gate(request)
    created_at = service.trait_created_at(request.params["name"])
    return Reply(204, None, _cache_headers(version, created_at))


def put(service: PlacementService, request: Request) -> Reply:
    version = _gate(request)
    name = request.params["name"]
    created, created_at = service.create_trait(name)
    headers = {"location": web.absolute(request, f"/traits/{name}"), **_cache_headers(version, created_at)}
    return Reply(201 if created else 204, None, headers)


def delete(service: PlacementService, request: Request) -> Reply:
    _gate(request)
    service.delete_trait(request.params["name"])
    return web.no_content(request)


def _provider_traits(request: Request, provider: Provider) -> Reply:
    body: dict[str, Any] = {"traits": sorted(provider.traits),
                            "resource_provider_generation": provider.generation}
    return web.reply(request, 200, body)


def list_for_provider(service: PlacementService, request: Request) -> Reply:
    _gate(request)
    web.check_accept(request)
    uuid = request.params["uuid"]
    provider = service.provider(
        uuid, f"No resource provider with uuid {uuid} found: No resource provider with uuid {uuid} found")
    return _provider_traits(request, provider)


def set_for_provider(service: PlacementService, request: Request) -> Reply:
    _gate(request)
    web.require_json(request)
    data = web.json_body(request, schema.SET_PROVIDER_TRAITS)
    provider = service.set_provider_traits(request.params["uuid"], data["resource_provider_generation"],
                                           data["traits"])
    return _provider_traits(request, provider)


def delete_for_provider(service: PlacementService, request: Request) -> Reply:
    _gate(request)
    service.set_provider_traits(request.params["uuid"], None, [])
    return web.no_content(request)
