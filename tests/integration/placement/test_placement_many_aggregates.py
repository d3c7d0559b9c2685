"""A provider in more aggregates than one transaction holds (decision 0047): the membership items are
written before the provider's transaction and deleted after it, each conditioned so that none a later write
needs goes; readers check every item on the provider's own aggregates, so a failure between leaves only
hints that count for nothing."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.placement import items
from chalicelib.placement.models import Provider
from chalicelib.store.ops import ConditionFailed, delete_if, update_if
from tests.integration.placement.helpers import new_uuid, provider
from tests.integration.placement.test_placement_concurrency import run_threads
from tests.integration.placement.test_placement_round_trips import trips
from tests.support.faults import failing

V = "1.19"


def _set(placement: Any, rp: str, aggregates: list[str], generation: int) -> Any:
    return placement.put(f"/placement/resource_providers/{rp}/aggregates",
                         {"aggregates": aggregates, "resource_provider_generation": generation}, version=V)


def _members(services: Any, aggregate: str) -> set[str]:
    """The provider uuids the aggregate's membership items name (what is stored, hints included)."""
    found = services.client.query(TableName=services.settings.table_name, KeyConditionExpression="pk = :pk",
                                  ExpressionAttributeValues={":pk": {"S": f"PLAGG#{aggregate}"}})
    return {item["sk"]["S"] for item in found["Items"]}


def _listed(placement: Any, aggregate: str) -> list[str]:
    answer = placement.get(f"/placement/resource_providers?member_of={aggregate}", version="1.3")
    assert answer.status == 200, answer.body
    return [p["uuid"] for p in answer.body["resource_providers"]]


def test_a_provider_joins_and_leaves_a_hundred_aggregates(placement, services):
    """osc-placement's own functional test sets 100 aggregates at once (test_success_set_large_number_aggregates)."""
    rp = provider(placement)
    many = sorted(new_uuid() for _ in range(150))
    answer, calls = trips(services, lambda: _set(placement, rp, many, 0))
    assert answer.status == 200, answer.body
    assert sorted(answer.body["aggregates"]) == many and answer.body["resource_provider_generation"] == 1
    assert calls == {"GetItem": 1, "UpdateItem": 150, "TransactWriteItems": 1}
    assert all(_members(services, a) == {rp} for a in many)
    assert _listed(placement, many[0]) == [rp] and _listed(placement, many[-1]) == [rp]

    kept = many[:40]
    answer, calls = trips(services, lambda: _set(placement, rp, kept, 1))
    assert answer.status == 200 and sorted(answer.body["aggregates"]) == kept
    assert calls == {"GetItem": 1, "TransactWriteItems": 1, "DeleteItem": 110}
    assert all(_members(services, a) == set() for a in many[40:])
    assert all(_members(services, a) == {rp} for a in kept)

    answer, calls = trips(services, lambda: _set(placement, rp, [], 2))
    assert answer.status == 200 and answer.body["aggregates"] == []
    assert calls == {"GetItem": 1, "TransactWriteItems": 1}  # 41 items: one transaction again
    assert all(_members(services, a) == set() for a in kept)


def test_a_provider_in_many_aggregates_is_deleted_and_leaves_no_membership(placement, services):
    rp = provider(placement)
    many = sorted(new_uuid() for _ in range(120))
    assert _set(placement, rp, many, 0).status == 200
    answer, calls = trips(services, lambda: placement.delete(f"/placement/resource_providers/{rp}"))
    assert answer.status == 204
    assert calls == {"GetItem": 1, "TransactWriteItems": 1, "DeleteItem": 120}
    assert all(_members(services, a) == set() for a in many)


def test_a_thousand_and_one_aggregates_are_refused(placement):
    rp = provider(placement)
    answer = _set(placement, rp, [new_uuid() for _ in range(items.MAX_AGGREGATES + 1)], 0)
    assert answer.status == 400, answer.body
    assert placement.get(f"/placement/resource_providers/{rp}/aggregates", version=V).body["aggregates"] == []


def test_a_write_whose_transaction_fails_changes_nothing_and_its_items_count_for_nothing(placement, services):
    rp = provider(placement)
    before = sorted(new_uuid() for _ in range(3))
    assert _set(placement, rp, before, 0).status == 200
    many = sorted(new_uuid() for _ in range(120))
    with failing(services.client, "TransactWriteItems"):
        answer, calls = trips(services, lambda: _set(placement, rp, many, 1))
    assert answer.status == 503
    # nothing committed since its read: a writer that read it too may need the items ahead, so they stay
    assert calls["GetItem"] == 2 and calls["UpdateItem"] == 120 and "DeleteItem" not in calls
    shown = placement.get(f"/placement/resource_providers/{rp}/aggregates", version=V).body
    assert sorted(shown["aggregates"]) == before and shown["resource_provider_generation"] == 1
    assert _members(services, many[0]) == {rp}  # written ahead of the transaction: a hint left behind
    assert _listed(placement, many[0]) == []  # that readers drop on the provider's own aggregates
    assert _listed(placement, before[0]) == [rp]
    # an unknown class after a member_of nobody is in: upstream's empty list, the hint notwithstanding
    assert placement.get(f"/placement/resource_providers?member_of={many[0]}&resources=CUSTOM_NO:1",
                         version="1.4").body == {"resource_providers": []}
    answer = placement.get(f"/placement/allocation_candidates?resources=VCPU:1&member_of={many[0]}"
                           "&required=CUSTOM_NOT_A_TRAIT", version="1.21")
    assert answer.status == 200 and answer.body["allocation_requests"] == []
    assert _set(placement, rp, many, 1).status == 200  # the same write again succeeds
    assert _listed(placement, many[0]) == [rp]


def test_a_write_refused_by_a_concurrent_one_withdraws_only_what_the_winner_lacks(placement, services):
    """The loser's items ahead go, but those the committed winner holds, which it needs (decision 0047)."""
    rp = provider(placement)
    shared, loser_only = sorted(new_uuid() for _ in range(60)), sorted(new_uuid() for _ in range(60))
    read = services.placement.store.provider(rp)
    assert _set(placement, rp, shared, 0).status == 200  # the winner commits after the loser's read
    with pytest.raises(ConditionFailed):
        services.placement.store.write_aggregates(read, frozenset(shared + loser_only), bump_generation=True)
    assert all(_members(services, a) == set() for a in loser_only)
    assert all(_members(services, a) == {rp} for a in shared)
    assert sorted(_listed(placement, shared[0])) == [rp]


def test_a_clean_up_that_fails_leaves_the_write_standing(placement, services):
    rp = provider(placement)
    many = sorted(new_uuid() for _ in range(120))
    assert _set(placement, rp, many, 0).status == 200
    with failing(services.client, "DeleteItem", skip=5):
        answer = _set(placement, rp, many[:1], 1)
    assert answer.status == 200 and answer.body["aggregates"] == many[:1]  # committed: it says so
    assert _members(services, many[-1]) == {rp} and _listed(placement, many[-1]) == []
    assert _listed(placement, many[0]) == [rp]


def test_the_conditions_never_let_a_clean_up_remove_a_membership_a_later_write_needs(services):
    """On DynamoDB Local: an item is raised, never lowered, within an incarnation, and a clean-up removes only
    one written for its version or before, of its incarnation."""
    client, table = services.client, services.settings.table_name
    rp, aggregate = Provider(uuid=new_uuid(), name="x", created_at=1000), new_uuid()

    def version() -> int | None:
        found = client.get_item(TableName=table, Key=items.aggregate_member_key(aggregate, rp.uuid)).get("Item")
        return int(found["v"]["N"]) if found else None

    assert update_if(client, table, **items.member_raise(aggregate, rp, 10))
    assert not update_if(client, table, **items.member_raise(aggregate, rp, 5))  # a slow, stale writer
    assert version() == 10
    assert not delete_if(client, table, **items.member_release(aggregate, rp, 9))  # written for a later one
    later = Provider(**{**rp.__dict__, "created_at": 2000})  # deleted and created again with the same uuid
    assert update_if(client, table, **items.member_raise(aggregate, later, 1))
    assert not delete_if(client, table, **items.member_release(aggregate, rp, None))  # not its incarnation
    assert not delete_if(client, table, **items.member_release(aggregate, later, 0))
    assert version() == 1
    assert delete_if(client, table, **items.member_release(aggregate, later, 1))
    assert version() is None


@pytest.mark.parametrize("sizes", [(120, 2), (3, 130)], ids=["large-small", "small-large"])
def test_large_and_small_writes_racing_keep_every_membership_of_the_winner(placement, services, sizes):
    rp = provider(placement)
    sets = [sorted(new_uuid() for _ in range(sizes[i % 2])) for i in range(6)]

    def work(i: int) -> int:
        for _ in range(50):
            generation = placement.get(f"/placement/resource_providers/{rp}/aggregates",
                                       version=V).body["resource_provider_generation"]
            status = int(_set(placement, rp, sets[i], generation).status)
            if status != 409:
                return status
        return 409

    assert run_threads(6, work) == [200] * 6
    final = sorted(placement.get(f"/placement/resource_providers/{rp}/aggregates", version=V).body["aggregates"])
    assert final in sets  # one writer's whole set
    assert all(rp in _members(services, a) for a in final)  # each membership has its item
    assert all(_listed(placement, a) == [rp] for a in final[:3])
    losers = {a for s in sets for a in s} - set(final)
    assert all(_listed(placement, a) == [] for a in sorted(losers)[:5])


def test_a_write_to_a_provider_deleted_since_its_read_withdraws_every_item_ahead(placement, services):
    rp = provider(placement)
    many = sorted(new_uuid() for _ in range(120))
    read = services.placement.store.provider(rp)
    assert placement.delete(f"/placement/resource_providers/{rp}").status == 204
    with pytest.raises(ConditionFailed):
        services.placement.store.write_aggregates(read, frozenset(many), bump_generation=True)
    assert all(_members(services, a) == set() for a in many)


def test_a_failed_write_that_wrote_nothing_ahead_reads_nothing_more(placement, services):
    rp = provider(placement)
    many = sorted(new_uuid() for _ in range(120))
    assert _set(placement, rp, many, 0).status == 200
    with failing(services.client, "TransactWriteItems"):
        answer, calls = trips(services, lambda: _set(placement, rp, [], 1))  # 121 items: too many for one
    assert answer.status == 503
    assert calls["GetItem"] == 1 and "UpdateItem" not in calls and "DeleteItem" not in calls
    assert all(_members(services, a) == {rp} for a in many)
