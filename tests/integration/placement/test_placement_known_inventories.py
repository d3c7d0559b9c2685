"""Claims for new consumers on inventories a process has read before (decision 0050): one transaction, no
read, and never a write a fresh read would have refused. "Another process" is a second set of services on
the same table (its own known inventories), as two Lambda instances are; DynamoDB Local, real threads."""

from __future__ import annotations

from collections import Counter
from typing import Any

from chalicelib.placement.errors import PlacementError
from chalicelib.placement.models import ConsumerWrite
from tests.integration.placement.conftest import serving
from tests.integration.placement.helpers import PROJECT, USER, claim, new_uuid, provider, set_inventory_total
from tests.integration.placement.test_placement_concurrency import run_threads
from tests.integration.placement.test_placement_round_trips import trips

V = "1.39"


def usage(placement: Any, rp: str, rc: str = "VCPU") -> int:
    return int(placement.get(f"/placement/resource_providers/{rp}/usages", version=V).body["usages"].get(rc, 0))


def test_a_claim_on_a_provider_the_process_has_read_is_one_transaction(placement, services):
    rp = provider(placement, VCPU={"total": 8})
    _, first = trips(services, lambda: claim(placement, new_uuid(), {rp: {"VCPU": 1}}))
    answer, second = trips(services, lambda: claim(placement, new_uuid(), {rp: {"VCPU": 2}}))
    assert first == {"BatchGetItem": 1, "TransactWriteItems": 1}
    assert answer.status == 204 and second == {"TransactWriteItems": 1}
    assert usage(placement, rp) == 3
    assert placement.get(f"/placement/resource_providers/{rp}", version=V).body["generation"] == 3
    # the counters of the project and the consumer count moved in that transaction too
    usages = placement.get(f"/placement/usages?project_id={PROJECT}", version="1.28").body["usages"]
    assert usages["VCPU"] == 3


def test_a_consumer_that_may_exist_is_read_first(placement, services):
    """Only `consumer_generation: null` says the consumer is new; a sent generation is checked on a read."""
    rp = provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    assert claim(placement, consumer, {rp: {"VCPU": 1}}).status == 204
    answer, calls = trips(services, lambda: claim(placement, consumer, {rp: {"VCPU": 2}}, generation=1))
    assert answer.status == 204 and calls == {"BatchGetItem": 1, "TransactWriteItems": 1}


def test_a_consumer_made_by_another_process_is_refused_as_a_read_would_refuse_it(placement, services, other):
    rp = provider(placement, VCPU={"total": 8})
    assert claim(placement, new_uuid(), {rp: {"VCPU": 1}}).status == 204  # this process knows rp now
    consumer = new_uuid()
    with serving(other, services):
        assert claim(placement, consumer, {rp: {"VCPU": 2}}).status == 204
    answer, calls = trips(services, lambda: claim(placement, consumer, {rp: {"VCPU": 5}}))
    assert answer.status == 409 and answer.body["errors"][0]["code"] == "placement.concurrent_update"
    assert "consumer generation conflict" in answer.body["errors"][0]["detail"]
    assert calls == {"TransactWriteItems": 1, "BatchGetItem": 1}  # the canceled claim, then the read
    allocations = placement.get(f"/placement/allocations/{consumer}", version=V).body["allocations"]
    assert allocations[rp]["resources"] == {"VCPU": 2}
    assert usage(placement, rp) == 3


def test_an_inventory_shrunk_by_another_process_is_claimed_on_as_it_is_now(placement, services, other):
    rp = provider(placement, VCPU={"total": 8})
    assert claim(placement, new_uuid(), {rp: {"VCPU": 1}}).status == 204  # known: total 8
    with serving(other, services):
        assert set_inventory_total(placement, rp, "VCPU", 2).status == 200
    refused = claim(placement, new_uuid(), {rp: {"VCPU": 4}})
    assert refused.status == 409 and "exceed" in refused.body["errors"][0]["detail"].lower()
    assert usage(placement, rp) == 1
    answer, calls = trips(services, lambda: claim(placement, new_uuid(), {rp: {"VCPU": 1}}))
    assert answer.status == 204 and calls == {"TransactWriteItems": 1}  # known again, as read for the refusal
    assert usage(placement, rp) == 2


def test_a_provider_made_again_under_its_uuid_is_not_taken_for_the_one_known(placement, services, other):
    """Made again, its inventory version starts over (here: 1 both times); its creation stamp tells them apart."""
    rp = provider(placement, VCPU={"total": 8})
    first = new_uuid()
    assert claim(placement, first, {rp: {"VCPU": 1}}).status == 204  # known: total 8, inventory version 1
    with serving(other, services):
        assert placement.delete(f"/placement/allocations/{first}", version=V).status == 204
        assert placement.delete(f"/placement/resource_providers/{rp}", version=V).status == 204
        assert placement.post("/placement/resource_providers", {"name": new_uuid(), "uuid": rp},
                              version=V).status == 200
        assert placement.put(f"/placement/resource_providers/{rp}/inventories",
                             {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 2}}},
                             version=V).status == 200
    refused = claim(placement, new_uuid(), {rp: {"VCPU": 4}})
    assert refused.status == 409 and usage(placement, rp) == 0


def test_a_provider_at_capacity_refuses_as_after_a_read(placement, services):
    rp = provider(placement, VCPU={"total": 2})
    assert claim(placement, new_uuid(), {rp: {"VCPU": 1}}).status == 204
    assert claim(placement, new_uuid(), {rp: {"VCPU": 1}}).status == 204
    consumer = new_uuid()
    refused = claim(placement, consumer, {rp: {"VCPU": 1}})
    assert refused.status == 409
    assert refused.body["errors"][0]["detail"].strip().endswith(
        f"Unable to allocate inventory: Unable to create allocation for 'VCPU' on resource provider '{rp}'. "
        "The requested amount would exceed the capacity.")
    assert placement.get(f"/placement/allocations/{consumer}", version=V).body["allocations"] == {}
    assert usage(placement, rp) == 2


def test_a_class_the_known_inventory_lacks_is_read_and_refused_with_placements_words(placement, services):
    rp = provider(placement, VCPU={"total": 8})
    assert claim(placement, new_uuid(), {rp: {"VCPU": 1}}).status == 204
    answer, calls = trips(services, lambda: claim(placement, new_uuid(), {rp: {"DISK_GB": 1}}))
    assert answer.status == 409 and calls["BatchGetItem"] == 1 and "TransactWriteItems" not in calls
    assert "DISK_GB" in answer.body["errors"][0]["detail"]


def test_no_inventories_kept_means_every_claim_reads(placement, services, other, monkeypatch):
    monkeypatch.setenv("RP_PLACEMENT_KNOWN_INVENTORIES", "0")  # read when `other` builds its Placement service
    with serving(other, services):
        rp = provider(placement, VCPU={"total": 8})
        for _ in range(2):
            answer, calls = trips(other, lambda: claim(placement, new_uuid(), {rp: {"VCPU": 1}}))
            assert answer.status == 204 and calls == {"BatchGetItem": 1, "TransactWriteItems": 1}


def test_two_processes_racing_on_known_inventories_never_over_commit(placement, services, other):
    """8 threads, half in each process, 4 claims of 1 each for new consumers, on a provider both processes
    know with room for 20 of which 2 are held: exactly 18 claims succeed, the rest are refused for capacity,
    and the provider holds what its allocations add up to."""
    rp = provider(placement, VCPU={"total": 20})
    for process in (services, other):  # both know the provider
        process.placement.write_allocations([_new_consumer(rp)], single=True)

    def work(i: int) -> list[str]:
        process = (services, other)[i % 2]
        outcomes = []
        for _ in range(4):
            try:
                process.placement.write_allocations([_new_consumer(rp)], single=True)
                outcomes.append("claimed")
            except PlacementError as refused:
                outcomes.append(type(refused).__name__)
        return outcomes

    tried = Counter(o for outcomes in run_threads(8, work) for o in outcomes)
    assert tried == {"claimed": 18, "CapacityExceeded": 14}, tried
    assert usage(placement, rp) == 20
    allocations = placement.get(f"/placement/resource_providers/{rp}/allocations", version=V).body["allocations"]
    assert len(allocations) == 20 and sum(a["resources"]["VCPU"] for a in allocations.values()) == 20


def _new_consumer(rp: str) -> ConsumerWrite:
    return ConsumerWrite(uuid=new_uuid(), project_id=PROJECT, user_id=USER, allocations={rp: {"VCPU": 1}},
                         check_generation=True)
