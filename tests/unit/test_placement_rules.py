"""Placement's pure rules: capacity, min/max/step, reserved vs total, generations, consumer records."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.placement import errors, rules
from chalicelib.placement.classes import class_order
from chalicelib.placement.errors import CONCURRENT_UPDATE, PlacementError
from chalicelib.placement.models import Consumer, ConsumerWrite, Inventory, Provider

RP = "11111111-1111-1111-1111-111111111111"
RP2 = "22222222-2222-2222-2222-222222222222"
C1 = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
C2 = "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"


def totals(deltas: dict) -> dict:
    """The usage deltas of the (project) and (project, user) counters of all types, classes only."""
    return {(project, user): {k: n for k, n in delta.items() if k != rules.CONSUMER_COUNT}
            for (project, user, consumer_type), delta in deltas.items() if consumer_type is None}


def provider(uuid: str = RP, usages: dict[str, int] | None = None, generation: int = 3, **inventories: Inventory):
    return Provider(uuid=uuid, name=uuid[:4], generation=generation, version=7,
                    inventories=inventories or {"VCPU": Inventory(total=8)}, usages=usages or {})


def write(consumer: str = C1, allocations: dict | None = None, generation: int | None = None,
          check: bool = False, project: str = "p", user: str = "u") -> ConsumerWrite:
    return ConsumerWrite(uuid=consumer, project_id=project, user_id=user,
                         allocations={RP: {"VCPU": 1}} if allocations is None else allocations,
                         generation=generation, check_generation=check)


def decide(writes, consumers=None, providers=None, known=lambda rc: True):
    return rules.decide_allocations(writes, consumers or {}, providers or {RP: provider()}, known,
                                    lambda c: f"Unable to allocate inventory for consumer {c}: ")


def error_of(fn) -> PlacementError:
    with pytest.raises(PlacementError) as caught:
        fn()
    return caught.value


# --- capacity and inventory constraints --------------------------------------------------------

@pytest.mark.parametrize(("inventory", "capacity"), [
    (Inventory(total=10), 10),
    (Inventory(total=10, reserved=2), 8),
    (Inventory(total=10, reserved=2, allocation_ratio=16.0), 128),
    (Inventory(total=10, reserved=10), 0),
    (Inventory(total=3, allocation_ratio=0.5), 1.5),
])
def test_capacity_is_total_minus_reserved_times_ratio(inventory, capacity):
    assert inventory.capacity == capacity


@pytest.mark.parametrize(("total", "reserved", "version", "problem"), [
    (10, 9, (1, 0), None),
    (10, 10, (1, 25), "greater than or equal to total"),
    (10, 10, (1, 26), None),
    (10, 11, (1, 26), "greater than total"),
    (10, 11, (1, 0), "greater than or equal to total"),
])
def test_reserved_against_total_by_microversion(total, reserved, version, problem):
    found = rules.capacity_problem("VCPU", RP, Inventory(total=total, reserved=reserved),
                                   reserved_may_equal_total=version >= (1, 26))
    if problem is None:
        assert found is None
    else:
        assert problem in found and "'VCPU'" in found and RP in found


@pytest.mark.parametrize(("amount", "accepted"), [
    (10, True), (20, True), (1000, True),
    (5, False),     # below min_unit
    (1010, False),  # above max_unit
    (15, False),    # not a multiple of step_size
])
def test_min_max_step(amount, accepted):
    disk = Inventory(total=2048, min_unit=10, max_unit=1000, step_size=10)
    fn = lambda: decide([write(allocations={RP: {"DISK_GB": amount}})],  # noqa: E731
                        providers={RP: provider(DISK_GB=disk)})
    if accepted:
        assert fn().providers[RP].deltas == {"DISK_GB": amount}
    else:
        err = error_of(fn)
        assert isinstance(err, errors.AllocationInvalid) and "would violate inventory constraints" in err.detail


def test_capacity_exceeded_is_409_without_concurrent_update_code():
    err = error_of(lambda: decide([write(allocations={RP: {"VCPU": 3}})],
                                  providers={RP: provider(usages={"VCPU": 6})}))
    assert isinstance(err, errors.CapacityExceeded) and err.code != CONCURRENT_UPDATE
    assert "The requested amount would exceed the capacity" in err.detail


def test_capacity_sums_every_consumer_of_one_request():
    """Bug 1778743: three consumers x 1 VCPU against total 2 is refused as a whole."""
    small = provider(VCPU=Inventory(total=2))
    third = "cccccccc-cccc-cccc-cccc-cccccccccccc"
    writes = [write(consumer=c, allocations={RP: {"VCPU": 1}}) for c in (C1, C2, third)]
    assert isinstance(error_of(lambda: decide(writes, providers={RP: small})), errors.CapacityExceeded)
    change = decide(writes[:2], providers={RP: small}).providers[RP]
    assert (change.deltas, change.limits) == ({"VCPU": 2}, {"VCPU": 0})


def test_amounts_are_checked_in_body_order_against_the_running_sum_as_placement():
    """The first amount over capacity is the one named: the first consumer's VCPU fits on its own (6 of 8),
    its DISK_GB does not; the second consumer's VCPU would overflow only later."""
    rp = provider(VCPU=Inventory(total=8), DISK_GB=Inventory(total=10, max_unit=100))
    writes = [write(consumer=C1, allocations={RP: {"VCPU": 6, "DISK_GB": 20}}),
              write(consumer=C2, allocations={RP: {"VCPU": 6}})]
    assert "for 'DISK_GB'" in error_of(lambda: decide(writes, providers={RP: rp})).detail
    writes[0] = write(consumer=C1, allocations={RP: {"VCPU": 6, "DISK_GB": 2}})
    assert "for 'VCPU'" in error_of(lambda: decide(writes, providers={RP: rp})).detail


def test_rewriting_a_consumer_does_not_count_its_old_allocation_twice():
    old = Consumer(uuid=C1, project_id="p", user_id="u", generation=1, version=1, allocations={RP: {"VCPU": 8}})
    decision = decide([write(allocations={RP: {"VCPU": 8}})], consumers={C1: old},
                      providers={RP: provider(usages={"VCPU": 8})})
    assert decision.providers[RP].deltas == {} and decision.providers[RP].limits == {}


def test_over_capacity_is_accepted_when_no_worse_than_before():
    """Inventory shrank below usage; a write that lowers the overage still succeeds."""
    old = Consumer(uuid=C1, project_id="p", user_id="u", generation=1, version=1, allocations={RP: {"VCPU": 6}})
    shrunk = provider(usages={"VCPU": 6}, VCPU=Inventory(total=4))
    lowered = decide([write(allocations={RP: {"VCPU": 5}})], consumers={C1: old}, providers={RP: shrunk})
    assert lowered.providers[RP].deltas == {"VCPU": -1} and lowered.providers[RP].limits == {}
    assert isinstance(error_of(lambda: decide([write(allocations={RP: {"VCPU": 7}})], consumers={C1: old},
                                              providers={RP: shrunk})), errors.CapacityExceeded)


@given(total=st.integers(1, 50), reserved=st.integers(0, 50), ratio=st.sampled_from([0.5, 1.0, 1.5, 4.0]),
       used=st.integers(0, 60), amount=st.integers(1, 60))
def test_a_new_claim_never_takes_usage_above_capacity(total, reserved, ratio, used, amount):
    inventory = Inventory(total=total, reserved=min(reserved, total), allocation_ratio=ratio)
    rp = provider(usages={"VCPU": used} if used else {}, VCPU=inventory)
    try:
        decision = decide([write(allocations={RP: {"VCPU": amount}})], providers={RP: rp})
    except PlacementError as err:
        assert isinstance(err, errors.CapacityExceeded)
        assert used + amount > inventory.capacity
    else:
        change = decision.providers[RP]
        assert change.deltas == {"VCPU": amount}
        assert used + amount <= inventory.capacity
        # the write's condition: usage may grow by `amount` only from at most `limit`
        assert change.limits["VCPU"] + amount <= inventory.capacity < change.limits["VCPU"] + amount + 1


# --- check order and messages ------------------------------------------------------------------

def test_missing_provider_is_400():
    err = error_of(lambda: decide([write()], providers={RP: None}))
    assert isinstance(err, errors.UnknownProvider)
    assert f"Allocation for resource provider '{RP}' that does not exist." in err.detail


def test_unknown_class_is_400_before_inventory_checks():
    err = error_of(lambda: decide([write(allocations={RP: {"CUSTOM_PONY": 1}})], known=lambda rc: rc != "CUSTOM_PONY"))
    assert isinstance(err, errors.UnknownResourceClass)
    assert err.detail == f"Unable to allocate inventory for consumer {C1}: No such resource class CUSTOM_PONY."


def test_class_missing_from_inventory_is_409():
    err = error_of(lambda: decide([write(allocations={RP: {"VCPU": 1, "PCI_DEVICE": 1}})]))
    assert isinstance(err, errors.AllocationInvalid)
    assert f"Inventory for 'PCI_DEVICE' on resource provider '{RP}' invalid." in err.detail


def test_consumer_generation_is_checked_before_providers():
    err = error_of(lambda: decide([write(generation=2, check=True)], providers={RP: None}))
    assert isinstance(err, errors.ConsumerGenerationConflict) and err.code == CONCURRENT_UPDATE


# --- generations -------------------------------------------------------------------------------

EXISTING = Consumer(uuid=C1, project_id="p", user_id="u", generation=5, version=9, allocations={RP: {"VCPU": 1}})


@pytest.mark.parametrize(("existing", "sent", "message"), [
    (None, None, None),
    (None, 3, "consumer generation conflict - expected null but got 3"),
    (EXISTING, None, "consumer generation conflict - expected 5 but got None"),
    (EXISTING, 4, "consumer generation conflict - expected 5 but got 4"),
    (EXISTING, 5, None),
])
def test_consumer_generation_rules(existing, sent, message):
    fn = lambda: rules.check_consumer_generation(existing, write(generation=sent, check=True))  # noqa: E731
    if message is None:
        fn()
    else:
        err = error_of(fn)
        assert isinstance(err, errors.ConsumerGenerationConflict)
        assert (err.code, err.detail) == (CONCURRENT_UPDATE, message)


def test_below_1_28_no_consumer_generation_is_checked():
    rules.check_consumer_generation(EXISTING, write(generation=None, check=False))


def test_new_consumer_starts_at_generation_1_and_each_write_adds_one():
    first = decide([write()]).consumers[C1]
    assert first is not None and first.generation == 1
    again = decide([write()], consumers={C1: EXISTING},
                   providers={RP: provider(usages={"VCPU": 1})}).consumers[C1]
    assert again is not None and again.generation == 6


def test_provider_generation_moves_once_per_provider_named_in_the_new_set():
    decision = decide([write(consumer=C1), write(consumer=C2)])
    assert decision.providers[RP].bump_generation  # +1 once, whatever the number of consumers


def test_moving_a_consumer_leaves_the_old_provider_generation_alone():
    old = Consumer(uuid=C1, project_id="p", user_id="u", generation=1, version=1, allocations={RP2: {"VCPU": 2}})
    decision = decide([write(allocations={RP: {"VCPU": 2}})], consumers={C1: old})
    moved_off = decision.providers[RP2]
    assert (moved_off.deltas, moved_off.bump_generation, moved_off.inventory_version) == ({"VCPU": -2}, False, None)
    assert decision.providers[RP].bump_generation


def test_emptying_a_consumer_deletes_it_and_counts_its_providers_as_written():
    old = Consumer(uuid=C1, project_id="p", user_id="u", generation=1, version=1, allocations={RP2: {"VCPU": 2}})
    decision = decide([write(allocations={})], consumers={C1: old}, providers={})
    assert decision.consumers == {C1: None}
    assert decision.providers[RP2].bump_generation
    assert totals(decision.usage_deltas) == {("p", None): {"VCPU": -2}, ("p", "u"): {"VCPU": -2}}


def test_an_empty_write_for_a_new_consumer_leaves_it_at_generation_0_with_nothing_counted():
    decision = decide([write(allocations={}, project="q", user="v")], providers={})
    left = decision.consumers[C1]
    assert left is not None
    assert (left.generation, left.allocations, left.project_id, left.user_id) == (0, {}, "q", "v")
    assert decision.providers == {} and decision.usage_deltas == {}


@pytest.mark.parametrize(("allocations", "generation"), [({}, 3), ({RP: {"VCPU": 1}}, 4)])
def test_a_consumer_without_allocations_moves_only_when_a_write_places_some(allocations, generation):
    left = Consumer(uuid=C1, project_id="p", user_id="u", generation=3, version=1)  # (0 as upstream leaves it)
    after = decide([write(allocations=allocations, generation=3, check=True, user="w")],
                   consumers={C1: left}).consumers[C1]
    assert after is not None
    assert (after.generation, after.version, after.user_id) == (generation, 2, "w")


def test_changing_owner_moves_usage_between_projects():
    old = Consumer(uuid=C1, project_id="p", user_id="u", generation=1, version=1, allocations={RP: {"VCPU": 1}})
    decision = decide([write(project="q", user="v")], consumers={C1: old},
                      providers={RP: provider(usages={"VCPU": 1})})
    assert totals(decision.usage_deltas) == {
        ("p", None): {"VCPU": -1}, ("p", "u"): {"VCPU": -1}, ("q", None): {"VCPU": 1}, ("q", "v"): {"VCPU": 1},
    }


# --- inventories in use ------------------------------------------------------------------------

def test_classes_in_use_are_listed_in_standard_class_order():
    rp = provider(usages={"DISK_GB": 1, "VCPU": 1}, VCPU=Inventory(total=1), DISK_GB=Inventory(total=1),
                  MEMORY_MB=Inventory(total=1))
    assert rules.classes_in_use(rp, ["DISK_GB", "MEMORY_MB", "VCPU"]) == ["VCPU", "DISK_GB"]
    message = rules.in_use_message(["VCPU", "DISK_GB"], RP)
    assert message == f"Inventory for 'VCPU, DISK_GB' on resource provider '{RP}' in use."


def test_custom_classes_sort_after_standard_ones():
    assert class_order(["CUSTOM_B", "DISK_GB", "CUSTOM_A", "VCPU"]) == ["VCPU", "DISK_GB", "CUSTOM_A", "CUSTOM_B"]


def test_inventory_defaults_are_placements():
    assert rules.inventory_from({"total": 4}).as_dict() == {
        "total": 4, "reserved": 0, "min_unit": 1, "max_unit": 2147483647, "step_size": 1, "allocation_ratio": 1.0,
    }


# --- issue 14 items 23, 24: whole-number floats, allocation_ratio in the capacity rule --------------

@pytest.mark.parametrize(("inventory", "may_equal", "problem"), [
    (Inventory(total=10, allocation_ratio=0.05), False, "greater than or equal to total"),  # int(0.5) == 0
    (Inventory(total=10, allocation_ratio=0.05), True, None),
    (Inventory(total=10, allocation_ratio=0.1), False, None),  # int(1.0) == 1
    (Inventory(total=10, allocation_ratio=-1.0), True, "greater than total"),
    (Inventory(total=10, reserved=9, allocation_ratio=0.5), False, "greater than or equal to total"),
    (Inventory(total=10, reserved=9, allocation_ratio=1.5), False, None),
])
def test_capacity_counts_the_allocation_ratio_as_placement(inventory, may_equal, problem):
    found = rules.capacity_problem("VCPU", RP, inventory, reserved_may_equal_total=may_equal)
    assert found is None if problem is None else problem in found


def test_an_inventory_from_whole_number_floats_holds_integers():
    inventory = rules.inventory_from({"total": 10.0, "reserved": 1.0, "min_unit": 2.0, "max_unit": 4.0,
                                      "step_size": 2.0, "allocation_ratio": 3})
    assert inventory == Inventory(total=10, reserved=1, min_unit=2, max_unit=4, step_size=2, allocation_ratio=3.0)
    assert all(type(getattr(inventory, k)) is int for k in rules.INTEGER_FIELDS)
    assert type(inventory.allocation_ratio) is float
    assert rules.inventory_from({"total": 3}) == Inventory(total=3)


# --- consumer types (1.38) ---------------------------------------------------------------------

def test_a_new_consumer_written_without_a_type_counts_as_unknown_with_its_consumer_count():
    decision = rules.decide_allocations([write(C1, {RP: {"VCPU": 2}})], {}, {RP: provider()}, lambda rc: True,
                                        lambda c: "")
    assert decision.consumers[C1].consumer_type is None
    assert decision.usage_deltas[("p", None, "unknown")] == {"VCPU": 2, rules.CONSUMER_COUNT: 1}
    assert decision.usage_deltas[("p", "u", None)] == {"VCPU": 2, rules.CONSUMER_COUNT: 1}


def test_a_type_sent_moves_the_consumer_between_type_counters_and_keeps_the_totals():
    old = Consumer(uuid=C1, project_id="p", user_id="u", generation=1, version=1, allocations={RP: {"VCPU": 2}},
                   consumer_type="INSTANCE")
    typed = ConsumerWrite(uuid=C1, project_id="p", user_id="u", allocations={RP: {"VCPU": 2}},
                          consumer_type="MIGRATION")
    decision = rules.decide_allocations([typed], {C1: old}, {RP: provider(usages={"VCPU": 2})}, lambda rc: True,
                                        lambda c: "")
    assert decision.consumers[C1].consumer_type == "MIGRATION"
    assert decision.usage_deltas == {
        ("p", None, "INSTANCE"): {"VCPU": -2, rules.CONSUMER_COUNT: -1},
        ("p", "u", "INSTANCE"): {"VCPU": -2, rules.CONSUMER_COUNT: -1},
        ("p", None, "MIGRATION"): {"VCPU": 2, rules.CONSUMER_COUNT: 1},
        ("p", "u", "MIGRATION"): {"VCPU": 2, rules.CONSUMER_COUNT: 1},
    }


def test_below_1_38_an_existing_consumer_keeps_its_type():
    old = Consumer(uuid=C1, project_id="p", user_id="u", generation=1, version=1, allocations={RP: {"VCPU": 2}},
                   consumer_type="INSTANCE")
    decision = rules.decide_allocations([write(C1, {RP: {"VCPU": 3}})], {C1: old}, {RP: provider(usages={"VCPU": 2})},
                                        lambda rc: True, lambda c: "")
    assert decision.consumers[C1].consumer_type == "INSTANCE"
    assert decision.usage_deltas[("p", "u", "INSTANCE")] == {"VCPU": 1}


def test_deleting_a_consumer_takes_it_out_of_every_count():
    gone = Consumer(uuid=C1, project_id="p", user_id="u", generation=1, version=1, allocations={RP: {"VCPU": 2}},
                    consumer_type="INSTANCE")
    deltas = rules.release_all(gone)
    assert set(deltas) == {("p", None, None), ("p", "u", None), ("p", None, "INSTANCE"), ("p", "u", "INSTANCE")}
    assert all(delta == {"VCPU": -2, rules.CONSUMER_COUNT: -1} for delta in deltas.values())
