"""Placement's transaction operations (pure): the invariants other packages rely on are in every builder."""

from __future__ import annotations

import pytest

from chalicelib.fleet.keys import fleet_version_key
from chalicelib.fleet.placement_writes import provider_items
from chalicelib.placement import items
from chalicelib.placement.models import Inventory, Provider

TABLE = "t"
LINK = fleet_version_key("acme")
RP = "11111111-1111-1111-1111-111111111111"
PARENT, OTHER_ROOT, GRANDCHILD = (f"{d}" * 8 + "-0000-4000-8000-000000000000" for d in "234")


def provider(linked: tuple[str, str] | None = LINK, **inventories: Inventory) -> Provider:
    return Provider(uuid=RP, name="acme/gpu", generation=2, version=5, inventory_version=3,
                    inventories=inventories or {"VCPU": Inventory(total=8)}, linked_version=linked)


def names(ops: list[items.Op]) -> list[str]:
    return [o.name for o in ops]


def test_an_inventory_write_of_a_linked_provider_moves_the_linked_version_in_its_transaction():
    written, ops = items.write_inventories(TABLE, provider(), {"VCPU": Inventory(total=4)})
    assert names(ops) == [items.PROVIDER, items.LINKED_VERSION]  # the classes stay: no index item moves
    bump = ops[1].request["Update"]
    assert bump["Key"] == {"pk": {"S": "FLEET#acme"}, "sk": {"S": "OBJ!VERSION"}}
    assert bump["UpdateExpression"] == "ADD version :one"
    assert (written.generation, written.version, written.inventory_version) == (3, 6, 4)
    assert ops[0].request["Put"]["ExpressionAttributeValues"] == {":read": {"N": "5"}}


def test_a_provider_linked_to_nothing_moves_nothing():
    _, ops = items.write_inventories(TABLE, provider(linked=None), {"VCPU": Inventory(total=2)})
    assert names(ops) == [items.PROVIDER]
    assert names(items.delete_provider(TABLE, provider(linked=None))) == [items.PROVIDER, items.OLD_NAME_CLAIM,
                                                                           "class_index:VCPU"]


def test_deleting_a_linked_provider_moves_the_linked_version_and_releases_its_name_and_classes():
    ops = items.delete_provider(TABLE, provider(CUSTOM_GPU=Inventory(total=1)))
    assert names(ops) == [items.PROVIDER, items.OLD_NAME_CLAIM, "class_ref:CUSTOM_GPU", "class_index:CUSTOM_GPU",
                          items.LINKED_VERSION]
    assert ops[2].request["Update"]["ExpressionAttributeValues"] == {":d": {"N": "-1"}}


def test_a_rename_keeps_the_link_and_claims_the_new_name():
    renamed, ops = items.rename_provider(TABLE, provider(), "other")
    assert renamed.linked_version == LINK and renamed.name == "other"
    assert names(ops) == [items.PROVIDER, items.OLD_NAME_CLAIM, items.NAME_CLAIM]
    put = ops[0].request["Put"]["Item"]
    assert put["linkedVersion"] == {"M": {"pk": {"S": "FLEET#acme"}, "sk": {"S": "OBJ!VERSION"}}}
    assert put["name"] == {"S": "other"}
    assert names(items.rename_provider(TABLE, provider(), "acme/gpu")[1]) == [items.PROVIDER]


def test_a_new_provider_claims_its_uuid_and_its_name():
    ops = items.create_provider(TABLE, Provider(uuid=RP, name="n", created_at=7))
    assert names(ops) == [items.PROVIDER, items.NAME_CLAIM]
    assert ops[0].request["Put"]["ConditionExpression"] == "attribute_not_exists(pk)"
    assert ops[0].request["Put"]["Item"]["createdUs"] == {"N": "7"}
    assert "linkedVersion" not in ops[0].request["Put"]["Item"]


def test_the_class_index_follows_the_classes_an_inventory_gains_and_loses():
    """Every class a provider holds has its PLRCX#<class> item (allocation candidates start there)."""
    ops = items.create_provider(TABLE, Provider(uuid=RP, name="n", inventories={"VCPU": Inventory(total=1)}))
    assert names(ops) == [items.PROVIDER, items.NAME_CLAIM, "class_index:VCPU"]
    assert ops[2].request["Put"]["Item"]["pk"] == {"S": "PLRCX#VCPU"}
    assert ops[2].request["Put"]["Item"]["sk"] == {"S": RP}
    _, ops = items.write_inventories(TABLE, provider(linked=None), {"DISK_GB": Inventory(total=1)})
    assert names(ops) == [items.PROVIDER, "class_index:DISK_GB", "class_index:VCPU"]
    assert "Put" in ops[1].request and ops[2].request["Delete"]["Key"] == items.class_index_key("VCPU", RP)
    fleet_ops, _ = provider_items(TABLE, provider(), RP, "acme/gpu", {"MEMORY_MB": (8, 0)}, tenant="acme")
    assert [o.get("Put", o.get("Delete"))["TableName"] for o in fleet_ops] == [TABLE] * 3
    assert fleet_ops[2]["Delete"]["Key"] == items.class_index_key("VCPU", RP)


def test_custom_class_counts_follow_the_classes_an_inventory_gains_and_loses():
    before = {"CUSTOM_A": Inventory(total=1), "VCPU": Inventory(total=1)}
    after = {"CUSTOM_B": Inventory(total=1), "VCPU": Inventory(total=2)}
    assert items.class_ref_deltas(before, after) == {"CUSTOM_B": 1, "CUSTOM_A": -1}
    assert items.class_ref_updates(TABLE, {"CUSTOM_A": 0}) == []


# --- fleet's items for its pools' providers -------------------------------------------------------

def test_fleet_creates_a_pools_provider_linked_to_its_tenants_fleet_version():
    ops, refs = provider_items(TABLE, None, RP, "acme/gpu", {"VCPU": (8, 0), "CUSTOM_GPU": (2, 0)}, tenant="acme")
    put = ops[0]["Put"]["Item"]
    assert put["linkedVersion"] == {"M": {"pk": {"S": "FLEET#acme"}, "sk": {"S": "OBJ!VERSION"}}}
    assert ops[1]["Put"]["Item"]["pk"] == {"S": "PLRPNAME#acme/gpu"}
    assert refs == {"CUSTOM_GPU": 1}


def test_fleet_links_a_provider_written_before_the_link_existed_without_touching_its_state():
    read = provider(linked=None)
    ops, refs = provider_items(TABLE, read, RP, read.name, {"VCPU": (8, 0)}, tenant="acme")
    (put,) = ops
    item = put["Put"]["Item"]
    assert item["linkedVersion"] == {"M": {"pk": {"S": "FLEET#acme"}, "sk": {"S": "OBJ!VERSION"}}}
    assert (item["generation"], item["version"], item["invVersion"]) == ({"N": "2"}, {"N": "6"}, {"N": "3"})
    assert refs == {}
    assert provider_items(TABLE, provider(), RP, read.name, {"VCPU": (8, 0)}, tenant="acme") == ([], {})


def test_fleets_capacity_change_moves_the_inventory_version_allocation_writes_are_checked_against():
    """A claim decided on the old capacity is conditioned on the old inventory version: the fleet's write
    of a new capacity must move it, as Placement's own inventory writes do, or the claim lands on it."""
    ops, _ = provider_items(TABLE, provider(), RP, "acme/gpu", {"VCPU": (4, 0)}, tenant="acme")
    item = ops[0]["Put"]["Item"]
    assert (item["generation"], item["version"], item["invVersion"]) == ({"N": "3"}, {"N": "6"}, {"N": "4"})


def test_fleets_pool_provider_operations_are_named_for_its_cancellations():
    from chalicelib.fleet.placement_writes import class_ref_ops, provider_ops

    ops, _ = provider_ops(TABLE, None, RP, "acme/gpu", {"VCPU": (8, 0)}, tenant="acme")
    assert names(ops) == [items.PROVIDER, items.NAME_CLAIM, "class_index:VCPU"]
    assert names(class_ref_ops(TABLE, {"CUSTOM_GPU": 2})) == ["class_ref:CUSTOM_GPU"]


# --- Placement's NULL updated_at (PUT /resource_providers/{u} answers without last-modified) -------------

@pytest.mark.parametrize(("fresh_child", "generation", "never_updated"), [
    (True, 0, True), (True, 1, False), (False, 0, False), (False, 1, False)])
def test_a_provider_was_never_updated_while_a_fresh_child_with_generation_0(fresh_child, generation, never_updated):
    kid = Provider(uuid=RP, name="kid", generation=generation, fresh_child=fresh_child)
    assert kid.never_updated is never_updated


@pytest.mark.parametrize(("name", "fresh"), [("kid", True), ("other", False)])
def test_only_a_rename_to_another_name_updates_a_fresh_child(name, fresh):
    kid = Provider(uuid=RP, name="kid", parent_uuid=PARENT, root_uuid=PARENT, fresh_child=True)
    renamed, ops = items.rename_provider(TABLE, kid, name)
    assert renamed.fresh_child is fresh
    assert ("fresh" in ops[0].request["Put"]["Item"]) is fresh


def test_moving_a_fresh_child_or_its_subtree_updates_them():
    kid = Provider(uuid=RP, name="kid", parent_uuid=PARENT, root_uuid=PARENT, fresh_child=True)
    grandchild = Provider(uuid=GRANDCHILD, name="g", parent_uuid=RP, root_uuid=PARENT, fresh_child=True)
    moved, ops = items.update_provider(TABLE, kid, "kid", OTHER_ROOT, OTHER_ROOT, (grandchild,))
    assert not moved.fresh_child and "fresh" not in ops[0].request["Put"]["Item"]
    rewrite = next(o for o in ops if o.name == f"{items.DESCENDANT}{GRANDCHILD}").request["Update"]
    assert rewrite["UpdateExpression"].endswith("REMOVE fresh")


@pytest.mark.parametrize(("stored", "expected"), [
    ({"allocs": {"b": {"VCPU": 1}, "a": {"DISK_GB": 2}}, "allocOrder": ["b", "a"]}, ["b", "a"]),
    ({"allocs": {"b": {"VCPU": 1}, "a": {"DISK_GB": 2}}, "allocOrder": ["a", "b"]}, ["a", "b"]),
    ({"allocs": {"b": {"VCPU": 1}, "a": {"DISK_GB": 2}}}, ["a", "b"]),  # written before allocOrder: sorted
    ({"allocs": {"c": {"VCPU": 1}, "a": {}, "b": {}}, "allocOrder": ["c", "x"]}, ["c", "a", "b"]),
    ({}, []),
])
def test_a_consumers_allocations_come_back_in_the_order_they_were_written(stored, expected):
    assert list(items.consumer_allocations(stored)) == expected


def test_a_consumers_allocations_are_stored_with_their_order():
    allocations = {"b": {"VCPU": 1}, "a": {"DISK_GB": 2}}
    stored = items.consumer_allocations_attributes(allocations)
    assert stored == {"allocs": allocations, "allocOrder": ["b", "a"]}
    assert items.consumer_allocations(stored) == allocations and list(items.consumer_allocations(stored)) == ["b", "a"]


# --- usage counters on their owner's item (decision 0049) ------------------------------------------------

def test_a_consumers_counters_move_one_item_per_owner():
    deltas = {("p", None, None): {"VCPU": 2, "consumer_count": 1}, ("p", "u", None): {"VCPU": 2, "consumer_count": 1},
              ("p", None, "INSTANCE"): {"VCPU": 2, "consumer_count": 1},
              ("p", "u", "INSTANCE"): {"VCPU": 2, "consumer_count": 1}}
    ops = items.usage_updates("t", deltas)
    assert [op.name for op in ops] == ["usage:p:-", "usage:p:USER#u"]
    update = ops[0].request["Update"]
    assert update["Key"] == {"pk": {"S": "PLUSAGE#p"}, "sk": {"S": "-"}}
    assert sorted(update["ExpressionAttributeNames"].values()) == [
        "T#INSTANCE#consumers", "T#INSTANCE#rc_VCPU", "consumers", "rc_VCPU"]
    assert update["UpdateExpression"] == "ADD #c0 :d0, #c1 :d1, #c2 :d2, #c3 :d3"
    assert items.usage_items_moved(deltas) == 2


@pytest.mark.parametrize(("deltas", "names"), [
    # the type changes: one counter down, the other up, on the same item
    ({("p", None, "A"): {"VCPU": -1}, ("p", None, "B"): {"VCPU": 1}}, {"usage:p:-"}),
    # the owner changes: both users' items
    ({("p", "u", None): {"VCPU": -1}, ("p", "v", None): {"VCPU": 1}}, {"usage:p:USER#u", "usage:p:USER#v"}),
    # nothing moves: no item
    ({("p", None, None): {"VCPU": 0}}, set()),
])
def test_usage_updates_write_only_what_moves(deltas, names):
    ops = items.usage_updates("t", deltas)
    assert {op.name for op in ops} == names
    assert items.usage_items_moved(deltas) == len(names)


def test_an_owners_item_is_read_per_type_and_for_every_type():
    item = {"pk": "PLUSAGE#p", "sk": "-", "rc_VCPU": 3, "consumers": 2, "T#A#rc_VCPU": 1, "T#A#consumers": 1,
            "T#B#rc_VCPU": 2, "T#B#consumers": 1, "T#C#rc_VCPU": 0}
    assert items.usage_counters(item, None) == {"rc_VCPU": 3, "consumers": 2}
    assert items.usage_counters(item, "A") == {"rc_VCPU": 1, "consumers": 1}
    assert items.usage_counters(item, "D") == {}
    assert items.usage_types(item) == {"A", "B", "C"}
