"""The reshaper's decision and its protocol's operations, pure (chalicelib/placement/reshape.py)."""

from __future__ import annotations

import pytest

from chalicelib.placement import errors, reshape
from chalicelib.placement.models import Consumer, ConsumerWrite, Inventory, Provider
from chalicelib.store.ops import MAX_TRANSACTION_OPS

ROOT = "11111111-1111-1111-1111-111111111111"
CHILD = "22222222-2222-2222-2222-222222222222"


def node(uuid: str = ROOT, generation: int = 5, usages: dict[str, int] | None = None, **inventories: Inventory):
    return Provider(uuid=uuid, name=uuid[:4], generation=generation, version=9, inventories=inventories,
                    usages=usages or {})


def consumer(uuid: str, allocations: dict[str, dict[str, int]], generation: int = 1) -> Consumer:
    return Consumer(uuid=uuid, project_id="p", user_id="u", generation=generation, version=generation,
                    allocations=allocations)


def write(uuid: str, allocations: dict[str, dict[str, int]], generation: int | None = 1) -> ConsumerWrite:
    return ConsumerWrite(uuid=uuid, project_id="p", user_id="u", allocations=allocations, generation=generation,
                         check_generation=True)


def decide(inventories, writes, consumers, providers, known=lambda rc: True) -> reshape.Plan:
    return reshape.decide("r1", inventories, writes, consumers, providers, known)


def moved(consumers: int = 2) -> reshape.Plan:
    uuids = [f"c{i:035d}" for i in range(consumers)]
    root = node(VCPU=Inventory(total=600), DISK_GB=Inventory(total=100), usages={"VCPU": consumers})
    child = node(CHILD, generation=0)
    return decide({ROOT: (5, {"DISK_GB": Inventory(total=100)}), CHILD: (0, {"VCPU": Inventory(total=600)})},
                  [write(c, {CHILD: {"VCPU": 1}}) for c in uuids],
                  {c: consumer(c, {ROOT: {"VCPU": 1}}) for c in uuids}, {ROOT: root, CHILD: child})


def test_generations_move_as_upstreams_three_steps():
    plan = moved()
    # the root: interim inventory +1, the consumers moved off it do not name it (+0), final +1
    assert plan.final[ROOT].generation == 5 + 1 + 1
    # the child: interim +1, named by the allocations +1, final +1
    assert plan.final[CHILD].generation == 0 + 3
    assert plan.final[CHILD].usages == {"VCPU": 2} and plan.final[ROOT].usages == {}
    assert sorted(plan.final[ROOT].inventories) == ["DISK_GB"]
    assert all(change.new.generation == 2 for chunk in plan.chunks for change in chunk.changes)


def test_an_empty_new_inventory_skips_the_interim_step():
    plan = decide({CHILD: (0, {})}, [], {}, {CHILD: node(CHILD, generation=0)})
    assert plan.final[CHILD].generation == 1 and plan.chunks == []


def test_upstreams_order_inventory_provider_then_generation_then_consumers():
    providers = {ROOT: node(VCPU=Inventory(total=8))}
    with pytest.raises(errors.Invalid) as missing:
        decide({CHILD: (0, {})}, [write("c", {ROOT: {"VCPU": 1}}, generation=9)], {}, providers)
    assert missing.value.code == errors.PROVIDER_NOT_FOUND
    with pytest.raises(errors.ConcurrentUpdate, match="actual: 5, given: 4"):
        decide({ROOT: (4, {})}, [write("c", {ROOT: {"VCPU": 1}}, generation=9)], {}, providers)
    with pytest.raises(errors.ConsumerGenerationConflict):
        decide({ROOT: (5, {"FOO": Inventory(total=1)})}, [write("c", {ROOT: {"VCPU": 1}}, generation=9)], {},
               providers, known=lambda rc: rc != "FOO")
    with pytest.raises(errors.UnknownResourceClass, match="No such resource class FOO"):
        decide({ROOT: (5, {"FOO": Inventory(total=1)})}, [], {}, providers, known=lambda rc: rc != "FOO")


def test_a_class_still_allocated_cannot_leave_the_inventory():
    providers = {ROOT: node(VCPU=Inventory(total=8), DISK_GB=Inventory(total=10), usages={"DISK_GB": 1})}
    with pytest.raises(errors.InventoryInUse, match="Inventory for 'DISK_GB'"):
        decide({ROOT: (5, {"VCPU": Inventory(total=1)})}, [], {}, providers)


def test_allocations_are_checked_against_the_new_records():
    providers = {ROOT: node(VCPU=Inventory(total=8))}
    with pytest.raises(errors.CapacityExceeded):
        decide({ROOT: (5, {"VCPU": Inventory(total=1)})}, [write("c", {ROOT: {"VCPU": 2}}, generation=None)], {},
               providers)


@pytest.mark.parametrize("consumers", [1, 33, 34, 500])
def test_every_step_fits_one_transaction(consumers):
    plan = moved(consumers)
    assert sum(len(c.changes) for c in plan.chunks) == consumers
    assert len(plan.chunks) == -(-consumers // 33)
    for chunk in plan.chunks:
        assert len(reshape.rewrite_ops("t", plan, chunk)) <= MAX_TRANSACTION_OPS
        assert len(reshape.undo_ops("t", plan, chunk)) <= MAX_TRANSACTION_OPS
        assert len(reshape.cleanup_ops("t", plan, chunk)) <= MAX_TRANSACTION_OPS
    assert len(reshape.open_ops("t", plan, 0)) + len(plan.chunks) <= MAX_TRANSACTION_OPS
    assert plan.steps == 2 + 2 * len(plan.chunks)


def test_the_plan_survives_its_items():
    plan = moved(40)
    again = reshape.plan_from("r1", reshape.plan_json(plan),
                              [reshape.chunk_from(c.index, reshape.chunk_body(c)) for c in plan.chunks])
    assert again.read == plan.read and again.final == plan.final and again.chunks == plan.chunks


def test_a_consumer_on_too_many_providers_is_refused():
    many = {f"{i:036d}": {"VCPU": 1} for i in range(99)}
    with pytest.raises(errors.TooLarge):
        reshape.pack([reshape.ConsumerChange("c", None, consumer("c", many))])
