"""/placement/resource_providers[/{uuid}]: create, list, show, rename, delete (flat providers)."""

from __future__ import annotations

from typing import Any

from chalicelib.http.family import Reply, Request
from chalicelib.placement import errors, web
from chalicelib.placement.microversion import Version
from chalicelib.placement.models import Provider
from chalicelib.placement.schemas import resource_provider as schema
from chalicelib.placement.service import PlacementService

# Query parameters of features this service does not build: a 400 that says so.
UNBUILT_FILTERS = ("member_of", "resources", "in_tree")


def links(request: Request, uuid: str, version: Version) -> list[dict[str, str]]:
    base = f"/resource_providers/{uuid}"
    rels = ["inventories", "usages"]
    if version >= (1, 1):
        rels.append("aggregates")
    if version >= (1, 6):
        rels.append("traits")
    if version >= (1, 11):
        rels.append("allocations")
    return [{"rel": "self", "href": web.href(request, base)}] + [
        {"rel": rel, "href": web.href(request, f"{base}/{rel}")} for rel in rels
    ]


def represent(request: Request, provider: Provider, version: Version) -> dict[str, Any]:
    data: dict[str, Any] = {
        "uuid": provider.uuid, "name": provider.name, "generation": provider.generation,
        "links": links(request, provider.uuid, version),
    }
    if version >= (1, 14):
        data["parent_provider_uuid"] = None
        data["root_provider_uuid"] = provider.uuid
    return data


def _refuse_parent(data: dict[str, Any]) -> None:
    if data.get("parent_provider_uuid") is not None:
        raise web.bad_request("Nested resource providers are not supported by this service: "
                              "parent_provider_uuid must be null.")


def create(service: PlacementService, request: Request) -> Reply:
    web.require_json(request)
    version = web.version(request)
    data = web.json_body(request, schema.create(version))
    _refuse_parent(data)
    uuid = web.normal_uuid(data["uuid"]) if data.get("uuid") else None
    provider = service.create_provider(data["name"], uuid)
    location = {"location": web.absolute(request, f"/resource_providers/{provider.uuid}")}
    if version >= (1, 20):
        return web.reply(request, 200, represent(request, provider, version), headers=location)
    return Reply(201, None, location)


def list_all(service: PlacementService, request: Request) -> Reply:
    web.check_accept(request)
    version = web.version(request)
    params = web.query(request, schema.list_query(version))
    unbuilt = [p for p in UNBUILT_FILTERS if p in params]
    if unbuilt:
        raise web.bad_request(
            f"The '{unbuilt[0]}' filter is not supported by this service "
            "(aggregates and nested providers are not built).", errors.QUERY_BAD_VALUE)
    # As Placement: an empty filter filters nothing.
    uuid = web.normal_uuid(params["uuid"]) if params.get("uuid") else None
    providers = service.list_providers(params.get("name") or None, uuid)
    if "required" in params:
        providers = service.filter_by_traits(providers, schema.required_traits(request.query["required"],
                                                                               web.features(request)))
    latest = max((p.updated_at for p in providers), default=0)
    body = {"resource_providers": [represent(request, p, version) for p in providers]}
    return web.reply(request, 200, body, last_modified=latest)


def show(service: PlacementService, request: Request) -> Reply:
    web.check_accept(request)
    version = web.version(request)
    provider = service.provider(request.params["uuid"])
    return web.reply(request, 200, represent(request, provider, version), last_modified=provider.updated_at)


def update(service: PlacementService, request: Request) -> Reply:
    web.require_json(request)
    version = web.version(request)
    service.provider(request.params["uuid"])  # 404 before the body, as Placement
    data = web.json_body(request, schema.update(version))
    _refuse_parent(data)
    provider = service.rename_provider(request.params["uuid"], data["name"])
    return web.reply(request, 200, represent(request, provider, version))


def delete(service: PlacementService, request: Request) -> Reply:
    service.delete_provider(request.params["uuid"])
    return web.no_content(request)
