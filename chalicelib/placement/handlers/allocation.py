"""/placement/allocations[/{consumer_uuid}] and /resource_providers/{uuid}/allocations."""

from __future__ import annotations

from typing import Any

from chalicelib.http.family import Reply, Request
from chalicelib.placement import microversion, web
from chalicelib.placement.microversion import Version
from chalicelib.placement.models import INCOMPLETE_ID, UNKNOWN_CONSUMER_TYPE, ConsumerWrite
from chalicelib.placement.schemas import allocation as schema
from chalicelib.placement.service import PlacementService


def _normal_consumer(raw: str) -> str:
    uuid = web.normal_uuid(raw)
    if uuid is None:
        raise web.bad_request(f"Malformed consumer_uuid: {raw}")
    return uuid


def _amounts(resources: dict[str, Any]) -> dict[str, int]:
    """A whole-number float (`2.0`, an integer to JSON Schema) is the integer, as Placement stores it."""
    return {rc: int(amount) for rc, amount in resources.items()}


def _by_provider(data: Any, version: Version) -> dict[str, dict[str, int]]:
    """Both body formats as {provider uuid: {class: amount}} (the list format is below 1.12)."""
    if version >= (1, 12):
        return {rp: _amounts(entry["resources"]) for rp, entry in data.items()}
    result: dict[str, dict[str, int]] = {}
    for entry in data:
        result[entry["resource_provider"]["uuid"]] = _amounts(entry["resources"])
    return result


def consumer_write(uuid: str, data: dict[str, Any], version: Version) -> ConsumerWrite:
    """One consumer's entry as validated. `mappings` (1.34) is checked by the schema and dropped, as
    upstream does: it is neither stored nor shown."""
    project = data.get("project_id")
    user = data.get("user_id")
    if project is None:  # below 1.8: an "incomplete" consumer
        project, user = INCOMPLETE_ID, INCOMPLETE_ID
    return ConsumerWrite(
        uuid=uuid, project_id=project, user_id=user or INCOMPLETE_ID,
        allocations=_by_provider(data["allocations"], version),
        generation=data.get("consumer_generation"),
        check_generation=microversion.features(version).consumer_generations,
        consumer_type=data.get("consumer_type"),  # required from 1.38 (the schema), absent before
    )


def show_for_consumer(service: PlacementService, request: Request) -> Reply:
    web.check_accept(request)
    version = web.version(request)
    consumer, generations = service.consumer(request.params["consumer_uuid"])
    if consumer is None:
        return web.reply(request, 200, {"allocations": {}})
    allocations: dict[str, Any] = {rp: {"resources": dict(resources), "generation": generations.get(rp)}
                                   for rp, resources in consumer.allocations.items()}
    body: dict[str, Any] = {"allocations": allocations}
    if version >= (1, 12):
        body["project_id"] = consumer.project_id
        body["user_id"] = consumer.user_id
    if version >= (1, 28):
        body["consumer_generation"] = consumer.generation
    if version >= (1, 38):
        body["consumer_type"] = consumer.consumer_type or UNKNOWN_CONSUMER_TYPE
    return web.reply(request, 200, body, last_modified=consumer.updated_at)


def put_for_consumer(service: PlacementService, request: Request) -> Reply:
    web.require_json(request)
    version = web.version(request)
    uuid = _normal_consumer(request.params["consumer_uuid"])
    data = web.json_body(request, schema.for_put(version))
    service.write_allocations([consumer_write(uuid, data, version)], single=True)
    return web.no_content(request)


def post_many(service: PlacementService, request: Request) -> Reply:
    version = web.introduced(request, (1, 13))
    web.require_json(request)
    data = web.json_body(request, schema.for_post(version))
    writes = [consumer_write(web.normal_uuid(c) or c, entry, version) for c, entry in data.items()]
    service.write_allocations(writes, single=False)
    return web.no_content(request)


def delete_for_consumer(service: PlacementService, request: Request) -> Reply:
    with web.answering_not_found():
        service.delete_allocations(request.params["consumer_uuid"])
    return web.no_content(request)


def list_for_provider(service: PlacementService, request: Request) -> Reply:
    web.check_accept(request)
    version = web.version(request)
    with web.answering_not_found():
        provider, items = service.provider_allocations(request.params["uuid"])
    allocations: dict[str, Any] = {}
    latest = provider.updated_at
    for consumer, item in items.items():
        entry: dict[str, Any] = {"resources": {rc: int(n) for rc, n in item["resources"].items()}}
        if version >= (1, 28):
            entry["consumer_generation"] = int(item["consumerGeneration"])
        allocations[consumer] = entry
        latest = max(latest, int(item.get("updatedAt", 0)))
    body = {"resource_provider_generation": provider.generation, "allocations": allocations}
    return web.reply(request, 200, body, last_modified=latest)
