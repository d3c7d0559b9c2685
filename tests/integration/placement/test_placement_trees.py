"""Nested providers and aggregates against DynamoDB Local, with real threads: a child never outlives its
parent, a moved subtree is never half moved, concurrent moves never make a cycle, generations hold."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.integration.placement.helpers import new_uuid, provider
from tests.integration.placement.test_placement_concurrency import run_threads

V = "1.39"


def create(placement: Any, parent: str | None = None, uuid: str | None = None) -> Any:
    uuid = uuid or new_uuid()  # named by its uuid, so that `move` renames nothing
    body: dict[str, Any] = {"name": uuid, "uuid": uuid, "parent_provider_uuid": parent}
    return placement.post("/placement/resource_providers", body, version=V)


def child(placement: Any, parent: str) -> str:
    answer = create(placement, parent)
    assert answer.status == 200, answer.body
    return answer.body["uuid"]


def move(placement: Any, uuid: str, parent: str | None) -> Any:
    return placement.put(f"/placement/resource_providers/{uuid}", {"name": uuid, "parent_provider_uuid": parent},
                         version=V)


def every_provider(placement: Any) -> dict[str, dict[str, Any]]:
    listed = placement.get("/placement/resource_providers", version=V).body["resource_providers"]
    return {p["uuid"]: p for p in listed}


def in_tree(placement: Any, uuid: str) -> set[str]:
    listed = placement.get(f"/placement/resource_providers?in_tree={uuid}", version=V).body["resource_providers"]
    return {p["uuid"] for p in listed}


def assert_consistent(placement: Any) -> None:
    """Every parent exists, every root is the end of the parent chain (no cycle), in_tree lists each tree."""
    providers = every_provider(placement)
    for uuid, shown in providers.items():
        seen, current = {uuid}, shown
        while current["parent_provider_uuid"] is not None:
            assert current["parent_provider_uuid"] in providers, f"{uuid} is orphaned"
            current = providers[current["parent_provider_uuid"]]
            assert current["uuid"] not in seen, f"cycle through {uuid}"
            seen.add(current["uuid"])
        assert shown["root_provider_uuid"] == current["uuid"]
    for root in {p["root_provider_uuid"] for p in providers.values()}:
        assert in_tree(placement, root) == {u for u, p in providers.items() if p["root_provider_uuid"] == root}


def test_children_racing_their_parents_delete_never_outlive_it(placement):
    for _ in range(4):
        parent = provider(placement)
        answers = run_threads(6, lambda i, p=parent: placement.delete(f"/placement/resource_providers/{p}", version=V)
                              if i == 0 else create(placement, p))
        deleted, children = answers[0], [a for a in answers[1:] if a.status == 200]
        assert deleted.status in (204, 409), deleted.body
        if deleted.status == 204:
            assert children == []
            for refused in answers[1:]:
                assert refused.status == 400
                assert "parent provider UUID does not exist." in refused.body["errors"][0]["detail"]
        else:
            assert children, "a 409 delete means a child was created first"
            assert deleted.body["errors"][0]["code"] == "placement.resource_provider.cannot_delete_parent"
            assert in_tree(placement, parent) == {parent} | {c.body["uuid"] for c in children}
    assert_consistent(placement)


def test_siblings_created_at_once_all_land_and_the_parent_counts_them(placement, services):
    from chalicelib.placement.store import PlacementStore

    parent = provider(placement)
    answers = run_threads(8, lambda _i: create(placement, parent))
    assert Counter(a.status for a in answers) == {200: 8}
    store = PlacementStore(services.client, services.table)
    read = store.provider(parent)
    assert read is not None and read.children == 8
    assert read.child_uuids == {a.body["uuid"] for a in answers}  # every sibling's uuid with the counter
    for answer in answers:  # the last child out lets the parent go
        assert placement.delete(f"/placement/resource_providers/{answer.body['uuid']}").status == 204
    assert store.provider(parent).child_uuids == frozenset()
    assert placement.delete(f"/placement/resource_providers/{parent}").status == 204


def test_a_moved_child_is_known_to_its_new_parent_only_and_a_parents_rewrite_keeps_its_children(placement, services):
    from chalicelib.placement.store import PlacementStore

    store = PlacementStore(services.client, services.table)
    old, new = provider(placement), provider(placement)
    moving, staying = child(placement, old), child(placement, old)
    assert move(placement, moving, new).status == 200
    assert store.provider(old).child_uuids == {staying} and store.provider(new).child_uuids == {moving}
    generation = placement.get(f"/placement/resource_providers/{new}", version=V).body["generation"]
    assert placement.put(f"/placement/resource_providers/{new}/inventories", {
        "resource_provider_generation": generation, "inventories": {"VCPU": {"total": 4}}}).status == 200
    assert store.provider(new).child_uuids == {moving}  # the whole item written again, its children kept
    assert move(placement, moving, None).status == 200
    assert store.provider(new).child_uuids == frozenset() and store.provider(new).children == 0


def test_a_subtree_moved_while_its_members_are_written_is_moved_whole(placement):
    root, other = provider(placement), provider(placement)
    middle = child(placement, root)
    leaf = provider(placement, VCPU={"total": 8})
    assert move(placement, leaf, middle).status == 200  # a root takes a parent (allowed before 1.37 too)

    def work(i: int) -> Any:
        if i == 0:
            return move(placement, middle, other)
        if i == 1:
            return create(placement, leaf)
        inventories = placement.get(f"/placement/resource_providers/{leaf}/inventories").body
        return placement.put(f"/placement/resource_providers/{leaf}/inventories",
                             {**inventories, "inventories": {"VCPU": {"total": 8 + i}}})

    answers = run_threads(4, work)
    assert answers[0].status == 200 and answers[1].status == 200, (answers[0].body, answers[1].body)
    assert {a.status for a in answers[2:]} <= {200, 409}
    grandchild = answers[1].body["uuid"]
    assert in_tree(placement, other) == {other, middle, leaf, grandchild}
    assert in_tree(placement, root) == {root}
    assert_consistent(placement)


def test_two_providers_moved_under_each_other_at_once_never_make_a_cycle(placement):
    for _ in range(4):
        root = provider(placement)
        a, b = child(placement, root), child(placement, root)
        answers = run_threads(2, lambda i, a=a, b=b: move(placement, a, b) if i == 0 else move(placement, b, a))
        statuses = sorted(x.status for x in answers)
        assert statuses in ([200, 400], [200, 409]), [x.body for x in answers]
        assert_consistent(placement)


def test_moving_a_subtree_beyond_the_transaction_limit_is_a_400_that_changes_nothing(placement):
    root, other = provider(placement), provider(placement)
    top = child(placement, root)  # a move of it writes itself, both parents and each descendant
    run_threads(8, lambda _i: [child(placement, top) for _ in range(12)])
    child(placement, top)  # 97 descendants: the most a move takes
    assert move(placement, top, other).status == 200
    child(placement, top)  # the 98th
    refused = move(placement, top, root)
    assert refused.status == 400, refused.body
    assert "limit is 100" in refused.body["errors"][0]["detail"]
    assert len(in_tree(placement, other)) == 100 and in_tree(placement, root) == {root}


def test_aggregates_put_at_one_generation_once(placement):
    rp = provider(placement)
    aggregates = [new_uuid() for _ in range(3)]
    answers = run_threads(5, lambda i: placement.put(
        f"/placement/resource_providers/{rp}/aggregates",
        {"aggregates": aggregates[: 1 + i % 3], "resource_provider_generation": 0}, version=V))
    assert Counter(a.status for a in answers) == {200: 1, 409: 4}
    won = next(a for a in answers if a.status == 200).body
    shown = placement.get(f"/placement/resource_providers/{rp}/aggregates", version=V).body
    assert sorted(shown["aggregates"]) == sorted(won["aggregates"]) and shown["resource_provider_generation"] == 1
    for aggregate in aggregates:  # the membership index says what the provider says
        listed = placement.get(f"/placement/resource_providers?member_of={aggregate}", version=V).body
        assert ([p["uuid"] for p in listed["resource_providers"]] == [rp]) is (aggregate in won["aggregates"])


def test_a_deleted_provider_leaves_no_aggregate_membership(placement):
    rp, aggregate = provider(placement), new_uuid()
    assert placement.put(f"/placement/resource_providers/{rp}/aggregates",
                         {"aggregates": [aggregate], "resource_provider_generation": 0}, version=V).status == 200
    assert placement.delete(f"/placement/resource_providers/{rp}").status == 204
    listed = placement.get(f"/placement/resource_providers?member_of={aggregate}", version=V).body
    assert listed["resource_providers"] == []


def test_a_class_held_in_an_inventory_is_not_renamed(placement):
    assert placement.post("/placement/resource_classes", {"name": "CUSTOM_HELD"}, version="1.2").status == 201
    rp = provider(placement, CUSTOM_HELD={"total": 1})
    refused = placement.put("/placement/resource_classes/CUSTOM_HELD", {"name": "CUSTOM_FREE"}, version="1.6")
    assert refused.status == 409 and "in use" in refused.body["errors"][0]["detail"]
    assert placement.post("/placement/resource_classes", {"name": "CUSTOM_TAKEN"}, version="1.2").status == 201
    taken = placement.put("/placement/resource_classes/CUSTOM_HELD", {"name": "CUSTOM_TAKEN"}, version="1.6")
    assert taken.status == 409  # upstream's answer when both hold: the name is taken
    assert taken.body["errors"][0]["detail"].endswith("Resource class already exists: CUSTOM_TAKEN  ")
    assert placement.delete(f"/placement/resource_providers/{rp}").status == 204
    renamed = placement.put("/placement/resource_classes/CUSTOM_HELD", {"name": "CUSTOM_FREE"}, version="1.6")
    assert renamed.status == 200 and renamed.body["name"] == "CUSTOM_FREE"
    assert placement.get("/placement/resource_classes/CUSTOM_HELD", version="1.6").status == 404


def test_a_tree_written_before_children_were_named_is_still_listed_and_searched_whole(placement, services):
    """A parent item without `kids` (as written before they were kept): in_tree and the candidate search
    read its tree through the index instead."""
    root = provider(placement, VCPU={"total": 8})
    kid = child(placement, root)
    services.client.update_item(TableName=services.table, Key={"pk": {"S": f"PLRP#{root}"}, "sk": {"S": "-"}},
                                UpdateExpression="REMOVE kids")
    assert in_tree(placement, root) == {root, kid}
    answer = placement.get(f"/placement/allocation_candidates?resources=VCPU:1&in_tree={root}", version=V)
    assert set(answer.body["provider_summaries"]) == {root, kid}
