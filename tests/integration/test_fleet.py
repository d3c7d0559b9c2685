"""Fleet over HTTP on the integration store: plan, apply (one transaction), drift, the reconciler's events."""

from __future__ import annotations

import json
import threading

import pytest

from chalicelib.fleet.store import FleetStore
from chalicelib.placement.store import PlacementStore
from chalicelib.store.ops import transact
from tests.integration.placement.helpers import placement_client, set_inventory_total
from tests.support.eventbridge import RecordingEventBridge
from tests.support.faults import failing

MODULES = ("providerAccounts", "pools", "ownerQuotas", "offers", "flavors", "sites")
ALL_GRANTS = [f"compute:{m}:admin@compute-{m}" for m in (*MODULES, "fleet")]
FLEET_GRANT = "compute:fleet:admin@compute-fleet"


def document(capacity: int = 64, flavors: int = 1) -> dict:
    return {
        "sites": [{"name": "k8s"}],
        "providerAccounts": [{"name": "main", "site": "k8s", "provider": "aws", "description": "the account"}],
        "pools": [{"name": "gpu", "site": "k8s", "account": "main", "class": "general", "owner": "team-a",
                   "availabilityZone": "az1", "capacity": {"VCPU": capacity, "MEMORY_MB": 4096}}],
        "ownerQuotas": [{"owner": "team-b", "pool": "gpu", "limits": {"VCPU": 8}}],
        "offers": [{"name": "to-b", "pool": "gpu", "to": "team-b", "limits": {"VCPU": 4}}],
        "flavors": [{"name": f"small-{i}", "pool": "gpu", "resources": {"VCPU": 2}, "description": ""}
                    for i in range(flavors)],
    }


@pytest.fixture
def bus(monkeypatch):
    with RecordingEventBridge() as fake:
        monkeypatch.setenv("RP_FLEET_EVENTS_ENDPOINT", fake.endpoint)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
        yield fake


@pytest.fixture
def http(services, keys, bus):
    from chalice.test import Client

    from app import app

    class Http:
        def __init__(self, client):
            self._client = client
            self.keys = keys

        def call(self, method, path, body=None, token=None):
            headers = {"content-type": "application/json"}
            if token is not None:
                headers["authorization"] = f"Bearer {token}"
            payload = json.dumps(body).encode() if body is not None else b""
            response = self._client.http.request(method, path, headers=headers, body=payload)
            return response.status_code, (json.loads(response.body) if response.body else None)

        def rpc(self, method, body, token):
            return self.call("POST", f"/api/compute/{method.replace('.', '/')}", body, token)

        def operator(self, method, path, body=None):
            return self.call(method, path, body, self.keys["service"])

        def issue(self, tenant, principal, grants):
            status, body = self.operator("POST", f"/api/tenants/{tenant}/principals",
                                         {"principal": principal, "grants": grants})
            assert status == 201, body
            return body["token"]

    with Client(app) as client:
        h = Http(client)
        assert h.operator("POST", "/api/tenants/acme/sites", {"name": "k8s", "kind": "kubernetes"})[0] == 201
        h.token = h.issue("acme", "alice", ALL_GRANTS)
        yield h


def _plan(http, doc, prune=False):
    status, body = http.rpc("fleet.plan", {"document": doc, "prune": prune}, http.token)
    assert status == 200, body
    return body


def _apply(http, doc, prune=False, plan_hash=None, token=None):
    body = {"document": doc, "prune": prune}
    if plan_hash is not None:
        body["planHash"] = plan_hash
    return http.rpc("fleet.apply", body, token or http.token)


def _table_items(services):
    return services.client.scan(TableName=services.table)["Items"]  # test inspection only


def test_plan_orders_calls_and_apply_then_plan_and_export_are_no_ops(http, services):
    doc = document()
    planned = _plan(http, doc)
    assert [c["method"] for c in planned["calls"]] == [
        "compute.providerAccounts.create", "compute.pools.create", "compute.ownerQuotas.set",
        "compute.offers.create", "compute.flavors.create"]
    assert planned["summary"] == {"create": 5, "update": 0, "delete": 0, "archive": 0, "unchanged": 0, "blocked": 0}
    pool_call = planned["calls"][1]["input"]
    assert pool_call["account"] == planned["changes"][0]["id"]  # inputs carry ids, not names
    status, applied = _apply(http, doc, plan_hash=planned["planHash"])
    assert status == 200, applied
    assert applied["applied"] == 5 and applied["plan"]["planHash"] == planned["planHash"]
    again = _plan(http, doc)
    assert again["calls"] == [] and again["changes"] == []
    status, exported = http.rpc("fleet.export", {}, http.token)
    assert status == 200 and exported["missing"] == []
    assert _plan(http, exported["document"])["calls"] == []
    pool_id = planned["changes"][1]["id"]
    provider = PlacementStore(services.client, services.table).provider(pool_id)
    assert provider is not None and provider.name == "acme/gpu"
    assert {rc: (i.total, i.reserved) for rc, i in provider.inventories.items()} == {
        "VCPU": (64, 0), "MEMORY_MB": (4096, 0)}
    status, current = http.rpc("fleet.status", {}, http.token)
    assert current["applied"]["planHash"] == planned["planHash"]
    assert current["applied"]["appliedBy"] == "acme/alice" and "drift" not in current
    # Repeating the apply creates nothing twice.
    status, repeated = _apply(http, doc)
    assert status == 200 and repeated["applied"] == 0


def test_a_store_fault_on_the_transaction_leaves_nothing(http, services):
    with failing(services.client, "TransactWriteItems"):
        status, body = _apply(http, document())
    assert status == 503 and body["error"]["code"] == "UNAVAILABLE"
    status, exported = http.rpc("fleet.export", {}, http.token)
    assert all(exported["document"][k] == [] for k in MODULES if k != "sites")
    assert not [i for i in _table_items(services) if i["pk"]["S"].startswith(("PLRP", "FLEET#"))]
    assert http.rpc("fleet.status", {}, http.token)[1] == {}


def test_a_write_between_plan_and_transaction_is_config_drift_with_nothing_applied(http, services):
    assert _apply(http, document())[0] == 200
    changed = document(capacity=128)
    plan_hash = _plan(http, changed)["planHash"]
    status, pools = http.rpc("pools.list", {}, http.token)
    pool_id = pools["items"][0]["id"]
    sneaked = []

    def sneak(request, **_):
        if not sneaked:
            sneaked.append(1)
            status, body = http.rpc("pools.update", {"id": pool_id, "owner": "team-c"}, http.token)
            assert status == 200, body

    services.client.meta.events.register("before-send.dynamodb.TransactWriteItems", sneak)
    try:
        status, body = _apply(http, changed, plan_hash=plan_hash)
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", sneak)
    assert status == 409 and body["error"]["code"] == "CONFIG_DRIFT", body
    status, pools = http.rpc("pools.list", {}, http.token)
    assert pools["items"][0]["capacity"]["VCPU"] == 64 and pools["items"][0]["owner"] == "team-c"


def test_two_applies_at_once_one_wins_one_is_config_drift(http):
    first, second = document(capacity=10), document(capacity=20)
    hashes = [_plan(http, d)["planHash"] for d in (first, second)]
    barrier = threading.Barrier(2)
    results = [None, None]

    def run(i, doc):
        barrier.wait()
        results[i] = _apply(http, doc, plan_hash=hashes[i])

    threads = [threading.Thread(target=run, args=(i, d)) for i, d in enumerate((first, second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(r[0] for r in results)
    assert statuses == [200, 409], results
    loser = next(r for r in results if r[0] == 409)
    assert loser[1]["error"]["code"] == "CONFIG_DRIFT"


def test_a_stale_plan_hash_is_config_drift_with_expected_and_actual(http):
    status, body = _apply(http, document(), plan_hash="0" * 64)
    assert status == 409 and body["error"]["code"] == "CONFIG_DRIFT"
    assert body["error"]["details"]["expected"] == "0" * 64 and body["error"]["details"]["actual"]


def test_permission_denied_names_the_first_method_the_caller_may_not_call_and_changes_nothing(http, services):
    token = http.issue("acme", "bob", [FLEET_GRANT, "compute:providerAccounts:admin@compute-providerAccounts"])
    assert http.rpc("fleet.plan", {"document": document()}, token)[0] == 200
    status, body = _apply(http, document(), token=token)
    assert status == 403 and body["error"]["code"] == "PERMISSION_DENIED"
    assert body["error"]["details"] == {"method": "compute.pools.create",
                                        "permission": "compute:pools:admin@compute-pools"}
    assert not [i for i in _table_items(services) if i["pk"]["S"].startswith(("PLRP", "FLEET#"))]


def test_a_document_whose_writes_exceed_one_transaction_is_unsupported(http, services):
    status, body = _apply(http, document(flavors=120))
    assert status == 501 and body["error"]["code"] == "UNSUPPORTED"
    # 1 account, pool + provider + name claim, quota, offer, 120 flavors, version, status, 1 document chunk
    assert body["error"]["details"] == {"items": 129, "limit": 100}
    assert not [i for i in _table_items(services) if i["pk"]["S"].startswith(("PLRP", "FLEET#"))]


def test_blocked_changes_are_invalid_state_and_appear_in_the_plan(http):
    assert _apply(http, document())[0] == 200
    doc = document()
    doc["pools"][0]["class"] = "other"
    doc["offers"][0]["to"] = "team-a"
    planned = _plan(http, doc)
    assert planned["blocked"] == [
        {"kind": "pools", "name": "gpu", "reason": "immutable_field", "field": "class"},
        {"kind": "offers", "name": "to-b", "reason": "offer_to_owner", "field": "to"}]
    assert planned["summary"]["blocked"] == 2
    status, body = _apply(http, doc)
    assert status == 422 and body["error"]["details"]["blocked"] == planned["blocked"]


def test_document_errors_point_into_the_body(http):
    doc = document()
    doc["pools"][0]["colour"] = "red"
    status, body = http.rpc("fleet.plan", {"document": doc}, http.token)
    assert status == 400 and body["error"]["details"]["field"] == "/document/pools/0/colour"
    doc = document()
    doc["pools"][0]["capacity"]["VCPU"] = "64"
    status, body = http.rpc("fleet.apply", {"document": doc}, http.token)
    assert status == 400 and body["error"]["details"]["field"] == "/document/pools/0/capacity/VCPU"
    doc = document()
    doc["flavors"].append(dict(doc["flavors"][0]))
    status, body = http.rpc("fleet.plan", {"document": doc}, http.token)
    assert status == 400 and body["error"]["details"]["field"] == "/document/flavors/1/name"
    doc = document()
    doc["pools"][0]["capacity"]["CUSTOM_NOPE"] = 1
    status, body = http.rpc("fleet.plan", {"document": doc}, http.token)
    assert status == 400 and body["error"]["details"]["field"] == "/document/pools/0/capacity/CUSTOM_NOPE"


def test_methods_list_marks_only_apply_composite(http):
    status, body = http.call("POST", "/api/compute/methods/list", {}, http.token)
    composite = [m["name"] for m in body["items"] if m["composite"]]
    assert status == 200 and composite == ["compute.fleet.apply"]
    names = {m["name"] for m in body["items"]}
    assert {"compute.pools.archive", "compute.ownerQuotas.set", "compute.fleet.status"} <= names


def test_module_methods_answer_objects_and_refuse_what_the_rules_refuse(http, services):
    t = http.token
    status, account = http.rpc("providerAccounts.create", {"site": "k8s", "provider": "aws"}, t)
    assert status == 200 and set(account) == {"id", "site", "provider", "description"}
    status, pool = http.rpc("pools.create", {"name": "p", "site": "k8s", "account": account["id"], "class": "c",
                                             "owner": "o", "availabilityZone": "z", "capacity": {"VCPU": 4}}, t)
    assert status == 200 and pool["archived"] is False
    status, body = http.rpc("pools.create", {"name": "p", "site": "k8s", "account": account["id"], "class": "c",
                                             "owner": "o", "availabilityZone": "z", "capacity": {"VCPU": 4}}, t)
    assert status == 409 and body["error"]["code"] == "ALREADY_EXISTS"
    status, body = http.rpc("pools.update", {"id": pool["id"], "class": "d"}, t)
    assert status == 400 and body["error"]["details"]["field"] == "/class"
    status, body = http.rpc("offers.create", {"pool": pool["id"], "to": "o", "limits": {}}, t)
    assert status == 422 and body["error"]["code"] == "INVALID_STATE"
    status, body = http.rpc("providerAccounts.delete", {"id": account["id"]}, t)
    assert status == 422
    assert http.rpc("pools.archive", {"id": pool["id"]}, t) == (200, {})
    provider = PlacementStore(services.client, services.table).provider(pool["id"])
    assert (provider.inventories["VCPU"].total, provider.inventories["VCPU"].reserved) == (4, 4)
    assert http.rpc("providerAccounts.delete", {"id": account["id"]}, t) == (200, {})


def test_archive_reserves_the_whole_provider(http, services):
    assert _apply(http, document())[0] == 200
    status, body = _apply(http, {"sites": [], "providerAccounts": [], "pools": [], "ownerQuotas": [], "offers": [],
                                 "flavors": []}, prune=True)
    assert status == 200, body
    assert [c["method"] for c in body["plan"]["calls"]] == [
        "compute.flavors.delete", "compute.offers.delete", "compute.ownerQuotas.delete", "compute.pools.archive",
        "compute.providerAccounts.delete"]
    pool_id = next(c["id"] for c in body["plan"]["changes"] if c["kind"] == "pools")
    provider = PlacementStore(services.client, services.table).provider(pool_id)
    assert {rc: (i.total, i.reserved) for rc, i in provider.inventories.items()} == {
        "VCPU": (64, 64), "MEMORY_MB": (4096, 4096)}
    status, exported = http.rpc("fleet.export", {}, http.token)
    assert exported["document"]["pools"] == []


def _reconcile(http):
    status, body = http.operator("POST", "/api/fleet/reconcile", {})
    assert status == 200, body
    return body


def _events(http):
    status, body = http.operator("GET", "/api/fleet/events?tenant=acme")
    assert status == 200, body
    return body["events"]


def _change_inventory_through_placement(services, pool_id, total):
    """`PUT /placement/resource_providers/{uuid}/inventories` with a Placement key, as an operator would."""
    answer = set_inventory_total(placement_client(services), pool_id, "VCPU", total)
    assert answer.status == 200, answer.body


def test_reconciler_publishes_each_change_of_answer_once(http, services, bus):
    assert _apply(http, document())[0] == 200
    assert _reconcile(http) == {"checked": 1, "drifted": 0, "converged": 1, "published": 0}
    pool_id = http.rpc("pools.list", {}, http.token)[1]["items"][0]["id"]
    _change_inventory_through_placement(services, pool_id, 99)
    assert _reconcile(http) == {"checked": 1, "drifted": 1, "converged": 0, "published": 1}
    assert _reconcile(http) == {"checked": 1, "drifted": 1, "converged": 0, "published": 0}
    _status, current = http.rpc("fleet.status", {}, http.token)
    assert current["drift"]["summary"]["update"] == 1
    assert [c["fields"] for c in current["drift"]["changes"]] == [["capacity"]]
    # Apply puts it back, records converged and publishes fleet.converged through the outbox.
    assert _apply(http, document())[0] == 200
    assert "drift" not in http.rpc("fleet.status", {}, http.token)[1]
    assert _reconcile(http)["published"] == 1
    events = _events(http)
    assert [e["type"] for e in events] == ["fleet.drifted", "fleet.converged"]
    assert [e["DetailType"] for e in bus.entries] == ["fleet.drifted", "fleet.converged"]
    assert all(e["Source"] == "resource-provisioning.fleet" for e in bus.entries)
    assert json.loads(bus.entries[0]["Detail"])["tenant"] == "acme"


def test_a_publisher_crash_after_the_status_write_neither_loses_nor_duplicates(http, services, bus):
    assert _apply(http, document())[0] == 200
    _status, body = http.rpc("pools.list", {}, http.token)
    http.rpc("pools.update", {"id": body["items"][0]["id"], "owner": "team-z"}, http.token)
    bus.refuse = 10  # EventBridge down: the status is written with its outbox item, nothing is published
    assert _reconcile(http) == {"checked": 1, "drifted": 1, "converged": 0, "published": 0}
    assert bus.entries == [] and _events(http) == []
    store = FleetStore(services.client, services.table)
    # The claim is held for its lease; expire it as time would.
    for tenant, event_id in store.pending_outbox():
        services.client.update_item(TableName=services.table, Key={"pk": {"S": f"FLEET#{tenant}"},
                                    "sk": {"S": f"OUTBOX#{event_id}"}}, UpdateExpression="SET claimUntil = :z",
                                    ExpressionAttributeValues={":z": {"N": "0"}})
    bus.refuse = 0
    assert _reconcile(http)["published"] == 1
    assert _reconcile(http)["published"] == 0
    assert [e["type"] for e in _events(http)] == ["fleet.drifted"] and len(bus.entries) == 1


def test_two_reconcilers_at_once_publish_once(http, services, bus):
    assert _apply(http, document())[0] == 200
    pool_id = http.rpc("pools.list", {}, http.token)[1]["items"][0]["id"]
    _change_inventory_through_placement(services, pool_id, 7)
    barrier = threading.Barrier(2)
    results = []

    def run():
        from chalicelib.fleet.reconciler import eventbridge_publisher, reconcile

        barrier.wait()
        results.append(reconcile(services, eventbridge_publisher(bus.client())))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r["published"] for r in results) == 1
    assert len(_events(http)) == 1 and len(bus.entries) == 1


def test_operator_routes_refuse_tenant_tokens_and_need_a_tenant(http):
    status, body = http.call("POST", "/api/fleet/reconcile", {}, http.token)
    assert status == 401 and body["error"]["code"] == "UNAUTHENTICATED"
    status, body = http.operator("GET", "/api/fleet/events")
    assert status == 400 and body["error"]["details"]["field"] == "/tenant"
    status, body = http.operator("GET", "/api/fleet/events?tenant=Not_A_Name")
    assert status == 400 and body["error"]["details"]["field"] == "/tenant"
    status, body = http.operator("POST", "/api/fleet/reconcile", {"now": True})
    assert status == 400 and body["error"]["details"]["field"] == "/now"


def test_a_placement_inventory_write_carrying_the_bump_item_is_config_drift_for_a_pending_apply(http, services):
    from chalicelib.placement import items
    from chalicelib.placement.models import Inventory

    assert _apply(http, document())[0] == 200
    changed = document()
    changed["flavors"][0]["description"] = "bigger"  # the apply itself does not touch the pool's provider
    plan_hash = _plan(http, changed)["planHash"]
    pool_id = http.rpc("pools.list", {}, http.token)[1]["items"][0]["id"]
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
        status, body = _apply(http, changed, plan_hash=plan_hash)
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", sneak)
    assert status == 409 and body["error"]["code"] == "CONFIG_DRIFT", body
    assert http.rpc("flavors.list", {}, http.token)[1]["items"][0]["description"] == ""


def test_a_pool_whose_provider_name_another_provider_holds_is_already_exists(http, services):
    from chalicelib.placement.models import Provider

    PlacementStore(services.client, services.table).create_provider(
        Provider(uuid="11111111-2222-3333-4444-555555555555", name="acme/gpu"))
    status, body = _apply(http, document())
    assert status == 409 and body["error"]["code"] == "ALREADY_EXISTS", body
    assert http.rpc("providerAccounts.list", {}, http.token)[1]["items"] == []


def test_make_run_timer_reconciles_and_publishes(http, services):
    from chalicelib.fleet.reconciler import run_reconciler_every

    assert _apply(http, document())[0] == 200
    pool_id = http.rpc("pools.list", {}, http.token)[1]["items"][0]["id"]
    _change_inventory_through_placement(services, pool_id, 5)
    published, stop = [], threading.Event()

    def publish(event):
        published.append(event)
        stop.set()

    thread = threading.Thread(target=run_reconciler_every, args=(0.01, stop, lambda: services, publish))
    thread.start()
    assert stop.wait(60)
    thread.join()
    assert [e["type"] for e in published] == ["fleet.drifted"]


def test_a_reconciler_recording_between_plan_and_transaction_does_not_fail_the_apply(http, services, bus):
    from chalicelib.fleet.reconciler import eventbridge_publisher, reconcile

    assert _apply(http, document())[0] == 200
    pool_id = http.rpc("pools.list", {}, http.token)[1]["items"][0]["id"]
    _change_inventory_through_placement(services, pool_id, 5)
    plan_hash = _plan(http, document())["planHash"]
    sneaked = []

    def sneak(request, **_):
        if not sneaked:
            sneaked.append(None)  # first: the pass's own transactions come through this hook too
            sneaked[0] = reconcile(services, eventbridge_publisher(bus.client()))

    services.client.meta.events.register("before-send.dynamodb.TransactWriteItems", sneak)
    try:
        status, body = _apply(http, document(), plan_hash=plan_hash)
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", sneak)
    assert status == 200, body
    assert sneaked[0]["drifted"] == 1 and sneaked[0]["published"] == 1
    # Apply read the status again: the tenant was now drifted, so fleet.converged went to the outbox.
    assert _reconcile(http)["published"] == 1
    assert [e["type"] for e in _events(http)] == ["fleet.drifted", "fleet.converged"]


def test_an_archived_pool_keeps_its_allocations_and_refuses_new_ones_through_placement(http, services):
    from tests.integration.placement.helpers import claim, new_uuid

    placement = placement_client(services)
    assert _apply(http, document())[0] == 200
    pool_id = http.rpc("pools.list", {}, http.token)[1]["items"][0]["id"]
    consumer = new_uuid()
    assert claim(placement, consumer, {pool_id: {"VCPU": 4}}).status == 204
    status, body = http.rpc("pools.update", {"id": pool_id, "capacity": {"MEMORY_MB": 4096}}, http.token)
    assert status == 422 and body["error"]["details"]["field"] == "/capacity/VCPU"
    assert http.rpc("pools.archive", {"id": pool_id}, http.token) == (200, {})
    held = placement.get(f"/placement/allocations/{consumer}", version="1.28").body["allocations"]
    assert held[pool_id]["resources"] == {"VCPU": 4}
    assert claim(placement, new_uuid(), {pool_id: {"VCPU": 1}}).status == 409
    assert placement.delete(f"/placement/resource_providers/{pool_id}", version="1.28").status == 409


def test_concurrent_module_writes_of_one_tenant_all_land_and_one_name_is_created_once(http):
    account = http.rpc("providerAccounts.create", {"name": "acc", "site": "k8s", "provider": "aws"}, http.token)[1]
    pool = http.rpc("pools.create", {"name": "p", "site": "k8s", "account": account["id"], "class": "c",
                                     "owner": "o", "availabilityZone": "z", "capacity": {"VCPU": 4}}, http.token)[1]
    names = [f"f{i}" for i in range(6)] + ["same", "same"]
    barrier = threading.Barrier(len(names))
    results = []

    def create(name):
        barrier.wait()
        results.append(http.rpc("flavors.create", {"name": name, "pool": pool["id"], "resources": {"VCPU": 1}},
                                http.token))

    threads = [threading.Thread(target=create, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] * 7 + [409], results
    assert next(b for s, b in results if s == 409)["error"]["code"] == "ALREADY_EXISTS"
    listed = http.rpc("flavors.list", {}, http.token)[1]["items"]
    assert sorted(f["name"] for f in listed) == sorted(set(names))


def test_a_large_applied_document_is_stored_in_chunks_and_a_shorter_one_drops_the_rest(http, services):
    import random as _random

    from chalicelib.fleet.keys import fleet_pk
    from chalicelib.fleet.store import CHUNK_BYTES, DOC

    rng = _random.Random(9)
    big = document(flavors=0)
    # Incompressible descriptions: the compressed document needs more than one 350 KB item.
    big["flavors"] = [{"name": f"f-{i:03d}", "pool": "gpu", "resources": {"VCPU": 1},
                       "description": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(1024))}
                      for i in range(700)]
    for start in range(0, 700, 90):  # each apply without prune creates one batch (fits one transaction)
        part = {**big, "flavors": big["flavors"][start:start + 90]}
        status, body = _apply(http, part)
        assert status == 200, body
    status, body = _apply(http, big)
    assert status == 200 and body["applied"] == 0

    def chunks():
        items = services.client.query(
            TableName=services.table, KeyConditionExpression="pk = :pk AND begins_with(sk, :d)",
            ExpressionAttributeValues={":pk": {"S": fleet_pk("acme")}, ":d": {"S": DOC}})
        return [len(i["data"]["B"]) for i in items["Items"]]

    sizes = chunks()
    assert len(sizes) >= 2 and max(sizes) <= CHUNK_BYTES
    assert _reconcile(http) == {"checked": 1, "drifted": 0, "converged": 1, "published": 0}  # read back whole
    assert _apply(http, {**big, "flavors": big["flavors"][:1]})[0] == 200
    assert len(chunks()) == 1
    assert _reconcile(http)["converged"] == 1


def test_a_crash_between_the_status_write_and_publishing_loses_and_duplicates_nothing(http, services, bus):
    assert _apply(http, document())[0] == 200
    pool_id = http.rpc("pools.list", {}, http.token)[1]["items"][0]["id"]
    _change_inventory_through_placement(services, pool_id, 3)
    # The pass dies right after its status + outbox transaction: the claim (first UpdateItem) never lands.
    with failing(services.client, "UpdateItem"):
        status, body = http.operator("POST", "/api/fleet/reconcile", {})
    assert status == 503 and body["error"]["code"] == "UNAVAILABLE"
    assert "drift" in http.rpc("fleet.status", {}, http.token)[1] and bus.entries == []
    assert _reconcile(http) == {"checked": 1, "drifted": 1, "converged": 0, "published": 1}
    assert _reconcile(http)["published"] == 0
    assert [e["type"] for e in _events(http)] == ["fleet.drifted"] and len(bus.entries) == 1


def test_a_write_in_between_that_leaves_the_plan_as_it_was_does_not_fail_the_apply(http):
    assert _apply(http, document())[0] == 200
    changed = document(capacity=32)
    plan_hash = _plan(http, changed)["planHash"]
    pool_id = http.rpc("pools.list", {}, http.token)[1]["items"][0]["id"]
    sneaked = []

    def sneak(request, **_):
        if not sneaked:
            sneaked.append(1)  # a flavor the document does not list (no prune): the plan stays the same
            status, body = http.rpc("flavors.create", {"name": "extra", "pool": pool_id,
                                                       "resources": {"VCPU": 1}}, http.token)
            assert status == 200, body

    from chalicelib.runtime import services as current

    client = current().client
    client.meta.events.register("before-send.dynamodb.TransactWriteItems", sneak)
    try:
        status, body = _apply(http, changed, plan_hash=plan_hash)
    finally:
        client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", sneak)
    assert status == 200 and body["plan"]["planHash"] == plan_hash, body
    assert http.rpc("pools.list", {}, http.token)[1]["items"][0]["capacity"]["VCPU"] == 32
    assert {f["name"] for f in http.rpc("flavors.list", {}, http.token)[1]["items"]} == {"small-0", "extra"}


def test_a_custom_class_in_a_pools_capacity_is_held_in_placement(http, services):

    placement = placement_client(services)
    doc = document()
    doc["pools"][0]["capacity"]["CUSTOM_GPU"] = 8
    status, body = http.rpc("fleet.plan", {"document": doc}, http.token)
    assert status == 400 and body["error"]["details"]["field"] == "/document/pools/0/capacity/CUSTOM_GPU"
    assert placement.put("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 201
    assert _apply(http, doc)[0] == 200
    assert placement.delete("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 409
    doc["pools"][0]["capacity"].pop("CUSTOM_GPU")
    assert _apply(http, doc)[0] == 200
    assert placement.delete("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 204


def _fleet_version(services, tenant="acme"):
    from chalicelib.fleet.keys import VERSION_SK, fleet_pk
    from chalicelib.store.keys import key
    from chalicelib.store.ops import get_item

    item = get_item(services.client, services.table, key(fleet_pk(tenant), VERSION_SK))
    return int(item["version"]) if item else 0


def test_a_placement_inventory_write_on_a_pools_provider_moves_the_fleet_version(http, services):
    status, body = _apply(http, document())
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
