"""Placement's pure rules, the cases `make mutate` showed untested.

Each case names a documented Placement behaviour (docs/placement.md, docs/decisions/0003,
shared research "placement.md" section 5 and the capacity rule) and the exact record or message
Placement gives; the upstream exception texts are quoted where a message is asserted whole.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from chalicelib.placement import errors, rules
from chalicelib.placement.errors import CONCURRENT_UPDATE, UNDEFINED, PlacementError
from chalicelib.placement.models import Consumer, ConsumerWrite, Inventory, Provider

RP = "11111111-1111-1111-1111-111111111111"
RP2 = "22222222-2222-2222-2222-222222222222"
C1 = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
C2 = "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"


def totals(deltas: dict) -> dict:
    """The usage deltas of the (project) and (project, user) counters of all types, classes only."""
    return {(project, user): {k: n for k, n in delta.items() if k != rules.CONSUMER_COUNT}
            for (project, user, consumer_type), delta in deltas.items() if consumer_type is None}


def provider(uuid: str = RP, usages: dict[str, int] | None = None, inventory_version: int = 0,
             **inventories: Inventory) -> Provider:
    return Provider(uuid=uuid, name=uuid[:4], generation=3, version=7, inventory_version=inventory_version,
                    inventories=inventories or {"VCPU": Inventory(total=8)}, usages=usages or {})


def consumer(uuid: str = C1, allocations: dict | None = None, generation: int = 1, version: int = 1,
             project: str = "p", user: str = "u") -> Consumer:
    return Consumer(uuid=uuid, project_id=project, user_id=user, generation=generation, version=version,
                    allocations={RP: {"VCPU": 1}} if allocations is None else allocations)


def write(uuid: str = C1, allocations: dict | None = None, generation: int | None = None,
          check: bool = False, project: str = "p", user: str = "u") -> ConsumerWrite:
    return ConsumerWrite(uuid=uuid, project_id=project, user_id=user,
                         allocations={RP: {"VCPU": 1}} if allocations is None else allocations,
                         generation=generation, check_generation=check)


def decide(writes, consumers=None, providers=None):
    return rules.decide_allocations(writes, consumers or {}, providers or {RP: provider()}, lambda rc: True,
                                    lambda c: f"Unable to allocate inventory for consumer {c}: ")


def error_of(fn) -> PlacementError:
    with pytest.raises(PlacementError) as caught:
        fn()
    return caught.value


# --- inventory records -------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "inventory"), [
    ({"total": 10, "reserved": 2, "min_unit": 2, "max_unit": 8, "step_size": 2, "allocation_ratio": 1.5},
     Inventory(total=10, reserved=2, min_unit=2, max_unit=8, step_size=2, allocation_ratio=1.5)),
    ({"total": 10, "reserved": 3}, Inventory(total=10, reserved=3)),
    ({"total": 10, "min_unit": 5}, Inventory(total=10, min_unit=5)),
    ({"total": 10, "max_unit": 6}, Inventory(total=10, max_unit=6)),
    ({"total": 10, "step_size": 5}, Inventory(total=10, step_size=5)),
    ({"total": 10, "allocation_ratio": 16}, Inventory(total=10, allocation_ratio=16.0)),
])
def test_every_inventory_field_sent_is_kept(body, inventory):
    made = rules.inventory_from(body)
    assert made == inventory
    assert isinstance(made.allocation_ratio, float)  # shown as 16.0, not 16


@pytest.mark.parametrize(("reserved", "version", "message"), [
    (10, (1, 25), "Invalid inventory for 'VCPU' on resource provider '{rp}'. "
                  "The reserved value is greater than or equal to total."),
    (11, (1, 26), "Invalid inventory for 'VCPU' on resource provider '{rp}'. "
                  "The reserved value is greater than total."),
])
def test_reserved_against_total_messages_are_placements(reserved, version, message):
    """Upstream InvalidInventoryCapacity / InvalidInventoryCapacityReservedCanBeTotal, word for word."""
    found = rules.capacity_problem("VCPU", RP, Inventory(total=10, reserved=reserved),
                                   reserved_may_equal_total=version >= (1, 26))
    assert found == message.format(rp=RP)


# --- consumer generations ----------------------------------------------------------------------

def test_an_existing_consumer_written_with_its_generation_is_accepted_and_moves_on():
    """1.28+: the sent generation equals the stored one, so the write succeeds and bumps it."""
    old = consumer(generation=4, version=9)
    decision = decide([write(generation=4, check=True)], consumers={C1: old},
                      providers={RP: provider(usages={"VCPU": 1})})
    new = decision.consumers[C1]
    assert new is not None and new.generation == 5


def test_an_existing_consumer_sent_a_stale_generation_is_refused():
    err = error_of(lambda: decide([write(generation=3, check=True)], consumers={C1: consumer(generation=4)},
                                  providers={RP: provider(usages={"VCPU": 1})}))
    assert isinstance(err, errors.ConsumerGenerationConflict) and err.code == CONCURRENT_UPDATE
    assert err.detail == "consumer generation conflict - expected 4 but got 3"


# --- consumer records --------------------------------------------------------------------------

def test_a_new_consumer_record_is_the_write_at_generation_1():
    decision = decide([write(allocations={RP: {"VCPU": 2}}, project="proj", user="usr")])
    assert decision.consumers == {C1: Consumer(uuid=C1, project_id="proj", user_id="usr", generation=1,
                                               version=1, allocations={RP: {"VCPU": 2}})}


def test_a_rewritten_consumer_takes_the_new_owner_and_set_and_moves_generation_and_version_by_one():
    old = consumer(allocations={RP: {"VCPU": 1}}, generation=4, version=9)
    decision = decide([write(allocations={RP: {"VCPU": 2}}, project="q", user="v")], consumers={C1: old},
                      providers={RP: provider(usages={"VCPU": 1})})
    assert decision.consumers == {C1: Consumer(uuid=C1, project_id="q", user_id="v", generation=5,
                                               version=10, allocations={RP: {"VCPU": 2}})}


def test_the_consumer_record_does_not_share_the_requests_dicts():
    sent = {RP: {"VCPU": 2}}
    record = decide([write(allocations=sent)]).consumers[C1]
    assert record is not None and record.allocations == sent
    sent[RP]["VCPU"] = 5
    assert record.allocations == {RP: {"VCPU": 2}}


def test_an_emptied_consumer_does_not_stop_the_next_consumer_of_the_same_post():
    """POST /allocations: one entry emptied (its record deleted), the next written as usual."""
    old = consumer(uuid=C1, allocations={RP: {"VCPU": 2}})
    decision = decide([write(uuid=C1, allocations={}), write(uuid=C2, allocations={RP: {"VCPU": 3}})],
                      consumers={C1: old}, providers={RP: provider(usages={"VCPU": 2})})
    assert decision.consumers == {
        C1: None,
        C2: Consumer(uuid=C2, project_id="p", user_id="u", generation=1, version=1, allocations={RP: {"VCPU": 3}}),
    }
    assert totals(decision.usage_deltas) == {("p", None): {"VCPU": 1}, ("p", "u"): {"VCPU": 1}}
    assert decision.providers[RP].deltas == {"VCPU": 1}


# --- usages ------------------------------------------------------------------------------------

def test_usage_of_one_class_on_several_providers_adds_up():
    decision = decide([write(allocations={RP: {"VCPU": 1}, RP2: {"VCPU": 2}})],
                      providers={RP: provider(), RP2: provider(uuid=RP2)})
    assert totals(decision.usage_deltas) == {("p", None): {"VCPU": 3}, ("p", "u"): {"VCPU": 3}}


def test_deleting_a_consumer_releases_all_its_usage_for_its_project_and_user():
    """DELETE /allocations/{c}: usage falls by every amount, summed over the providers."""
    gone = consumer(allocations={RP: {"VCPU": 1, "MEMORY_MB": 512}, RP2: {"VCPU": 2}}, project="p", user="u")
    assert totals(rules.release_all(gone)) == {
        ("p", None): {"VCPU": -3, "MEMORY_MB": -512},
        ("p", "u"): {"VCPU": -3, "MEMORY_MB": -512},
    }


# --- capacity ----------------------------------------------------------------------------------

def test_several_consumers_rewritten_in_one_post_do_not_count_their_own_usage():
    """Placement drops the written consumers' allocations before checking capacity, all of them."""
    full = provider(usages={"VCPU": 5}, VCPU=Inventory(total=5))
    held = {C1: consumer(uuid=C1, allocations={RP: {"VCPU": 2}}), C2: consumer(uuid=C2, allocations={RP: {"VCPU": 3}})}
    decision = decide([write(uuid=C1, allocations={RP: {"VCPU": 2}}), write(uuid=C2, allocations={RP: {"VCPU": 3}})],
                      consumers=held, providers={RP: full})
    assert (decision.providers[RP].deltas, decision.providers[RP].limits) == ({}, {})


@pytest.mark.parametrize(("used", "amount"), [(0, 8), (5, 3), (7, 1)])
def test_a_claim_that_fills_capacity_exactly_is_accepted(used, amount):
    rp = provider(usages={"VCPU": used} if used else {}, VCPU=Inventory(total=8))
    change = decide([write(allocations={RP: {"VCPU": amount}})], providers={RP: rp}).providers[RP]
    assert (change.deltas, change.limits) == ({"VCPU": amount}, {"VCPU": 8 - amount})


def test_every_class_of_a_write_is_checked_after_one_that_is_over_capacity_but_no_worse():
    """VCPU stays at its overage (inventory shrank below usage); MEMORY_MB would go over: 409."""
    rp = provider(usages={"VCPU": 6, "MEMORY_MB": 100}, VCPU=Inventory(total=4), MEMORY_MB=Inventory(total=100))
    old = consumer(allocations={RP: {"VCPU": 6}})
    err = error_of(lambda: decide([write(allocations={RP: {"VCPU": 6, "MEMORY_MB": 1}})], consumers={C1: old},
                                  providers={RP: rp}))
    assert isinstance(err, errors.CapacityExceeded) and err.code == UNDEFINED
    assert "The requested amount would exceed the capacity." in err.detail


def test_a_provider_with_none_of_the_classes_names_them_all_in_standard_order():
    """Upstream InvalidInventory: the classes joined in resource class id order (VCPU before MEMORY_MB)."""
    disk_only = provider(DISK_GB=Inventory(total=100))
    err = error_of(lambda: decide([write(allocations={RP: {"MEMORY_MB": 1, "VCPU": 1}})],
                                  providers={RP: disk_only}))
    assert isinstance(err, errors.AllocationInvalid)
    assert err.detail == (f"Unable to allocate inventory: Inventory for 'VCPU, MEMORY_MB' on resource provider "
                          f"'{RP}' invalid.")


# --- what the store's transaction is conditioned on --------------------------------------------

def test_a_written_provider_carries_the_inventory_version_the_checks_read():
    """The write must fail if the inventory changed since these checks (the store's condition)."""
    decision = decide([write()], providers={RP: provider(inventory_version=4)})
    assert decision.providers[RP].inventory_version == 4


def test_a_written_provider_carries_the_creation_stamp_of_the_provider_read():
    """A provider made again under the same uuid starts its inventory version over: the stamp tells them apart.
    An item without a stamp (0) is not checked on it."""
    stamped = decide([write()], providers={RP: replace(provider(), created_at=1_700_000_000_000_001)})
    assert stamped.providers[RP].created_at == 1_700_000_000_000_001
    assert decide([write()], providers={RP: provider()}).providers[RP].created_at is None


# --- providers without inventory: Placement's message and check order --------------------------
# Upstream `_check_capacity_exceeded` first finds every provider of the request that has inventory
# for none of the request's classes, and answers InvalidInventory naming all the request's classes
# (resource class id order) before it checks any amount; only then, allocation by allocation,
# a missing class, min/max/step and capacity.

def test_a_provider_without_any_requested_class_is_named_with_every_class_of_the_request():
    providers = {RP: provider(VCPU=Inventory(total=8)), RP2: provider(uuid=RP2, DISK_GB=Inventory(total=8))}
    err = error_of(lambda: decide([write(allocations={RP: {"VCPU": 1}, RP2: {"MEMORY_MB": 1}})],
                                  providers=providers))
    assert isinstance(err, errors.AllocationInvalid)
    assert err.detail == (f"Unable to allocate inventory: Inventory for 'VCPU, MEMORY_MB' on resource provider "
                          f"'{RP2}' invalid.")


def test_a_provider_without_inventory_is_reported_before_any_amount_is_checked():
    providers = {RP: provider(VCPU=Inventory(total=8)), RP2: provider(uuid=RP2, DISK_GB=Inventory(total=8))}
    err = error_of(lambda: decide([write(allocations={RP: {"VCPU": 100}, RP2: {"MEMORY_MB": 1}})],
                                  providers=providers))
    assert isinstance(err, errors.AllocationInvalid)
    assert err.detail == (f"Unable to allocate inventory: Inventory for 'VCPU, MEMORY_MB' on resource provider "
                          f"'{RP2}' invalid.")


def test_every_provider_without_inventory_is_named():
    """Upstream joins the missing providers with ', ' (we sort them, so the text is deterministic)."""
    providers = {RP: provider(DISK_GB=Inventory(total=8)), RP2: provider(uuid=RP2, DISK_GB=Inventory(total=8))}
    err = error_of(lambda: decide([write(allocations={RP2: {"VCPU": 1}, RP: {"VCPU": 1}})], providers=providers))
    assert err.detail == (f"Unable to allocate inventory: Inventory for 'VCPU' on resource provider "
                          f"'{RP}, {RP2}' invalid.")


def test_a_rewrite_that_keeps_the_same_overage_is_accepted():
    """Placement 16.0.0 (`_check_capacity_exceeded`): over capacity is allowed when the result is no worse,
    i.e. `used + amount_needed_all <= prev_used`: the same amount again is no worse."""
    old = Consumer(uuid=C1, project_id="p", user_id="u", generation=1, version=1, allocations={RP: {"VCPU": 6}})
    shrunk = provider(usages={"VCPU": 6}, VCPU=Inventory(total=4))
    same = decide([write(allocations={RP: {"VCPU": 6}})], consumers={C1: old}, providers={RP: shrunk})
    assert same.consumers[C1] is not None and same.consumers[C1].allocations == {RP: {"VCPU": 6}}
