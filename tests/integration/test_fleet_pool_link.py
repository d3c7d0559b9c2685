"""Issue 14 item 21: a pool is tied to its Placement provider by a link Placement cannot change.

The provider of a pool carries its tenant's fleet version as `linkedVersion`, written by fleet; Placement's
inventory writes and deletes move that version whatever the provider is named. Before, the tenant was
derived from the provider's name (`<tenant>/<pool>`), so a rename through Placement untied them and a
stale apply after an inventory change was no CONFIG_DRIFT.
"""

from __future__ import annotations

import threading

from chalicelib.fleet.keys import fleet_version_key
from chalicelib.placement.store import PlacementStore
from chalicelib.store.codec import key
from chalicelib.store.ops import get_item
from tests.integration.placement.helpers import placement_client, set_inventory_total
from tests.integration.test_fleet import _apply, _plan, bus, document, http

__all__ = ["bus", "http"]  # the fleet tests' fixtures, used here by name


def _fleet_version(services, tenant: str) -> int:
    pk, sk = fleet_version_key(tenant)
    return int(get_item(services.client, services.table, key(pk, sk))["version"])


def _pool_provider(http, services):
    pool_id = http.rpc("pools.list", {}, http.token)[1]["items"][0]["id"]
    return PlacementStore(services.client, services.table).provider(pool_id)


def test_a_renamed_pool_provider_still_moves_the_fleet_version_and_a_stale_apply_is_config_drift(http, services):
    assert _apply(http, document())[0] == 200
    provider = _pool_provider(http, services)
    tenant = provider.name.split("/", 1)[0]
    assert provider.linked_version == fleet_version_key(tenant)
    changed = document()
    changed["flavors"][0]["description"] = "bigger"
    plan_hash = _plan(http, changed)["planHash"]

    placement = placement_client(services)
    renamed = placement.put(f"/placement/resource_providers/{provider.uuid}", {"name": "no-tenant-here"},
                            version="1.28")
    assert renamed.status == 200
    before = _fleet_version(services, tenant)
    written = set_inventory_total(placement, provider.uuid, "VCPU", 48)
    assert written.status == 200, written.body
    assert _fleet_version(services, tenant) == before + 1
    status, body = _apply(http, changed, plan_hash=plan_hash)
    assert status == 409 and body["error"]["code"] == "CONFIG_DRIFT", body


def test_a_rename_racing_an_inventory_write_never_loses_the_fleet_version_bump(http, services):
    """Renames and inventory writes through Placement at once: every inventory write that succeeded moved the
    fleet version exactly once, whichever name the provider had when it was read."""
    assert _apply(http, document())[0] == 200
    provider = _pool_provider(http, services)
    tenant = provider.name.split("/", 1)[0]
    before = _fleet_version(services, tenant)
    placement = placement_client(services)
    path = f"/placement/resource_providers/{provider.uuid}"
    start = threading.Barrier(2)
    written: list[int] = []

    def rename() -> None:
        start.wait()
        for i in range(6):
            assert placement.put(path, {"name": f"renamed-{i}"}, version="1.28").status in (200, 409)

    def write() -> None:
        start.wait()
        for total in range(50, 56):
            generation = placement.get(f"{path}/inventories", version="1.28").body["resource_provider_generation"]
            answer = placement.put(f"{path}/inventories/VCPU", {"resource_provider_generation": generation,
                                                               "total": total}, version="1.28")
            if answer.status == 200:
                written.append(total)

    threads = [threading.Thread(target=rename), threading.Thread(target=write)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert written
    assert _fleet_version(services, tenant) == before + len(written)
    assert _pool_provider(http, services).linked_version == fleet_version_key(tenant)
