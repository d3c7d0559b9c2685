"""The reshaper's protocol (docs/decisions/0041-reshaper-protocol.md) against the store: interrupted at every
step (the store's answer cut on the wire), readers see the old or the new state and never a mix, writers meet
the fence (409 while its owner holds it), and the next request finishes or rolls it back; a tree with 500
consumers reshapes.

The reshape is called on the service (the HTTP route needs 1.30; reads go through HTTP at 1.28 and through
the service). The clock the lease is read with is the reshaper's own, moved forward where a test says so.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from chalicelib.errors import Unavailable
from chalicelib.placement import errors, reshape, reshaper
from chalicelib.placement.models import ConsumerWrite, Inventory
from tests.integration.placement.helpers import PROJECT, USER, claim, new_uuid, provider
from tests.support.faults import answer_lost, failing

ROOT_INVENTORY = {"VCPU": {"total": 600}, "DISK_GB": {"total": 100}}


def tree(placement: Any, consumers: int) -> tuple[str, str, list[str]]:
    """A compute node holding VCPU and DISK_GB, an empty provider to move VCPU to, and `consumers` consumers
    of 1 VCPU each on the node (written in POSTs of 20)."""
    root = provider(placement, **ROOT_INVENTORY)
    child = provider(placement)
    uuids = [new_uuid() for _ in range(consumers)]
    for start in range(0, consumers, 20):
        body = {c: {"allocations": {root: {"resources": {"VCPU": 1}}}, "project_id": PROJECT, "user_id": USER,
                    "consumer_generation": None} for c in uuids[start:start + 20]}
        answer = placement.post("/placement/allocations", body, version="1.28")
        assert answer.status == 204, answer.body
    return root, child, uuids


def vcpu_move(service: Any, root: str, child: str, consumers: list[str]) -> Any:
    """Nova's vGPU-style reshape, as the service's arguments: VCPU leaves the node for the child, and every
    consumer's VCPU with it (generations as readers see them now)."""
    node, child_rp = service.store.provider(root), service.store.provider(child)
    inventories = {root: (node.generation, {"DISK_GB": Inventory(total=100)}),
                   child: (child_rp.generation, {"VCPU": Inventory(total=600)})}
    generations = {c: service.store.consumer(c).generation for c in consumers}
    writes = [ConsumerWrite(uuid=c, project_id=PROJECT, user_id=USER, allocations={child: {"VCPU": 1}},
                            generation=generations[c], check_generation=True) for c in consumers]
    return inventories, writes


def move_vcpu(service: Any, root: str, child: str, consumers: list[str]) -> None:
    service.reshape(*vcpu_move(service, root, child, consumers))


def snapshot(service: Any, providers: list[str], consumers: list[str]) -> dict[str, Any]:
    """What readers see: each provider's generation, inventory, usage and allocations; each consumer."""
    seen: dict[str, Any] = {}
    for rp in providers:
        item = service.store.provider(rp)
        _, allocations = service.provider_allocations(rp)
        seen[rp] = (item.generation, sorted(item.inventories), item.usages,
                    {c: (dict(a["resources"]), int(a["consumerGeneration"])) for c, a in allocations.items()})
    for c in consumers:
        consumer, _ = service.consumer(c)
        seen[c] = None if consumer is None else (consumer.generation, consumer.allocations)
    return seen


def no_fence_left(service: Any, providers: list[str], consumers: list[str]) -> None:
    assert all(service.store.provider(rp).fence is None for rp in providers)
    assert all(service.store.consumer_for_write(c) is not None for c in consumers)


def reshape_items(services: Any) -> list[dict[str, Any]]:
    """Every intent and chunk item left in the table (a Scan: tests only; the service never scans)."""
    found = services.client.scan(TableName=services.table, FilterExpression="begins_with(pk, :p)",
                                 ExpressionAttributeValues={":p": {"S": "PLRESHAPE#"}})
    return list(found["Items"])


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of one consumer (a consumer's rewrite is 3 items), so three consumers make eight steps."""
    monkeypatch.setattr(reshape, "CHUNK_ROOM", 4)


def steps_of(consumers: int) -> int:
    return 2 + 2 * consumers  # open, a rewrite per chunk, the switch, a clean-up per chunk


@pytest.mark.parametrize("fault", ["request lost", "answer lost"])
@pytest.mark.parametrize("step", range(steps_of(3)))
def test_an_interrupted_reshape_shows_old_or_new_and_the_next_request_ends_it(
        placement, services, small_chunks, step, fault):
    service = services.placement
    root, child, consumers = tree(placement, 3)
    before = snapshot(service, [root, child], consumers)
    cut = failing if fault == "request lost" else answer_lost
    with cut(services.client, "TransactWriteItems", skip=step), pytest.raises(Unavailable):
        move_vcpu(service, root, child, consumers)
    seen = snapshot(service, [root, child], consumers)
    switched = step + (fault == "answer lost") > steps_of(3) // 2  # the switch is step K + 2 (index K + 1)
    if not switched:
        assert seen == before
        # A writer meets the fence while the owner's lease runs: 409 at once.
        if step + (fault == "answer lost") > 0:
            answer = claim(placement, consumers[0], {root: {"VCPU": 2}}, generation=1)
            assert answer.status == 409 and answer.body["errors"][0]["code"] == "placement.concurrent_update"
        # Past the lease, the next request (Nova retrying its reshape) rolls it back and reshapes.
        service.reshaper.clock = lambda: time.time() + reshape.LEASE_SECONDS + 1
        move_vcpu(service, root, child, consumers)
    else:
        # Past the switch: the new state, whoever reads; the next writer finishes the clean-up and writes.
        assert seen[child][2] == {"VCPU": 3} and seen[root][2] == {}
        assert all(seen[c][1] == {child: {"VCPU": 1}} for c in consumers)
        last = consumers[-1]  # the last one cleaned up: fenced until the reshape's very end
        assert claim(placement, last, {child: {"VCPU": 1}}, generation=seen[last][0]).status == 204
    after = snapshot(service, [root, child], consumers)
    assert after[child][2] == {"VCPU": 3} and sorted(after[child][3]) == sorted(consumers)
    assert after[root][1] == ["DISK_GB"] and after[root][3] == {}
    no_fence_left(service, [root, child], consumers)
    assert reshape_items(services) == []
    usages = placement.get(f"/placement/usages?project_id={PROJECT}", version="1.9").body["usages"]
    assert usages == {"VCPU": 3}


def test_a_consumer_written_during_the_reshape_makes_it_roll_back_and_decide_again(placement, services,
                                                                                   small_chunks, monkeypatch):
    """The owner's rewrite of a consumer finds it changed (another writer got in after the reshape's read):
    the reshape undoes its steps and decides again, which now answers the consumer's generation conflict."""
    service = services.placement
    root, child, consumers = tree(placement, 3)
    before = snapshot(service, [root, child], consumers)
    original = reshape.rewrite_ops
    raced: list[int] = []

    def rewrite_after_a_race(table: str, plan: Any, chunk: Any) -> Any:
        if chunk.index == 2 and not raced:
            raced.append(1)  # another writer moves consumer 2 between the reshape's read and its chunk
            services.client.update_item(
                TableName=services.table, Key={"pk": {"S": f"PLCONS#{consumers[1]}"}, "sk": {"S": "-"}},
                UpdateExpression="SET version = version + :one, generation = generation + :one",
                ExpressionAttributeValues={":one": {"N": "1"}})
        return original(table, plan, chunk)

    monkeypatch.setattr(reshape, "rewrite_ops", rewrite_after_a_race)
    with pytest.raises(errors.ConsumerGenerationConflict):
        move_vcpu(service, root, child, consumers)
    after = snapshot(service, [root, child], consumers)
    assert after[root][:3] == before[root][:3] and after[child] == before[child]
    assert set(after[root][3]) == set(consumers)
    assert [after[c] for c in (consumers[0], consumers[2])] == [before[c] for c in (consumers[0], consumers[2])]
    assert after[consumers[1]] == (2, before[consumers[1]][1])
    no_fence_left(service, [root, child], consumers)
    assert reshape_items(services) == []


def test_a_fenced_provider_gains_loses_or_moves_no_child_and_its_aggregates_wait_too(placement, services,
                                                                                      small_chunks):
    """A child's create, delete or move moves its parent's counter, and a move rewrites the moved subtree:
    none of it while a reshape fences those providers (its switch puts the items it read), so each meets the
    fence like any writer (409 while the owner's lease runs), and after it the reshape ends as it would."""
    service = services.placement
    root, child, consumers = tree(placement, 3)

    def under(parent: str | None, name: str | None = None) -> Any:
        return placement.post("/placement/resource_providers",
                              {"name": name or new_uuid(), "parent_provider_uuid": parent}, version="1.37")

    leaf = under(root).body["uuid"]
    grandchild = under(leaf).body["uuid"]
    loose = under(None).body["uuid"]
    with failing(services.client, "TransactWriteItems", skip=1), pytest.raises(Unavailable):
        move_vcpu(service, root, child, consumers)  # opened (root and child fenced), then cut

    def refused(answer: Any) -> bool:  # the fence met, not a generation conflict or retries run out
        error = answer.body["errors"][0] if answer.status == 409 else {}
        return error.get("code") == "placement.concurrent_update" and reshaper.BUSY in error.get("detail", "")

    rp = "/placement/resource_providers"
    assert refused(under(root))                                                       # a new child
    assert refused(under(child))
    assert refused(placement.put(f"{rp}/{loose}", {"name": new_uuid(), "parent_provider_uuid": child},
                                 version="1.37"))                                     # one moved in
    assert refused(placement.put(f"{rp}/{leaf}", {"name": new_uuid(), "parent_provider_uuid": None},
                                 version="1.37"))                                     # one moved out
    assert placement.delete(f"{rp}/{grandchild}", version="1.37").status == 204       # its parent is not fenced
    assert refused(placement.put(f"{rp}/{root}/aggregates", {
        "aggregates": [new_uuid()], "resource_provider_generation": service.store.provider(root).generation},
        version="1.37"))
    assert refused(placement.delete(f"{rp}/{leaf}", version="1.37"))                  # a child deleted
    service.reshaper.clock = lambda: time.time() + reshape.LEASE_SECONDS + 1
    move_vcpu(service, root, child, consumers)
    assert under(root).status == 200 and placement.delete(f"{rp}/{leaf}", version="1.37").status == 204
    listed = placement.get(f"{rp}?in_tree={root}", version="1.37").body["resource_providers"]
    assert len(listed) == 2 and service.store.provider(root).children == 1
    assert service.store.provider(child).inventories.keys() == {"VCPU"}
    no_fence_left(service, [root, child], consumers)
    assert reshape_items(services) == []


def test_a_reshape_of_500_consumers(placement, services):
    service = services.placement
    root, child, consumers = tree(placement, 500)
    inventories, writes = vcpu_move(service, root, child, consumers)
    services.round_trips.reset()
    started = time.perf_counter()
    service.reshape(inventories, writes)
    elapsed = time.perf_counter() - started
    calls = dict(services.round_trips.calls)
    _, allocations = service.provider_allocations(child)
    assert len(allocations) == 500 and service.store.provider(child).usages == {"VCPU": 500}
    assert service.store.provider(root).usages == {} and sorted(service.store.provider(root).inventories) == [
        "DISK_GB"]
    assert all(service.consumer(c)[0].generation == 2 for c in consumers[:5])
    assert reshape_items(services) == []
    assert calls["TransactWriteItems"] == 34 and calls["BatchGetItem"] <= 7  # 2 + 2 x 16 chunks; 502 keys
    print(f"reshape of 500 consumers: {elapsed:.2f} s, round trips {calls}")
