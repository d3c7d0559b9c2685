"""Real threads against DynamoDB Local: claims never over-commit, generations never lose an update."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from tests.integration.placement.helpers import PROJECT, USER, claim, new_uuid, provider


def run_threads(n: int, work) -> list:
    results: list = [None] * n
    start = threading.Barrier(n)

    def body(i: int) -> None:
        start.wait()
        results[i] = work(i)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.parametrize(("threads", "room"), [(12, 5), (6, 10)])
def test_n_threads_claiming_room_for_c_succeed_exactly_min_n_c(placement, threads, room):
    rp = provider(placement, VCPU={"total": room})
    answers = run_threads(threads, lambda _i: claim(placement, new_uuid(), {rp: {"VCPU": 1}}))
    statuses = Counter(a.status for a in answers)
    assert statuses[204] == min(threads, room), statuses
    assert set(statuses) <= {204, 409}
    for answer in answers:  # a refusal is "no capacity", never a lost race passed on to the caller
        if answer.status == 409:
            assert "would exceed the capacity" in answer.body["errors"][0]["detail"]
    usages = placement.get(f"/placement/resource_providers/{rp}/usages").body
    assert usages["usages"] == {"VCPU": min(threads, room)}
    allocations = placement.get(f"/placement/resource_providers/{rp}/allocations").body["allocations"]
    assert len(allocations) == min(threads, room)
    # each successful write moved the provider's generation once (+1 for the inventory)
    assert usages["resource_provider_generation"] == 1 + min(threads, room)


def test_racing_writers_of_one_consumer_generation_one_wins(placement):
    rp = provider(placement, VCPU={"total": 100})
    consumer = new_uuid()
    assert claim(placement, consumer, {rp: {"VCPU": 1}}).status == 204
    answers = run_threads(6, lambda i: claim(placement, consumer, {rp: {"VCPU": i + 2}}, generation=1))
    statuses = Counter(a.status for a in answers)
    assert statuses == {204: 1, 409: 5}
    for answer in answers:
        if answer.status == 409:
            assert answer.body["errors"][0]["detail"].strip().endswith("expected 2 but got 1")
    shown = placement.get(f"/placement/allocations/{consumer}", version="1.28").body
    assert shown["consumer_generation"] == 2
    assert placement.get(f"/placement/resource_providers/{rp}/usages").body["usages"]["VCPU"] == (
        shown["allocations"][rp]["resources"]["VCPU"])


def test_a_race_lost_every_time_ends_in_409_concurrent_update_after_bounded_retries(placement, services):
    """Another writer changes the provider's inventory before each of our transactions: every attempt's
    inventory condition fails, the write is retried a bounded number of times, then refused as a
    concurrent update, and nothing of it is applied."""
    from chalicelib.placement.models import Inventory
    from chalicelib.placement.service import RETRIES
    from chalicelib.placement.store import PlacementStore
    from chalicelib.store.client import make_client

    rp = provider(placement, VCPU={"total": 4})
    other = PlacementStore(make_client(services.settings), services.table)
    attempts: list[int] = []

    def race(**_):
        attempts.append(1)
        read = other.provider(rp)
        other.write_inventories(read, {"VCPU": Inventory(total=4 + len(attempts))})

    services.client.meta.events.register("before-send.dynamodb.TransactWriteItems", race)
    try:
        answer = placement.put(f"/placement/allocations/{new_uuid()}", {
            "allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": "p", "user_id": "u",
            "consumer_generation": None}, version="1.28")
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", race)
    assert answer.status == 409 and answer.body["errors"][0]["code"] == "placement.concurrent_update"
    assert len(attempts) == RETRIES
    assert placement.get(f"/placement/resource_providers/{rp}/usages").body["usages"] == {"VCPU": 0}


def test_racing_writers_of_one_project_lose_no_usage_of_any_type(placement):
    """Every writer of a project moves its owner's one usage item (every type's counters and its type's,
    decision 0049): concurrent ADDs in transactions that meet on it, retried, count each write once."""
    providers = [provider(placement, VCPU={"total": 10}) for _ in range(2)]
    types = ["INSTANCE", "MIGRATION"]

    def write(i: int) -> int:
        body = {"allocations": {providers[i % 2]: {"resources": {"VCPU": 1}}}, "project_id": PROJECT,
                "user_id": USER, "consumer_generation": None, "consumer_type": types[i % 2]}
        return placement.put(f"/placement/allocations/{new_uuid()}", body, version="1.38").status

    assert run_threads(8, write) == [204] * 8
    usages = placement.get(f"/placement/usages?project_id={PROJECT}&user_id={USER}", version="1.38").body
    assert usages["usages"] == {kind: {"VCPU": 4, "consumer_count": 4} for kind in types}
    every = placement.get(f"/placement/usages?project_id={PROJECT}&consumer_type=all", version="1.38").body
    assert every["usages"] == {"all": {"VCPU": 8, "consumer_count": 8}}
