"""Round trips of Placement writes, counted at botocore's send hook (not by reading code)."""

from __future__ import annotations

from tests.integration.placement.helpers import PROJECT, USER, claim, new_uuid, provider


def trips(services, fn):
    services.round_trips.reset()
    answer = fn()
    return answer, dict(services.round_trips.calls)


def test_an_allocation_write_over_k_providers_is_one_batch_get_and_one_transaction(placement, services):
    rps = [provider(placement, VCPU={"total": 8}, DISK_GB={"total": 100}) for _ in range(3)]
    wanted = {rp: {"VCPU": 1, "DISK_GB": 10} for rp in rps}
    answer, calls = trips(services, lambda: claim(placement, new_uuid(), wanted))
    assert answer.status == 204
    assert calls == {"BatchGetItem": 1, "TransactWriteItems": 1}


def test_moving_and_replacing_a_consumer_still_costs_two(placement, services):
    a, b = provider(placement, VCPU={"total": 8}), provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    assert claim(placement, consumer, {a: {"VCPU": 2}}).status == 204
    answer, calls = trips(services, lambda: claim(placement, consumer, {b: {"VCPU": 2}}, generation=1))
    assert answer.status == 204 and calls == {"BatchGetItem": 1, "TransactWriteItems": 1}
    assert placement.get(f"/placement/resource_providers/{a}/usages").body["usages"] == {"VCPU": 0}
    # the old provider's generation did not move (Placement moves only providers in the new set)
    assert placement.get(f"/placement/resource_providers/{a}").body["generation"] == 2


def test_post_allocations_for_many_consumers_is_two_round_trips(placement, services):
    rp = provider(placement, VCPU={"total": 100})
    body = {new_uuid(): {"allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": PROJECT, "user_id": USER,
                         "consumer_generation": None} for _ in range(10)}
    answer, calls = trips(services, lambda: placement.post("/placement/allocations", body, version="1.28"))
    assert answer.status == 204 and calls == {"BatchGetItem": 1, "TransactWriteItems": 1}


def test_reads_cost_at_most_two(placement, services):
    rp = provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    claim(placement, consumer, {rp: {"VCPU": 1}})
    for path, budget in ((f"/placement/allocations/{consumer}", 2), (f"/placement/resource_providers/{rp}/usages", 1),
                         (f"/placement/usages?project_id={PROJECT}", 1),
                         (f"/placement/resource_providers/{rp}/allocations", 1)):
        answer, calls = trips(services, lambda p=path: placement.get(p, version="1.28"))
        assert answer.status == 200 and sum(calls.values()) <= budget, (path, calls)
