"""/placement/resource_providers/{uuid}/aggregates (1.1; generations 1.19): a provider's aggregates, kept on
its item and, for `member_of`, as one `PLAGG#<aggregate>` item per membership (docs/placement.md)."""

from __future__ import annotations

from typing import Any

from chalicelib.http.family import Reply, Request
from chalicelib.placement import web
from chalicelib.placement.microversion import Version
from chalicelib.placement.models import Provider
from chalicelib.placement.schemas import aggregate as schema
from chalicelib.placement.service import PlacementService


def _gate(request: Request) -> Version:
    version = web.introduced(request, (1, 1))
    return version


def _answer(request: Request, provider: Provider, aggregates: list[str], version: Version) -> Reply:
    body: dict[str, Any] = {"aggregates": aggregates}
    if version >= (1, 19):
        body["resource_provider_generation"] = provider.generation
    # As Placement: no time is kept for a membership, so last-modified is now.
    return web.reply(request, 200, body)


def show(service: PlacementService, request: Request) -> Reply:
    version = _gate(request)
    web.check_accept(request)
    provider = service.provider(request.params["uuid"])
    return _answer(request, provider, sorted(provider.aggregates), version)


def replace(service: PlacementService, request: Request) -> Reply:
    version = _gate(request)
    web.require_json(request)
    read = service.provider(request.params["uuid"])  # 404 before the body, as Placement
    data = web.json_body(request, schema.put(version))
    aggregates, generation = (data["aggregates"], data["resource_provider_generation"]) if version >= (1, 19) \
        else (data, None)
    provider = service.set_aggregates(request.params["uuid"], aggregates, generation, web.features(request),
                                      read_first=read)
    return _answer(request, provider, aggregates, version)
