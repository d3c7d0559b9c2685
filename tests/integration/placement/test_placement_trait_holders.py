"""Custom traits' holder items on DynamoDB Local (decision 0053): a provider list by a required custom trait
reads the providers its `PLTRH#` items name and checks each on the provider's own traits; items beyond one
transaction go ahead of it and come off after it (decision 0047), so a failure between leaves only hints."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.placement import items
from chalicelib.store.ops import update_if
from tests.integration.placement.helpers import new_uuid, provider
from tests.integration.placement.test_placement_concurrency import run_threads
from tests.integration.placement.test_placement_round_trips import trips

V = "1.18"


def _trait(placement: Any, label: str) -> str:
    name = f"CUSTOM_{label}_{new_uuid()[:8].upper()}"
    assert placement.put(f"/placement/traits/{name}", version="1.6").status == 201
    return name


def _set(placement: Any, rp: str, traits: list[str], generation: int) -> Any:
    return placement.put(f"/placement/resource_providers/{rp}/traits",
                         {"traits": traits, "resource_provider_generation": generation}, version="1.6")


def _listed(placement: Any, required: str) -> set[str]:
    answer = placement.get(f"/placement/resource_providers?required={required}", version=V)
    assert answer.status == 200, answer.body
    return {p["uuid"] for p in answer.body["resource_providers"]}


def _holder_items(services: Any, name: str) -> set[str]:
    """The provider uuids the trait's holder items name (what is stored, hints included)."""
    found = services.client.query(TableName=services.settings.table_name, KeyConditionExpression="pk = :pk",
                                  ExpressionAttributeValues={":pk": {"S": f"PLTRH#{name}"}})
    return {item["sk"]["S"] for item in found["Items"]}


def _delete_holder_item(services: Any, name: str, rp: str) -> None:
    services.client.delete_item(TableName=services.settings.table_name, Key=items.TRAIT_HOLDERS.key(name, rp))


def test_a_required_custom_trait_is_listed_from_its_holder_items(placement, services):
    name, other = _trait(placement, "HELD"), _trait(placement, "OTHER")
    holders = [provider(placement) for _ in range(3)]
    rest = [provider(placement) for _ in range(2)]
    for rp in holders:
        assert _set(placement, rp, [name, other], 0).status == 200
    for rp in rest:
        assert _set(placement, rp, [other], 0).status == 200
    assert _holder_items(services, name) == set(holders) and _listed(placement, name) == set(holders)
    assert _listed(placement, f"{name},{other}") == set(holders)

    assert _set(placement, holders[0], [other], 1).status == 200  # it lets the trait go: its item goes too
    assert _holder_items(services, name) == set(holders[1:]) == _listed(placement, name)
    # What the list reads is the items: a holder whose item is gone is not read (the invariant kept above).
    _delete_holder_item(services, name, holders[1])
    assert _listed(placement, name) == {holders[2]}


def test_a_holder_item_naming_a_provider_that_lacks_the_trait_is_dropped(placement, services):
    name = _trait(placement, "HINT")
    holder, stranger = provider(placement), provider(placement)
    assert _set(placement, holder, [name], 0).status == 200
    read = services.placement.store.provider(stranger)
    # an item left ahead of a transaction that failed (decision 0047): a hint, checked on the provider
    assert update_if(services.client, services.settings.table_name,
                     **items.member_raise(name, read, read.version + 1, items.TRAIT_HOLDERS))
    assert _holder_items(services, name) == {holder, stranger}
    assert _listed(placement, name) == {holder}


def test_a_trait_made_before_its_holders_were_indexed_is_listed_from_every_provider(placement, services):
    name = _trait(placement, "OLD")
    holder = provider(placement)
    assert _set(placement, holder, [name], 0).status == 200
    # As a trait registered before decision 0053: no `holders` mark on its item, no holder items.
    services.client.update_item(TableName=services.settings.table_name, Key=items.trait_key(name),
                                UpdateExpression=f"REMOVE {items.HOLDERS_INDEXED}")
    _delete_holder_item(services, name, holder)
    assert _listed(placement, name) == {holder}


def test_a_list_by_an_indexed_trait_reads_no_other_provider(placement, services):
    name = _trait(placement, "FEW")
    holder = provider(placement)
    assert _set(placement, holder, [name], 0).status == 200
    answer, calls = trips(services, lambda: placement.get(f"/placement/resource_providers?required={name}",
                                                          version=V))
    assert answer.status == 200 and [p["uuid"] for p in answer.body["resource_providers"]] == [holder]
    # the trait's registry item, its holder items, its one holder: no Query of every provider (gsi1)
    assert calls == {"GetItem": 2, "Query": 1}  # one key each: a GetItem


def test_sixty_four_custom_traits_go_ahead_of_the_transaction_and_come_off_after_it(placement, services):
    names = [_trait(placement, f"MANY{i}") for i in range(items.MAX_CUSTOM_TRAITS)]
    rp = provider(placement)
    answer, calls = trips(services, lambda: _set(placement, rp, names, 0))
    assert answer.status == 200, answer.body
    # 1 + 64 refs fit in the transaction; the 64 holder items do not: each is written ahead
    assert calls == {"GetItem": 1, "UpdateItem": 64, "TransactWriteItems": 1}
    assert all(_holder_items(services, n) == {rp} for n in names)
    assert _listed(placement, names[0]) == {rp} == _listed(placement, names[-1])

    answer, calls = trips(services, lambda: _set(placement, rp, names[:10], 1))
    assert answer.status == 200
    assert calls == {"GetItem": 1, "TransactWriteItems": 1, "DeleteItem": 54}
    assert all(_holder_items(services, n) == set() for n in names[10:])
    assert all(_holder_items(services, n) == {rp} for n in names[:10])

    assert _set(placement, rp, names, 2).status == 200
    assert placement.delete(f"/placement/resource_providers/{rp}", version=V).status == 204
    assert all(_holder_items(services, n) == set() for n in names)


@pytest.mark.parametrize("sizes", [(60, 2), (3, 60)], ids=["large-small", "small-large"])
def test_large_and_small_trait_writes_racing_keep_every_holder_item_of_the_winner(placement, services, sizes):
    pool = [_trait(placement, f"RACE{i}") for i in range(63)]
    rp = provider(placement)
    sets = [pool[i * 3:i * 3 + sizes[i % 2]] if sizes[i % 2] < 10 else pool[:sizes[i % 2]] for i in range(6)]

    def work(i: int) -> int:
        for _ in range(50):
            generation = placement.get(f"/placement/resource_providers/{rp}/traits",
                                       version="1.6").body["resource_provider_generation"]
            status = int(_set(placement, rp, sets[i], generation).status)
            if status != 409:
                return status
        return 409

    assert run_threads(6, work) == [200] * 6
    final = sorted(placement.get(f"/placement/resource_providers/{rp}/traits", version="1.6").body["traits"])
    assert final in [sorted(s) for s in sets]  # one writer's whole set
    assert all(rp in _holder_items(services, n) for n in final)  # each holder has its item
    assert all(_listed(placement, n) == {rp} for n in final[:3])
    losers = {n for s in sets for n in s} - set(final)
    assert all(rp not in _listed(placement, n) for n in sorted(losers)[:5])
