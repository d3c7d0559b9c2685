"""Fleet over HTTP: each rule a black-box pass found broken (issue 14 items 12-20 and 22), one test per rule."""

from __future__ import annotations

import pytest

from chalicelib.fleet.models import object_id
from chalicelib.placement.models import Provider
from chalicelib.placement.store import PlacementStore
from tests.integration.placement.helpers import placement_client as _placement
from tests.support.fleet import apply as _apply
from tests.support.fleet import change_inventory_through_placement as _change_inventory_through_placement
from tests.support.fleet import document
from tests.support.fleet import events as _events
from tests.support.fleet import export as _export
from tests.support.fleet import plan as _plan
from tests.support.fleet import pool_id as _pool_id
from tests.support.fleet import reconcile as _reconcile

# --- 12: no offer to its pool's owner, whichever write made it ------------------------------------------

def test_a_pool_update_giving_the_pool_to_an_offers_recipient_is_invalid_state(fleet):
    assert _apply(fleet, document())[0] == 200  # offer "to-b" of pool gpu to team-b
    status, body = fleet.rpc("pools.update", {"id": _pool_id(fleet), "owner": "team-b"}, fleet.token)
    assert status == 422 and body["error"]["code"] == "INVALID_STATE"
    assert body["error"]["details"] == {"field": "/owner"}
    assert _plan(fleet, _export(fleet))["calls"] == []


@pytest.mark.parametrize("offer_listed", [False, True])
def test_a_document_giving_the_pool_to_an_offers_recipient_is_blocked_and_apply_refuses_it(fleet, offer_listed):
    assert _apply(fleet, document())[0] == 200
    changed = document()
    changed["pools"][0]["owner"] = "team-b"
    if not offer_listed:
        changed["offers"] = []  # without prune the existing offer stays
    planned = _plan(fleet, changed)
    assert {"kind": "pools", "name": "gpu", "reason": "offer_to_owner", "field": "owner"} in planned["blocked"]
    status, body = _apply(fleet, changed)
    assert status == 422 and body["error"]["details"]["blocked"] == planned["blocked"]
    assert fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["owner"] == "team-a"


# --- 13: events published and listed in outbox order ---------------------------------------------------

def test_events_are_published_and_listed_oldest_first(fleet, services, bus):
    assert _apply(fleet, document())[0] == 200
    pool_id = _pool_id(fleet)
    _change_inventory_through_placement(services, pool_id, 99)
    assert _reconcile(fleet)["published"] == 1  # fleet.drifted
    assert _apply(fleet, document())[0] == 200  # fleet.converged into the outbox, not yet published
    _change_inventory_through_placement(services, pool_id, 98)
    assert _reconcile(fleet) == {"checked": 1, "drifted": 1, "converged": 0, "published": 2}
    assert [e["type"] for e in _events(fleet)] == ["fleet.drifted", "fleet.converged", "fleet.drifted"]
    assert [e["DetailType"] for e in bus.entries] == ["fleet.drifted", "fleet.converged", "fleet.drifted"]
    assert "drift" in fleet.rpc("fleet.status", {}, fleet.token)[1]


# --- 14: a condition no retry can satisfy is a deterministic error ------------------------------------

@pytest.mark.parametrize("path", ["fleet.apply", "pools.create"])
def test_a_provider_holding_the_pools_uuid_is_already_exists_not_503(fleet, services, path):
    PlacementStore(services.client, services.table).create_provider(
        Provider(uuid=object_id("acme", "pools", "gpu"), name="someone-elses"))
    if path == "fleet.apply":
        status, body = _apply(fleet, document())
        assert fleet.rpc("providerAccounts.list", {}, fleet.token)[1]["items"] == []
    else:
        account = fleet.rpc("providerAccounts.create", {"name": "main", "site": "k8s", "provider": "aws"},
                           fleet.token)[1]
        status, body = fleet.rpc("pools.create", {"name": "gpu", "site": "k8s", "account": account["id"],
                                                 "class": "c", "owner": "o", "availabilityZone": "z",
                                                 "capacity": {"VCPU": 4}}, fleet.token)
        assert fleet.rpc("pools.list", {}, fleet.token)[1]["items"] == []
    assert status == 409 and body["error"]["code"] == "ALREADY_EXISTS", body


# --- 15: a class any fleet object uses is in use -------------------------------------------------------

@pytest.mark.parametrize("kind", ["flavors", "offers", "ownerQuotas"])
def test_a_custom_class_only_a_flavor_offer_or_quota_uses_cannot_be_deleted_through_placement(fleet, services, kind):
    placement = _placement(services)
    assert placement.put("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 201
    doc = document()
    field = "resources" if kind == "flavors" else "limits"
    doc[kind][0][field] = {"CUSTOM_GPU": 1}
    status, body = _apply(fleet, doc)
    assert status == 200, body
    assert placement.delete("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 409
    assert _plan(fleet, _export(fleet))["calls"] == []
    doc[kind][0][field] = {"VCPU": 1}
    assert _apply(fleet, doc)[0] == 200
    assert placement.delete("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 204


def test_a_deleted_flavor_releases_its_class(fleet, services):
    placement = _placement(services)
    assert placement.put("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 201
    doc = document()
    doc["flavors"][0]["resources"] = {"CUSTOM_GPU": 1}
    assert _apply(fleet, doc)[0] == 200
    flavor_id = fleet.rpc("flavors.list", {}, fleet.token)[1]["items"][0]["id"]
    assert fleet.rpc("flavors.delete", {"id": flavor_id}, fleet.token) == (200, {})
    assert placement.delete("/placement/resource_classes/CUSTOM_GPU", version="1.7").status == 204


# --- 16: whatever apply refuses, plan marks blocked first ----------------------------------------------

@pytest.mark.parametrize(("kind", "change"), [("flavors", {"description": "bigger"}),
                                              ("offers", {"limits": {"VCPU": 1}}),
                                              ("ownerQuotas", {"limits": {"VCPU": 1}})])
def test_a_change_to_what_an_archived_pool_holds_is_blocked_in_the_plan(fleet, kind, change):
    assert _apply(fleet, document())[0] == 200
    assert fleet.rpc("pools.archive", {"id": _pool_id(fleet)}, fleet.token) == (200, {})  # by hand: the rest stays
    exported = _export(fleet)
    assert _plan(fleet, exported)["calls"] == []
    exported[kind][0].update(change)
    planned = _plan(fleet, exported)
    name = exported[kind][0].get("name") or f"{exported[kind][0]['owner']}@{exported[kind][0]['pool']}"
    assert planned["blocked"] == [{"kind": kind, "name": name, "reason": "archived", "field": "pool"}]
    assert planned["calls"] == []
    status, body = _apply(fleet, exported)
    assert status == 422 and body["error"]["details"]["blocked"] == planned["blocked"]


def test_removing_a_class_that_holds_allocations_is_blocked_in_the_plan(fleet, services):
    from tests.integration.placement.helpers import claim, new_uuid

    placement = _placement(services)
    assert _apply(fleet, document())[0] == 200
    assert claim(placement, new_uuid(), {_pool_id(fleet): {"VCPU": 4}}).status == 204
    changed = document()
    changed["pools"][0]["capacity"] = {"MEMORY_MB": 4096}
    planned = _plan(fleet, changed)
    assert planned["blocked"] == [{"kind": "pools", "name": "gpu", "reason": "in_use", "field": "capacity"}]
    status, body = _apply(fleet, changed)
    assert status == 422 and body["error"]["details"]["blocked"] == planned["blocked"]


# --- 17: no name of an id's form -----------------------------------------------------------------------

def test_a_name_of_an_ids_form_is_refused_by_the_methods_and_blocked_in_a_document(fleet):
    status, nameless = fleet.rpc("providerAccounts.create", {"site": "k8s", "provider": "aws"}, fleet.token)
    assert status == 200 and "name" not in nameless
    status, body = fleet.rpc("providerAccounts.create", {"name": nameless["id"], "site": "k8s", "provider": "gcp"},
                            fleet.token)
    assert status == 400 and body["error"]["details"] == {"field": "/name"}
    exported = _export(fleet)
    assert [a["name"] for a in exported["providerAccounts"]] == [nameless["id"]]
    assert _plan(fleet, exported)["calls"] == []
    other = "0b6e7c4e-0000-4000-8000-000000000000"
    doc = {**exported, "providerAccounts": [*exported["providerAccounts"],
                                            {"name": other, "site": "k8s", "provider": "aws", "description": ""}]}
    planned = _plan(fleet, doc)
    assert planned["blocked"] == [{"kind": "providerAccounts", "name": other, "reason": "name_is_an_id",
                                   "field": "name"}]


# --- 18: export shows what exists ----------------------------------------------------------------------

def test_export_shows_a_pools_capacity_as_placement_holds_it(fleet, services):
    assert _apply(fleet, document(capacity=64))[0] == 200
    _change_inventory_through_placement(services, _pool_id(fleet), 48)
    exported = _export(fleet)
    assert exported["pools"][0]["capacity"] == {"MEMORY_MB": 4096, "VCPU": 48}
    assert fleet.rpc("pools.list", {}, fleet.token)[1]["items"][0]["capacity"] == {"MEMORY_MB": 4096, "VCPU": 48}
    assert _plan(fleet, exported)["calls"] == []
    # The applied document (64) still differs: that is the drift.
    assert [c["fields"] for c in _plan(fleet, document(capacity=64))["changes"]] == [["capacity"]]


# --- 19: prune never deletes what a kept object needs --------------------------------------------------

def test_prune_keeps_the_account_a_blocked_pool_still_uses(fleet):
    assert _apply(fleet, document())[0] == 200
    doc = document()
    doc["providerAccounts"] = [{"name": "other", "site": "k8s", "provider": "aws", "description": ""}]
    doc["pools"][0]["account"] = "other"
    doc["pools"][0]["class"] = "changed"  # immutable: the pool stays as it is, on account "main"
    planned = _plan(fleet, doc, prune=True)
    assert {"kind": "pools", "name": "gpu", "reason": "immutable_field", "field": "class"} in planned["blocked"]
    assert not [c for c in planned["changes"] if c["kind"] == "providerAccounts" and c["op"] == "delete"]


# --- 20: strict inputs everywhere ----------------------------------------------------------------------

def test_methods_list_refuses_unknown_fields(fleet):
    status, body = fleet.call("POST", "/api/compute/methods/list", {"verbose": True}, fleet.token)
    assert status == 400 and body["error"]["code"] == "INVALID_ARGUMENT"
    assert body["error"]["details"] == {"field": "/verbose"}
    assert fleet.call("POST", "/api/compute/methods/list", {}, fleet.token)[0] == 200


# --- 22: ambiguous credentials -------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/api/compute/methods/list", "/api/compute/fleet/status", "/api/fleet/reconcile"])
def test_authorization_with_x_auth_token_is_401(fleet, path):
    token = fleet.keys["service"] if path.startswith("/api/fleet") else fleet.token
    status, body = fleet.call("POST", path, {}, token, headers={"x-auth-token": token})
    assert status == 401 and body["error"]["code"] == "UNAUTHENTICATED"
