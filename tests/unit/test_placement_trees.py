"""Nested providers, aggregates and the list filters, pure: tree rules, their transactions, filter parsing."""

from __future__ import annotations

import pytest

from chalicelib.placement import errors, items, list_filters, trees
from chalicelib.placement.models import Inventory, Provider

TABLE = "t"
A1 = "f918801a-5e54-4bee-9095-09a9d0c786b8"
A2 = "a893eb5c-e2a0-4251-ab26-f71d3b0cfc0b"


def rp(uuid: str, parent: str | None = None, root: str = "", children: int = 0, version: int = 1,
       **inventories: Inventory) -> Provider:
    return Provider(uuid=uuid, name=uuid, parent_uuid=parent, root_uuid=root, children=children, version=version,
                    inventories=inventories)


# root r -> a -> (b, c); b -> d
TREE = [rp("r", children=1), rp("a", "r", "r", children=2), rp("b", "a", "r", children=1), rp("c", "a", "r"),
        rp("d", "b", "r")]


def names(ops: list[items.Op]) -> list[str]:
    return [o.name for o in ops]


# --- tree rules --------------------------------------------------------------------------------------------


def test_descendants_are_every_provider_below_breadth_first():
    assert [p.uuid for p in trees.descendants(TREE, "a")] == ["b", "c", "d"]
    assert [p.uuid for p in trees.descendants(TREE, "r")] == ["a", "b", "c", "d"]
    assert trees.descendants(TREE, "d") == []


def test_a_tree_read_missing_a_provider_its_counters_promise_is_incomplete():
    lagging = [p for p in TREE if p.uuid != "d"]  # the index has not listed d yet; b's counter says 1
    with pytest.raises(trees.SubtreeIncomplete):
        trees.descendants(lagging, "a")
    assert [p.uuid for p in trees.descendants(lagging, "c")] == []


def test_tree_members_leave_out_what_the_consistent_read_shows_elsewhere():
    moved = rp("x", "other", "other")
    assert trees.tree_members([*TREE, moved], "r") == TREE


@pytest.mark.parametrize(("parent", "reparenting", "reason"), [
    ("c", True, "creating loop in the provider tree is not allowed."),  # under its own child
    ("a", True, "creating loop in the provider tree is not allowed."),  # under itself
    ("r2", False, "re-parenting a provider is not currently allowed."),
    (None, False, "un-parenting a provider is not currently allowed."),
])
def test_moves_placement_refuses(parent, reparenting, reason):
    providers = {p.uuid: p for p in [*TREE, rp("r2")]}
    with pytest.raises(errors.Invalid) as refused:
        trees.decide_move(providers["a"], providers.get(parent) if parent else None, parent,
                          trees.descendants(TREE, "a"), reparenting=reparenting)
    assert refused.value.detail.startswith("Unable to save resource provider a: Object action update failed")
    assert refused.value.detail.endswith(reason)


def test_a_missing_parent_is_refused_in_placements_words():
    with pytest.raises(errors.Invalid) as refused:
        trees.decide_move(rp("x"), None, "nope", [], reparenting=True)
    assert refused.value.detail == ("Unable to save resource provider x: Object action create failed because: "
                                    "parent provider UUID does not exist.")  # "create", as upstream says
    assert trees.parent_missing_on_update("y").detail == refused.value.detail.replace(" x:", " y:")


def test_a_root_may_take_a_parent_before_1_37_and_brings_its_subtree():
    move = trees.decide_move(TREE[0], rp("r2"), "r2", trees.descendants(TREE, "r"), reparenting=False)
    assert (move.parent_uuid, move.root, move.changes_root) == ("r2", "r2", True)
    assert [p.uuid for p in move.descendants] == ["a", "b", "c", "d"]


def test_un_parenting_makes_the_provider_the_root_of_its_subtree():
    move = trees.decide_move(TREE[1], None, None, trees.descendants(TREE, "a"), reparenting=True)
    assert (move.parent_uuid, move.root) == (None, "a")
    assert move.descendants == tuple(trees.descendants(TREE, "a")) and move.changes_root


def test_create_parent_problems():
    assert trees.create_parent_problem("x", "x", None) == (
        "parent provider UUID cannot be same as UUID. Please set parent provider UUID to None if there is no parent.")
    assert trees.create_parent_problem("x", "p", None) == "parent provider UUID does not exist."
    assert trees.create_parent_problem("x", "p", rp("p")) is None


def named(provider: Provider, *kids: str) -> Provider:
    return Provider(**{**provider.__dict__, "child_uuids": frozenset(kids)})


NAMED = {p.uuid: p for p in [named(TREE[0], "a"), named(TREE[1], "b", "c"), named(TREE[2], "d"), TREE[3], TREE[4]]}


def test_a_tree_whose_items_name_their_children_is_read_a_level_at_a_time():
    levels: list[list[str]] = []

    def read(uuids: list[str]) -> dict[str, Provider]:
        levels.append(uuids)
        return {u: NAMED[u] for u in uuids if u in NAMED}

    members, unnamed = trees.members_by_level([NAMED["r"], rp("flat")], read)
    assert {root: [p.uuid for p in found] for root, found in members.items()} == {
        "r": ["r", "a", "b", "c", "d"], "flat": ["flat"]}
    assert unnamed == set() and levels == [["a"], ["b", "c"], ["d"]]


@pytest.mark.parametrize("change", [
    {"a": TREE[1]},                                    # a names none of its two children: written before kids
    {"c": rp("c", "x", "elsewhere")},                  # c was read in another tree: moved meanwhile
    {"d": None},                                       # d is gone
])
def test_a_tree_that_cannot_be_read_by_its_named_children_is_left_to_the_index(change):
    providers = {**NAMED, **change}
    members, unnamed = trees.members_by_level([providers["r"]], lambda uuids: {u: providers.get(u) for u in uuids})
    assert members == {} and unnamed == {"r"}


def test_trees_read_together_go_on_each_at_its_own_pace():
    """One tree left to the index (a child read elsewhere) stays left while the other is read to its bottom,
    every parent of a level bringing its own children."""
    providers = {p.uuid: p for p in [
        named(rp("r1", children=1), "x"), rp("x", "o", "other"),
        named(rp("r2", children=2), "p", "q"),
        named(rp("p", "r2", "r2", children=1), "p1"), named(rp("q", "r2", "r2", children=1), "q1"),
        named(rp("p1", "p", "r2", children=1), "p2"), named(rp("q1", "q", "r2", children=1), "q2"),
        rp("p2", "p1", "r2"), rp("q2", "q1", "r2")]}
    members, unnamed = trees.members_by_level([providers["r1"], providers["r2"]],
                                              lambda uuids: {u: providers.get(u) for u in uuids})
    assert unnamed == {"r1"}
    assert {root: [p.uuid for p in found] for root, found in members.items()} == {
        "r2": ["r2", "p", "q", "p1", "q1", "p2", "q2"]}


# --- their transactions ------------------------------------------------------------------------------------


def test_a_child_is_created_with_its_parents_counter_conditioned_on_the_parents_tree():
    ops = items.create_provider(TABLE, rp("c2", "a", "r"))
    assert names(ops) == [items.PROVIDER, items.NAME_CLAIM, items.PARENT]
    parent = ops[2].request["Update"]
    assert parent["Key"] == items.provider_key("a")
    assert parent["UpdateExpression"] == "ADD #children :d, version :one, #kids :kid"
    assert parent["ExpressionAttributeValues"][":root"] == {"S": "r"}
    assert parent["ExpressionAttributeValues"][":kid"] == {"SS": ["c2"]}
    assert ops[0].request["Put"]["Item"]["gsi1sk"] == {"S": "r#c2"}


def test_a_provider_with_children_is_never_deleted_and_a_child_moves_its_parents_counter():
    ops = items.delete_provider(TABLE, rp("d", "b", "r"))
    assert names(ops) == [items.PROVIDER, items.OLD_NAME_CLAIM, items.PARENT]
    assert "#children = :zero" in ops[0].request["Delete"]["ConditionExpression"]
    assert ops[2].request["Update"]["ExpressionAttributeValues"][":d"] == {"N": "-1"}
    assert ops[2].request["Update"]["UpdateExpression"] == "ADD #children :d, version :one DELETE #kids :kid"
    assert ops[2].request["Update"]["ExpressionAttributeValues"][":kid"] == {"SS": ["d"]}


def test_a_move_to_another_tree_rewrites_every_descendants_root_and_sort_key():
    move = trees.decide_move(TREE[1], rp("r2"), "r2", trees.descendants(TREE, "a"), reparenting=True)
    moved, ops = items.update_provider(TABLE, TREE[1], "a", move.parent_uuid, move.root, move.descendants)
    assert (moved.parent_uuid, moved.root) == ("r2", "r2")
    assert names(ops) == [items.PROVIDER, items.OLD_PARENT, items.PARENT, "descendant:b", "descendant:c",
                          "descendant:d"]
    assert [ops[i].request["Update"]["ExpressionAttributeValues"][":kid"] for i in (1, 2)] == [{"SS": ["a"]}] * 2
    update = ops[3].request["Update"]
    assert update["ExpressionAttributeValues"][":sk"] == {"S": "r2#b"}
    assert update["ExpressionAttributeValues"][":read"] == {"N": "1"}
    assert ops[0].request["Put"]["Item"]["gsi1sk"] == {"S": "r2#a"}


def test_a_move_within_its_tree_checks_every_descendant_unchanged():
    _, ops = items.update_provider(TABLE, TREE[3], "c", "b", "r", ())
    assert names(ops) == [items.PROVIDER, items.OLD_PARENT, items.PARENT]
    _, ops = items.update_provider(TABLE, TREE[2], "b", "c", "r", (TREE[4],))
    assert "ConditionCheck" in ops[-1].request


def test_un_parenting_makes_the_sort_key_the_uuid():
    moved, ops = items.update_provider(TABLE, TREE[1], "a", None, "a", ())
    assert moved.root == "a" and moved.parent_uuid is None
    assert ops[0].request["Put"]["Item"]["gsi1sk"] == {"S": "a"}


def test_aggregates_write_one_membership_item_per_aggregate_added_or_removed():
    read = Provider(uuid="p", name="p", version=3, generation=4, aggregates=frozenset({A1}))
    written, ops = items.write_aggregates(TABLE, read, frozenset({A2}), bump_generation=True)
    assert names(ops) == [items.PROVIDER, f"aggregate_member:{A2}", f"aggregate_member:{A1}"]
    assert "Put" in ops[1].request and "Delete" in ops[2].request
    assert ops[1].request["Put"]["Item"]["pk"] == {"S": f"PLAGG#{A2}"}
    assert (written.generation, written.version) == (5, 4)
    assert items.write_aggregates(TABLE, read, frozenset({A1}), bump_generation=False)[0].generation == 4


def test_a_class_rename_needs_the_class_unheld_and_the_name_free():
    ops = items.rename_class(TABLE, "CUSTOM_A", "CUSTOM_B")
    assert names(ops) == [items.OLD_CLASS, items.NEW_CLASS]
    assert "refs = :zero" in ops[0].request["Delete"]["ConditionExpression"]


# --- filters -----------------------------------------------------------------------------------------------


def test_member_of_forms():
    parsed = list_filters.parse_member_of([f"in:{A1},{A2}", A1, f"!{A2}"], several=True, forbidden=True)
    assert parsed.required == (frozenset({A1, A2}), frozenset({A1}))
    assert parsed.forbidden == frozenset({A2})
    assert parsed.matches(frozenset({A1})) and not parsed.matches(frozenset({A1, A2}))
    assert list_filters.parse_member_of([f"!in:{A1},{A2}"], several=True, forbidden=True).forbidden == {A1, A2}
    assert list_filters.parse_member_of([f"!{A1}", f"!{A2}"], several=True, forbidden=True).forbidden == {A1, A2}
    assert not parsed.matches(frozenset({"elsewhere"})) and not parsed.matches(frozenset())


def test_a_member_of_says_something_when_it_requires_or_forbids():
    assert not list_filters.MemberOf()
    assert list_filters.MemberOf(required=(frozenset({A1}),))
    assert list_filters.MemberOf(forbidden=frozenset({A1}))


def test_the_narrowest_member_of_set_is_read():
    assert list_filters.narrowest([frozenset({A1, A2}), frozenset({A2})]) == {A2}
    assert list_filters.narrowest([frozenset({A1}), frozenset({A2})]) == {A2}  # a tie: the lowest uuid
    assert list_filters.narrowest([frozenset({A2}), frozenset({A1})]) == {A2}
    assert list_filters.narrowest([]) is None


def test_an_unknown_class_in_placements_words():
    assert list_filters.unknown_class("CUSTOM_X").detail == (
        "Invalid resource class in resources parameter: No such resource class CUSTOM_X.")


@pytest.mark.parametrize(("values", "several", "forbidden", "text"), [
    ([A1, A2], False, False, "Multiple member_of parameters are not supported"),
    ([f"!{A1}"], True, False, "Forbidden member_of parameters are not supported in the specified microversion"),
    ([f"{A1},{A2}"], True, True, "must be prefixed with the 'in:' or '!in:' keyword"),
    (["not a uuid"], True, True, "Expected 'member_of' parameter to contain valid UUID(s). Got: not a uuid"),
    ([f"in:{A1},!{A2}"], True, True, "Expected 'member_of' parameter to contain valid UUID(s)."),
])
def test_member_of_refusals(values, several, forbidden, text):
    with pytest.raises(errors.Invalid) as refused:
        list_filters.parse_member_of(values, several=several, forbidden=forbidden)
    assert text in refused.value.detail


@pytest.mark.parametrize(("resources", "read"), [
    ({"VCPU": 1}, "VCPU"),
    ({"VCPU": 1, "MEMORY_MB": 512}, "VCPU"),  # the first named
    ({"MEMORY_MB": 512, "VCPU": 1}, "MEMORY_MB"),
    ({"VCPU": 1, "CUSTOM_GOLD": 1}, "CUSTOM_GOLD"),  # a custom class before any standard one
    ({"CUSTOM_B": 1, "VCPU": 1, "CUSTOM_A": 1}, "CUSTOM_B"),
])
def test_a_resources_list_reads_one_class_index_a_custom_one_first(resources, read):
    assert list_filters.indexed_class(resources) == read


def test_resources_parse_and_refusals():
    assert list_filters.parse_resources("VCPU:2,DISK_GB:10") == {"VCPU": 2, "DISK_GB": 10}
    for value, text in [("", "Got: empty string."), ("VCPU", "Got: VCPU."), ("DISK_GB:5,", "Got: ."),
                        ("VCPU:fred", "expected positive integer amount. Got: fred."),
                        ("VCPU:-2", "requires amount >= 1. Got: -2.")]:
        with pytest.raises(errors.Invalid) as refused:
            list_filters.parse_resources(value)
        assert text in refused.value.detail


@pytest.mark.parametrize(("amount", "room"), [(2, True), (6, True), (1, False), (12, False), (3, False),
                                               (8, False)])
def test_room_is_placements_capacity_rule(amount, room):
    inventory = Inventory(total=10, reserved=2, min_unit=2, max_unit=10, step_size=2, allocation_ratio=1.0)
    provider = Provider(uuid="p", name="p", inventories={"DISK_GB": inventory}, usages={"DISK_GB": 2})
    assert list_filters.has_room(provider, {"DISK_GB": amount}) is room
    assert not list_filters.has_room(provider, {"VCPU": 1})


def test_an_amount_of_max_unit_fits():
    inventory = Inventory(total=10, max_unit=4)
    provider = Provider(uuid="p", name="p", inventories={"VCPU": inventory})
    assert list_filters.has_room(provider, {"VCPU": 4}) and not list_filters.has_room(provider, {"VCPU": 5})
