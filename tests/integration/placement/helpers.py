"""Small builders for Placement requests in tests (the Placement tier's and the fleet tests' alike)."""

from __future__ import annotations

import uuid
from typing import Any

PROJECT = "8f1e6c7a-0000-4000-8000-000000000001"
USER = "8f1e6c7a-0000-4000-8000-000000000002"


def new_uuid() -> str:
    return str(uuid.uuid4())


def provider(client: Any, name: str | None = None, **inventories: dict[str, Any]) -> str:
    """A provider with the given inventories (class -> record); its uuid."""
    answer = client.post("/placement/resource_providers", {"name": name or new_uuid()}, version="1.28")
    assert answer.status == 200, answer.body
    uuid_ = answer.body["uuid"]
    if inventories:
        put = client.put(f"/placement/resource_providers/{uuid_}/inventories",
                         {"resource_provider_generation": 0, "inventories": inventories}, version="1.28")
        assert put.status == 200, put.body
    return uuid_


def claim(client: Any, consumer: str, allocations: dict[str, dict[str, int]], generation: int | None = None,
          project: str = PROJECT, user: str = USER) -> Any:
    body = {
        "allocations": {rp: {"resources": res} for rp, res in allocations.items()},
        "project_id": project, "user_id": user, "consumer_generation": generation,
    }
    return client.put(f"/placement/allocations/{consumer}", body, version="1.28")


def placement_client(services: Any) -> Any:
    """A Placement client over the app with a fresh Placement key (X-Auth-Token), as an operator holds."""
    from chalicelib.auth.keys import generate_key, hash_key
    from tests.integration.placement.conftest import PlacementClient

    raw = generate_key()
    services.keys.add(hash_key(raw), "placement")
    return PlacementClient(services, raw)


def set_inventory_total(client: Any, provider_uuid: str, resource_class: str, total: int) -> Any:
    """`PUT …/inventories` changing one class's total, every other field and class as they are."""
    path = f"/placement/resource_providers/{provider_uuid}/inventories"
    current = client.get(path, version="1.28").body
    record = {**current["inventories"][resource_class], "total": total}
    return client.put(path, {"resource_provider_generation": current["resource_provider_generation"],
                             "inventories": {**current["inventories"], resource_class: record}}, version="1.28")
