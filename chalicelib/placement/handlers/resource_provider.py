"""/placement/resource_providers[/{uuid}]: create, list (with its filters), show, update (rename, re-parent),
delete."""

from __future__ import annotations

from typing import Any

from chalicelib.http.family import Reply, Request
from chalicelib.placement import web
from chalicelib.placement.microversion import Version
from chalicelib.placement.models import Provider
from chalicelib.placement.schemas import resource_provider as schema
from chalicelib.placement.service import PlacementService


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
        data["parent_provider_uuid"] = provider.parent_uuid
        data["root_provider_uuid"] = provider.root
    return data


def create(service: PlacementService, request: Request) -> Reply:
    web.require_json(request)
    version = web.version(request)
    data = web.json_body(request, schema.create(version))
    uuid = web.normal_uuid(data["uuid"]) if data.get("uuid") else None
    provider = service.create_provider(data["name"], uuid, schema.parent_of(data))
    location = {"location": web.absolute(request, f"/resource_providers/{provider.uuid}")}
    if version >= (1, 20):
        return web.reply(request, 200, represent(request, provider, version), headers=location)
    return Reply(201, None, location)


def list_all(service: PlacementService, request: Request) -> Reply:
    web.check_accept(request)
    version = web.version(request)
    params = web.query(request, schema.list_query(version))
    # As Placement: an empty filter filters nothing.
    uuid = web.normal_uuid(params["uuid"]) if params.get("uuid") else None
    member_of = schema.member_of(request, version)  # parsed in Placement's order: member_of, required, resources
    required = schema.required_traits(request.query["required"], web.features(request)) \
        if "required" in params else None
    resources = schema.resources(params)
    providers = service.list_providers(params.get("name") or None, uuid, in_tree=params.get("in_tree") or None,
                                       member_of=member_of, resources=resources, required=required)
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
    read = service.provider(request.params["uuid"])  # 404 before the body, as Placement
    data = web.json_body(request, schema.update(version))
    provider = service.update_provider(request.params["uuid"], data["name"],
                                       parent_given="parent_provider_uuid" in data,
                                       parent_uuid=schema.parent_of(data), features=web.features(request),
                                       read_first=read)
    modified = web.NOT_MODIFIED if provider.never_updated else provider.updated_at  # as read, as upstream
    return web.reply(request, 200, represent(request, provider, version), last_modified=modified)


def delete(service: PlacementService, request: Request) -> Reply:
    with web.answering_not_found():
        service.delete_provider(request.params["uuid"])
    return web.no_content(request)
