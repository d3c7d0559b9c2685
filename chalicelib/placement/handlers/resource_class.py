"""/placement/resource_classes[/{name}] (1.2): the standard classes and CUSTOM_* ones."""

from __future__ import annotations

from typing import Any

from chalicelib.http.family import Reply, Request
from chalicelib.placement import errors, web
from chalicelib.placement.classes import STANDARD
from chalicelib.placement.microversion import Version
from chalicelib.placement.schemas import resource_class as schema
from chalicelib.placement.service import PlacementService


def _gate(request: Request) -> Version:
    version = web.introduced(request, (1, 2))
    return version


def _represent(request: Request, name: str) -> dict[str, Any]:
    return {"name": name, "links": [{"rel": "self", "href": web.href(request, f"/resource_classes/{name}")}]}


def list_all(service: PlacementService, request: Request) -> Reply:
    _gate(request)
    web.check_accept(request)
    names = list(STANDARD) + service.custom_classes()
    return web.reply(request, 200, {"resource_classes": [_represent(request, n) for n in names]})


def show(service: PlacementService, request: Request) -> Reply:
    _gate(request)
    web.check_accept(request)
    name = request.params["name"]
    if not service.class_exists(name):
        raise errors.NotFound(f"No such resource class {name}.")
    return web.reply(request, 200, _represent(request, name))


def create(service: PlacementService, request: Request) -> Reply:
    _gate(request)
    web.require_json(request)
    data = web.json_body(request, schema.CUSTOM_CLASS)
    name = data["name"]
    if not service.create_class(name):
        raise errors.ResourceClassExists(f"Conflicting resource class already exists: {name}")
    return Reply(201, None, {"location": web.absolute(request, f"/resource_classes/{name}")})


def put(service: PlacementService, request: Request) -> Reply:
    """1.7+: create or confirm a custom class (201 / 204). 1.2-1.6: rename a custom class (the body names it)."""
    version = _gate(request)
    name = request.params["name"]
    if version < (1, 7):
        web.require_json(request)
        data = web.json_body(request, schema.CUSTOM_CLASS)
        service.rename_class(name, data["name"])
        return web.reply(request, 200, _represent(request, data["name"]))
    web.validate({"name": name}, schema.CUSTOM_CLASS)
    location = {"location": web.absolute(request, f"/resource_classes/{name}")}
    if not service.create_class(name):
        return Reply(204, None, location)
    return Reply(201, None, location)


def delete(service: PlacementService, request: Request) -> Reply:
    _gate(request)
    name = request.params["name"]
    if not service.class_exists(name):
        raise errors.NotFound(f"No such resource class {name}.")
    service.delete_class(name)
    return web.no_content(request)
