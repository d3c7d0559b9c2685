"""Fleet over HTTP on the integration store: plan, apply (one transaction), drift, the reconciler's events."""

from __future__ import annotations

import json
import threading

from chalicelib.fleet.store import FleetStore
from chalicelib.placement.store import PlacementStore
from chalicelib.store.ops import transact
from tests.integration.placement.helpers import placement_client
from tests.support.faults import failing
from tests.support.fleet import FLEET_GRANT, MODULES, document
from tests.support.fleet import apply as _apply
from tests.support.fleet import change_inventory_through_placement as _change_inventory_through_placement
from tests.support.fleet import events as _events
from tests.support.fleet import plan as _plan
from tests.support.fleet import reconcile as _reconcile


def _table_items(services):
    return services.client.scan(TableName=services.table)["Items"]  # test inspection only


def test_plan_orders_calls_and_apply_then_plan_and_export_are_no_ops(fleet, services):
    doc = document()
    planned = _plan(fleet, doc)
    assert [c["method"] for c in planned["calls"]] == [
        "compute.providerAccounts.create", "compute.pools.create", "compute.ownerQuotas.set",
        "compute.offers.create", "compute.flavors.create"]
    assert planned["summary"] == {"create": 5, "update": 0, "delete": 0, "archive": 0, "unchanged": 0, "blocked": 0}
    pool_call = planned["calls"][1]["input"]
    assert pool_call["account"] == planned["changes"][0]["id"]  # inputs carry ids, not names
    status, applied = _apply(fleet, doc, plan_hash=planned["planHash"])
    assert status == 200, applied
    assert applied["applied"] == 5 and applied["plan"]["planHash"] == planned["planHash"]
    again = _plan(fleet, doc)
    assert again["calls"] == [] and again["changes"] == []
    status, exported = fleet.rpc("fleet.export", {}, fleet.token)
    assert status == 200 and exported["missing"] == []
    assert _plan(fleet, exported["document"])["calls"] == []
    pool_id = planned["changes"][1]["id"]
    provider = PlacementStore(services.client, services.table).provider(pool_id)
    assert provider is not None and provider.name == "acme/gpu"
    assert {rc: (i.total, i.reserved) for rc, i in provider.inventories.items()} == {
        "VCPU": (64, 0), "MEMORY_MB": (4096, 0)}
    status, current = fleet.rpc("fleet.status", {}, fleet.token)
    assert current["applied"]["planHash"] == planned["planHash"]
    assert current["applied"]["appliedBy"] == "acme/alice" and "drift" not in current
    # Repeating the apply creates nothing twice.
    status, repeated = _apply(fleet, doc)
    assert status == 200 and repeated["applied"] == 0


def test_a_store_fault_on_the_transaction_leaves_nothing(fleet, services):
    with failing(services.client, "TransactWriteItems"):
        status, body = _apply(fleet, document())
    assert status == 503 and body["error"]["code"] == "UNAVAILABLE"
    status, exported = fleet.rpc("fleet.export", {}, fleet.token)
    assert all(exported["document"][k] == [] for k in MODULES if k != "sites")
    assert not [i for i in _table_items(services) if i["pk"]["S"].startswith(("PLRP", "FLEET#"))]
    assert fleet.rpc("fleet.status", {}, fleet.token)[1] == {}


def test_a_write_between_plan_and_transaction_is_config_drift_with_nothing_applied(fleet, services):
    assert _apply(fleet, document())[0] == 200
    changed = document(capacity=128)
    plan_hash = _plan(fleet, changed)["planHash"]
    status, pools = fleet.rpc("pools.list", {}, fleet.token)
    pool_id = pools["items"][0]["id"]
    sneaked = []

    def sneak(request, **_):
        if not sneaked:
            sneaked.append(1)
            status, body = fleet.rpc("pools.update", {"id": pool_id, "owner": "team-c"}, fleet.token)
            assert status == 200, body

    services.client.meta.events.register("before-send.dynamodb.TransactWriteItems", sneak)
    try:
        status, body = _apply(fleet, changed, plan_hash=plan_hash)
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", sneak)
    assert status == 409 and body["error"]["code"] == "CONFIG_DRIFT", body
    status, pools = fleet.rpc("pools.list", {}, fleet.token)
    assert pools["items"][0]["capacity"]["VCPU"] == 64 and pools["items"][0]["owner"] == "team-c"


def test_two_applies_at_once_one_wins_one_is_config_drift(fleet):
    first, second = document(capacity=10), document(capacity=20)
    hashes = [_plan(fleet, d)["planHash"] for d in (first, second)]
    barrier = threading.Barrier(2)
    results = [None, None]

    def run(i, doc):
        barrier.wait()
        results[i] = _apply(fleet, doc, plan_hash=hashes[i])

    threads = [threading.Thread(target=run, args=(i, d)) for i, d in enumerate((first, second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(r[0] for r in results)
    assert statuses == [200, 409], results
    loser = next(r for r in results if r[0] == 409)
    assert loser[1]["error"]["code"] == "CONFIG_DRIFT"


def test_a_stale_plan_hash_is_config_drift_with_expected_and_actual(fleet):
    status, body = _apply(fleet, document(), plan_hash="0" * 64)
    assert status == 409 and body["error"]["code"] == "CONFIG_DRIFT"
    assert body["error"]["details"]["expected"] == "0" * 64 and body["error"]["details"]["actual"]


def test_permission_denied_names_the_first_method_the_caller_may_not_call_and_changes_nothing(fleet, services):
    token = fleet.issue("acme", "bob", [FLEET_GRANT, "compute:providerAccounts:admin@compute-providerAccounts"])
    assert fleet.rpc("fleet.plan", {"document": document()}, token)[0] == 200
    status, body = _apply(fleet, document(), token=token)
    assert status == 403 and body["error"]["code"] == "PERMISSION_DENIED"
    assert body["error"]["details"] == {"method": "compute.pools.create",
                                        "permission": "compute:pools:admin@compute-pools"}
    assert not [i for i in _table_items(services) if i["pk"]["S"].startswith(("PLRP", "FLEET#"))]


def test_a_document_whose_writes_exceed_one_transaction_is_unsupported(fleet, services):
    status, body = _apply(fleet, document(flavors=120))
    assert status == 501 and body["error"]["code"] == "UNSUPPORTED"
    # 1 account, pool + provider + name claim + its 2 classes' index items, quota, offer, 120 flavors, version,
    # status, 1 document chunk
    assert body["error"]["details"] == {"items": 131, "limit": 100}
    assert not [i for i in _table_items(services) if i["pk"]["S"].startswith(("PLRP", "FLEET#"))]


def test_blocked_changes_are_invalid_state_and_appear_in_the_plan(fleet):
    assert _apply(fleet, document())[0] == 200
    doc = document()
    doc["pools"][0]["class"] = "other"
    doc["offers"][0]["to"] = "team-a"
    planned = _plan(fleet, doc)
    assert planned["blocked"] == [
        {"kind": "pools", "name": "gpu", "reason": "immutable_field", "field": "class"},
        {"kind": "offers", "name": "to-b", "reason": "offer_to_owner", "field": "to"}]
    assert planned["summary"]["blocked"] == 2
    status, body = _apply(fleet, doc)
    assert status == 422 and body["error"]["details"]["blocked"] == planned["blocked"]


def test_document_errors_point_into_the_body(fleet):
    doc = document()
    doc["pools"][0]["colour"] = "red"
    status, body = fleet.rpc("fleet.plan", {"document": doc}, fleet.token)
    assert status == 400 and body["error"]["details"]["field"] == "/document/pools/0/colour"
    doc = document()
    doc["pools"][0]["capacity"]["VCPU"] = "64"
    status, body = fleet.rpc("fleet.apply", {"document": doc}, fleet.token)
    assert status == 400 and body["error"]["details"]["field"] == "/document/pools/0/capacity/VCPU"
    doc = document()
    doc["flavors"].append(dict(doc["flavors"][0]))
    status, body = fleet.rpc("fleet.plan", {"document": doc}, fleet.token)
    assert status == 400 and body["error"]["details"]["field"] == "/document/flavors/1/name"
    doc = document()
    doc["pools"][0]["capacity"]["CUSTOM_NOPE"] = 1
    status, body = fleet.rpc("fleet.plan", {"document": doc}, fleet.token)
    assert status == 400 and body["error"]["details"]["field"] == "/document/pools/0/capacity/CUSTOM_NOPE"


def test_methods_list_marks_only_apply_composite(fleet):
    status, body = fleet.call("POST", "/api/compute/methods/list", {}, fleet.token)
    composite = [m["name"] for m in body["items"] if m["composite"]]
    assert status == 200 and composite == ["compute.fleet.apply"]
    names = {m["name"] for m in body["items"]}
    assert {"compute.pools.archive", "compute.ownerQuotas.set", "compute.fleet.status"} <= names


def test_module_methods_answer_objects_and_refuse_what_the_rules_refuse(fleet, services):
    t = fleet.token
    status, account = fleet.rpc("providerAccounts.create", {"site": "k8s", "provider": "aws"}, t)
    assert status == 200 and set(account) == {"id", "site", "provider", "description"}
    status, pool = fleet.rpc("pools.create", {"name": "p", "site": "k8s", "account": account["id"], "class": "c",
                                             "owner": "o", "availabilityZone": "z", "capacity": {"VCPU": 4}}, t)
    assert status == 200 and pool["archived"] is False
    status, body = fleet.rpc("pools.create", {"name": "p", "site": "k8s", "account": account["id"], "class": "c",
                                             "owner": "o", "availabilityZone": "z", "capacity": {"VCPU": 4}}, t)
    assert status == 409 and body["error"]["code"] == "ALREADY_EXISTS"
    status, body = fleet.rpc("pools.update", {"id": pool["id"], "class": "d"}, t)
    assert status == 400 and body["error"]["details"]["field"] == "/class"
    status, body = fleet.rpc("offers.create", {"pool": pool["id"], "to": "o", "limits": {}}, t)
    assert status == 422 and body["error"]["code"] == "INVALID_STATE"
    status, body = fleet.rpc("providerAccounts.delete", {"id": account["id"]}, t)
    assert status == 422
    assert fleet.rpc("pools.archive", {"id": pool["id"]}, t) == (200, {})
    provider = PlacementStore(services.client, services.table).provider(pool["id"])
    assert (provider.inventories["VCPU"].total, provider.inventories["VCPU"].reserved) == (4, 4)
    assert fleet.rpc("providerAccounts.delete", {"id": account["id"]}, t) == (200, {})


def test_archive_reserves_the_whole_provider(fleet, services):
    assert _apply(fleet, document())[0] == 200
    status, body = _apply(fleet, {"sites": [], "providerAccounts": [], "pools": [], "ownerQuotas": [], "offers": [],
                                 "flavors": []}, prune=True)
    assert status == 200, body
    assert [c["method"] for c in body["plan"]["calls"]] == [
        "compute.flavors.delete", "compute.offers.delete", "compute.ownerQuotas.delete", "compute.pools.archive",
        "compute.providerAccounts.delete"]
    pool_id = next(c["id"] for c in body["plan"]["changes"] if c["kind"] == "pools")
    provider = PlacementStore(services.client, services.table).provider(pool_id)
    assert {rc: (i.total, i.reserved) for rc, i in provider.inventories.items()} == {
        "VCPU": (64, 64), "MEMORY_MB": (4096, 4096)}
    status, exported = fleet.rpc("fleet.export", {}, fleet.token)
    assert exported["document"]["pools"] == []








def test_reconciler_publishes_each_change_of_answer_once(fleet, services, bus):
    assert _apply(fleet, document())[0] == 200
    assert _reconcile(fleet) == {"checked": 1, "drifted": 0, "converged": 1, "published": 0}
    pool_id = fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["id"]
    _change_inventory_through_placement(services, pool_id, 99)
    assert _reconcile(fleet) == {"checked": 1, "drifted": 1, "converged": 0, "published": 1}
    assert _reconcile(fleet) == {"checked": 1, "drifted": 1, "converged": 0, "published": 0}
    _status, current = fleet.rpc("fleet.status", {}, fleet.token)
    assert current["drift"]["summary"]["update"] == 1
    assert [c["fields"] for c in current["drift"]["changes"]] == [["capacity"]]
    # Apply puts it back, records converged and publishes fleet.converged through the outbox.
    assert _apply(fleet, document())[0] == 200
    assert "drift" not in fleet.rpc("fleet.status", {}, fleet.token)[1]
    assert _reconcile(fleet)["published"] == 1
    events = _events(fleet)
    assert [e["type"] for e in events] == ["fleet.drifted", "fleet.converged"]
    assert [e["DetailType"] for e in bus.entries] == ["fleet.drifted", "fleet.converged"]
    assert all(e["Source"] == "resource-provisioning.fleet" for e in bus.entries)
    assert json.loads(bus.entries[0]["Detail"])["tenant"] == "acme"


def test_a_publisher_crash_after_the_status_write_neither_loses_nor_duplicates(fleet, services, bus):
    assert _apply(fleet, document())[0] == 200
    _status, body = fleet.rpc("pools.list", {}, fleet.token)
    fleet.rpc("pools.update", {"id": body["items"][0]["id"], "owner": "team-z"}, fleet.token)
    bus.refuse = 10  # EventBridge down: the status is written with its outbox item, nothing is published
    assert _reconcile(fleet) == {"checked": 1, "drifted": 1, "converged": 0, "published": 0}
    assert bus.entries == [] and _events(fleet) == []
    store = FleetStore(services.client, services.table)
    # The claim is held for its lease; expire it as time would.
    for _time, tenant, event_id in store.pending_outbox():
        services.client.update_item(TableName=services.table, Key={"pk": {"S": f"FLEET#{tenant}"},
                                    "sk": {"S": f"OUTBOX#{event_id}"}}, UpdateExpression="SET claimUntil = :z",
                                    ExpressionAttributeValues={":z": {"N": "0"}})
    bus.refuse = 0
    assert _reconcile(fleet)["published"] == 1
    assert _reconcile(fleet)["published"] == 0
    assert [e["type"] for e in _events(fleet)] == ["fleet.drifted"] and len(bus.entries) == 1


def test_two_reconcilers_at_once_publish_once(fleet, services, bus):
    assert _apply(fleet, document())[0] == 200
    pool_id = fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["id"]
    _change_inventory_through_placement(services, pool_id, 7)
    barrier = threading.Barrier(2)
    results = []

    def run():
        from chalicelib.fleet.eventbridge import eventbridge_publisher
        from chalicelib.fleet.reconciler import reconcile

        barrier.wait()
        results.append(reconcile(FleetStore(services.client, services.table), eventbridge_publisher(bus.client())))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r["published"] for r in results) == 1
    assert len(_events(fleet)) == 1 and len(bus.entries) == 1


def test_operator_routes_refuse_tenant_tokens_and_need_a_tenant(fleet):
    status, body = fleet.call("POST", "/api/fleet/reconcile", {}, fleet.token)
    assert status == 401 and body["error"]["code"] == "UNAUTHENTICATED"
    status, body = fleet.operator("GET", "/api/fleet/events")
    assert status == 400 and body["error"]["details"]["field"] == "/tenant"
    status, body = fleet.operator("GET", "/api/fleet/events?tenant=Not_A_Name")
    assert status == 400 and body["error"]["details"]["field"] == "/tenant"
    status, body = fleet.operator("POST", "/api/fleet/reconcile", {"now": True})
    assert status == 400 and body["error"]["details"]["field"] == "/now"


def test_a_placement_inventory_write_carrying_the_bump_item_is_config_drift_for_a_pending_apply(fleet, services):
    from chalicelib.placement import items
    from chalicelib.placement.models import Inventory

    assert _apply(fleet, document())[0] == 200
    changed = document()
    changed["flavors"][0]["description"] = "bigger"  # the apply itself does not touch the pool's provider
    plan_hash = _plan(fleet, changed)["planHash"]
    pool_id = fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["id"]
    placement = PlacementStore(services.client, services.table)
    sneaked = []

    def sneak(request, **_):
        if not sneaked:
            sneaked.append(1)
            read = placement.provider(pool_id)
            _written, ops = items.write_inventories(services.table, read, {"VCPU": Inventory(total=3)})
            assert [o.name for o in ops if o.name == items.LINKED_VERSION] == [items.LINKED_VERSION]
            transact(services.client, ops)

    services.client.meta.events.register("before-send.dynamodb.TransactWriteItems", sneak)
    try:
        status, body = _apply(fleet, changed, plan_hash=plan_hash)
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", sneak)
    assert status == 409 and body["error"]["code"] == "CONFIG_DRIFT", body
    assert fleet.rpc("flavors.list", {}, fleet.token)[1]["items"][0]["description"] == ""


def test_a_pool_whose_provider_name_another_provider_holds_is_already_exists(fleet, services):
    from chalicelib.placement.models import Provider

    PlacementStore(services.client, services.table).create_provider(
        Provider(uuid="11111111-2222-3333-4444-555555555555", name="acme/gpu"))
    status, body = _apply(fleet, document())
    assert status == 409 and body["error"]["code"] == "ALREADY_EXISTS", body
    assert fleet.rpc("providerAccounts.list", {}, fleet.token)[1]["items"] == []


def test_make_run_timer_reconciles_and_publishes(fleet, services):
    from chalicelib.fleet.reconciler import reconcile
    from devkit.timer import run_every

    assert _apply(fleet, document())[0] == 200
    pool_id = fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["id"]
    _change_inventory_through_placement(services, pool_id, 5)
    published, stop = [], threading.Event()

    def publish(event):
        published.append(event)
        stop.set()

    store = FleetStore(services.client, services.table)
    thread = threading.Thread(target=run_every, args=("fleet-drift", 0.01, stop, lambda: reconcile(store, publish)))
    thread.start()
    assert stop.wait(60)
    thread.join()
    assert [e["type"] for e in published] == ["fleet.drifted"]


def test_a_reconciler_recording_between_plan_and_transaction_does_not_fail_the_apply(fleet, services, bus):
    from chalicelib.fleet.eventbridge import eventbridge_publisher
    from chalicelib.fleet.reconciler import reconcile

    assert _apply(fleet, document())[0] == 200
    pool_id = fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["id"]
    _change_inventory_through_placement(services, pool_id, 5)
    plan_hash = _plan(fleet, document())["planHash"]
    sneaked = []

    def sneak(request, **_):
        if not sneaked:
            sneaked.append(None)  # first: the pass's own transactions come through this hook too
            sneaked[0] = reconcile(FleetStore(services.client, services.table), eventbridge_publisher(bus.client()))

    services.client.meta.events.register("before-send.dynamodb.TransactWriteItems", sneak)
    try:
        status, body = _apply(fleet, document(), plan_hash=plan_hash)
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", sneak)
    assert status == 200, body
    assert sneaked[0]["drifted"] == 1 and sneaked[0]["published"] == 1
    # Apply read the status again: the tenant was now drifted, so fleet.converged went to the outbox.
    assert _reconcile(fleet)["published"] == 1
    assert [e["type"] for e in _events(fleet)] == ["fleet.drifted", "fleet.converged"]


def test_an_archived_pool_keeps_its_allocations_and_refuses_new_ones_through_placement(fleet, services):
    from tests.integration.placement.helpers import claim, new_uuid

    placement = placement_client(services)
    assert _apply(fleet, document())[0] == 200
    pool_id = fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["id"]
    consumer = new_uuid()
    assert claim(placement, consumer, {pool_id: {"VCPU": 4}}).status == 204
    status, body = fleet.rpc("pools.update", {"id": pool_id, "capacity": {"MEMORY_MB": 4096}}, fleet.token)
    assert status == 422 and body["error"]["details"]["field"] == "/capacity/VCPU"
    assert fleet.rpc("pools.archive", {"id": pool_id}, fleet.token) == (200, {})
    held = placement.get(f"/placement/allocations/{consumer}", version="1.28").body["allocations"]
    assert held[pool_id]["resources"] == {"VCPU": 4}
    assert claim(placement, new_uuid(), {pool_id: {"VCPU": 1}}).status == 409
    assert placement.delete(f"/placement/resource_providers/{pool_id}", version="1.28").status == 409


def test_concurrent_module_writes_of_one_tenant_all_land_and_one_name_is_created_once(fleet):
    account = fleet.rpc("providerAccounts.create", {"name": "acc", "site": "k8s", "provider": "aws"}, fleet.token)[1]
    pool = fleet.rpc("pools.create", {"name": "p", "site": "k8s", "account": account["id"], "class": "c",
                                     "owner": "o", "availabilityZone": "z", "capacity": {"VCPU": 4}}, fleet.token)[1]
    names = [f"f{i}" for i in range(6)] + ["same", "same"]
    barrier = threading.Barrier(len(names))
    results = []

    def create(name):
        barrier.wait()
        results.append(fleet.rpc("flavors.create", {"name": name, "pool": pool["id"], "resources": {"VCPU": 1}},
                                fleet.token))

    threads = [threading.Thread(target=create, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] * 7 + [409], results
    assert next(b for s, b in results if s == 409)["error"]["code"] == "ALREADY_EXISTS"
    listed = fleet.rpc("flavors.list", {}, fleet.token)[1]["items"]
    assert sorted(f["name"] for f in listed) == sorted(set(names))


def test_a_large_applied_document_is_stored_in_chunks_and_a_shorter_one_drops_the_rest(fleet, services):
    import random as _random

    from chalicelib.fleet.keys import fleet_pk
    from chalicelib.fleet.store import CHUNK_BYTES, DOC

    rng = _random.Random(9)
    big = document(flavors=0)
    # Incompressible descriptions: the compressed document needs more than one 350 KB item.
    big["flavors"] = [{"name": f"f-{i:03d}", "pool": "gpu", "resources": {"VCPU": 1},
                       "description": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(1024))}
                      for i in range(700)]
    for start in range(0, 700, 88):  # each apply without prune creates one batch (fits one transaction)
        part = {**big, "flavors": big["flavors"][start:start + 88]}
        status, body = _apply(fleet, part)
        assert status == 200, body
    status, body = _apply(fleet, big)
    assert status == 200 and body["applied"] == 0

    def chunks():
        items = services.client.query(
            TableName=services.table, KeyConditionExpression="pk = :pk AND begins_with(sk, :d)",
            ExpressionAttributeValues={":pk": {"S": fleet_pk("acme")}, ":d": {"S": DOC}})
        return [len(i["data"]["B"]) for i in items["Items"]]

    sizes = chunks()
    assert len(sizes) >= 2 and max(sizes) <= CHUNK_BYTES
    assert _reconcile(fleet) == {"checked": 1, "drifted": 0, "converged": 1, "published": 0}  # read back whole
    assert _apply(fleet, {**big, "flavors": big["flavors"][:1]})[0] == 200
    assert len(chunks()) == 1
    assert _reconcile(fleet)["converged"] == 1


def test_a_crash_between_the_status_write_and_publishing_loses_and_duplicates_nothing(fleet, services, bus):
    assert _apply(fleet, document())[0] == 200
    pool_id = fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["id"]
    _change_inventory_through_placement(services, pool_id, 3)
    # The pass dies right after its status + outbox transaction: the claim (first UpdateItem) never lands.
    with failing(services.client, "UpdateItem"):
        status, body = fleet.operator("POST", "/api/fleet/reconcile", {})
    assert status == 503 and body["error"]["code"] == "UNAVAILABLE"
    assert "drift" in fleet.rpc("fleet.status", {}, fleet.token)[1] and bus.entries == []
    assert _reconcile(fleet) == {"checked": 1, "drifted": 1, "converged": 0, "published": 1}
    assert _reconcile(fleet)["published"] == 0
    assert [e["type"] for e in _events(fleet)] == ["fleet.drifted"] and len(bus.entries) == 1


def test_a_write_in_between_that_leaves_the_plan_as_it_was_does_not_fail_the_apply(fleet):
    assert _apply(fleet, document())[0] == 200
    changed = document(capacity=32)
    plan_hash = _plan(fleet, changed)["planHash"]
    pool_id = fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["id"]
    sneaked = []

    def sneak(request, **_):
        if not sneaked:
            sneaked.append(1)  # a flavor the document does not list (no prune): the plan stays the same
            status, body = fleet.rpc("flavors.create", {"name": "extra", "pool": pool_id,
                                                       "resources": {"VCPU": 1}}, fleet.token)
            assert status == 200, body

    from chalicelib.runtime import services as current

    client = current().client
    client.meta.events.register("before-send.dynamodb.TransactWriteItems", sneak)
    try:
        status, body = _apply(fleet, changed, plan_hash=plan_hash)
    finally:
        client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", sneak)
    assert status == 200 and body["plan"]["planHash"] == plan_hash, body
    assert fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["capacity"]["VCPU"] == 32
    assert {f["name"] for f in fleet.rpc("flavors.list", {}, fleet.token)[1]["items"]} == {"small-0", "extra"}


def test_a_custom_class_in_a_pools_capacity_is_held_in_placement(fleet, services):
    placement = placement_client(services)
    doc = document()
    doc["pools"][0]["capacity"]["CUSTOM_GPU"] = 8
    status, body = fleet.rpc("fleet.plan", {"document": doc}, fleet.token)
    assert status == 400 and body["error"]["details"]["field"] == "/document/pools/0/capacity/CUSTOM_GPU"
    assert placement.put("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 201
    assert _apply(fleet, doc)[0] == 200
    assert placement.delete("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 409
    doc["pools"][0]["capacity"].pop("CUSTOM_GPU")
    assert _apply(fleet, doc)[0] == 200
    assert placement.delete("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 204


def _fleet_version(services, tenant="acme"):
    from chalicelib.fleet.keys import VERSION_SK, fleet_pk
    from chalicelib.store.keys import key
    from chalicelib.store.ops import get_item

    item = get_item(services.client, services.table, key(fleet_pk(tenant), VERSION_SK))
    return int(item["version"]) if item else 0


def test_a_placement_inventory_write_on_a_pools_provider_moves_the_fleet_version(fleet, services):
    status, body = _apply(fleet, document())
    assert status == 200, body
    pool_id = next(c["id"] for c in body["plan"]["changes"] if c["kind"] == "pools")
    before = _fleet_version(services)
    _change_inventory_through_placement(services, pool_id, 99)
    assert _fleet_version(services) == before + 1  # in the same transaction as the inventory write
    # A provider that is no pool's (no tenant prefix) moves nothing.
    placement = placement_client(services)
    created = placement.post("/placement/resource_providers", {"name": "plain"}, version="1.28")
    assert created.status == 200
    assert placement.put(f"/placement/resource_providers/{created.body['uuid']}/inventories",
                         {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 4}}},
                         version="1.28").status == 200
    assert _fleet_version(services) == before + 1
