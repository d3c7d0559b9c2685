"""The commitment sync's rules at their edges (issue 10, docs/commitments.md "Rules").

Companion of test_commitments_rules.py: each case names one specified behaviour that the
first tables leave open (a boundary, a field of the record, an order, a guard), so a change
to that behaviour fails here. The helpers are that module's, so both tables read the same world.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.commitments import rules
from chalicelib.commitments.models import CREATOR, SYNCER_USER, Consumer, Flavor, Pool, Reservation
from tests.unit.test_commitments_rules import (
    EARLIER,
    HELD_A,
    LATER,
    MINE_A,
    NEED2,
    NOW,
    P1,
    P2,
    SMALL,
    SMALL_NEED,
    World,
    commitment,
    ours,
    pool,
    record_for,
    room_pool,
    selected,
    server,
    snapshot,
    times,
)

C = commitment(7, amount=2)
ZERO = Flavor(id="f0", name="zero", vcpus=0, ram=0, disk=0)


# --- status -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        # Limes: confirm_by > now is planned; at now it has passed.
        ({"status": None, "confirm_by": NOW, "confirmed_at": None}, "pending"),
        ({"status": None, "confirm_by": NOW, "confirmed_at": EARLIER}, "confirmed"),
        ({"status": None, "confirm_by": NOW + 1, "confirmed_at": EARLIER}, "planned"),
        # expires_at one second ahead is not expired, with or without a status.
        ({"status": None, "expires_at": NOW + 1, "confirmed_at": EARLIER}, "confirmed"),
        ({"status": None, "expires_at": None, "confirmed_at": EARLIER}, "confirmed"),
        ({"status": "pending", "expires_at": None, "confirmed_at": None}, "pending"),
        ({"status": None, "expires_at": NOW, "confirmed_at": EARLIER}, "expired"),
    ],
)
def test_derive_status_at_its_boundaries(fields: dict[str, Any], expected: str) -> None:
    assert rules.derive_status(commitment(**fields), NOW) == expected


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        # The checks in the order: a non-compute commitment is not_compute whatever else is wrong.
        ({"service_type": "network", "resource_name": "cores", "uuid": "x"}, rules.NOT_COMPUTE),
        ({"resource_name": "cores", "uuid": "x"}, rules.NOT_INSTANCES),
        # The prefix must start the name, not merely appear in it.
        ({"resource_name": "xinstances_m1.small"}, rules.NOT_INSTANCES),
        ({"resource_name": "instances_m1.gone", "uuid": "x"}, rules.UNKNOWN_FLAVOR),
        # The flavor is exactly what follows the prefix.
        ({"resource_name": "instances_m1.smal"}, rules.UNKNOWN_FLAVOR),
        ({"resource_name": "instances_1.small"}, rules.UNKNOWN_FLAVOR),
        ({"status": "superseded"}, None),
        ({"status": "expired"}, None),
        ({"status": "pending", "confirmed_at": None}, None),
        ({"status": "planned", "confirm_by": LATER - 1, "confirmed_at": None}, None),
        ({"status": "guaranteed"}, None),
        ({"status": "Confirmed"}, rules.UNKNOWN_STATUS),
        ({"uuid": "9B1C2D3E-AAAA-4BBB-8CCC-0123456789AB"}, rules.INVALID_UUID),
    ],
)
def test_select_reason_or_selection(fields: dict[str, Any], reason: str | None) -> None:
    c = commitment(**fields)
    choice = rules.select(c, P1, {SMALL.name: SMALL}, NOW)
    if reason is None:
        assert choice == rules.Selected(c, P1, SMALL, rules.derive_status(c, NOW))
    else:
        assert choice == rules.Skipped(c, reason)


def test_select_uses_the_derived_status() -> None:
    c = commitment(status="confirmed", expires_at=NOW)
    assert rules.select(c, P2, {SMALL.name: SMALL}, NOW) == rules.Selected(c, P2, SMALL, "expired")


def test_a_compute_commitment_of_another_resource_needs_no_servers() -> None:
    assert not rules.needs_servers([commitment(resource_name="cores")])
    assert rules.needs_servers([commitment(resource_name="instances_anything")])
    assert not rules.is_instance_commitment(commitment(service_type="network"))


# --- subtraction ------------------------------------------------------------------------------------


def test_a_project_without_servers_matches_nothing() -> None:
    # Nova listed servers only for another project: p2's commitment finds none, p1's find theirs.
    items = [selected(commitment(1), P1), selected(commitment(2), P2)]
    matched = rules.match_servers(items, {"p1": (server("a"),)})
    assert matched == {commitment(1).uuid: 1, commitment(2).uuid: 0}


def test_each_project_matches_its_own_servers() -> None:
    items = [selected(commitment(1, amount=1), P1), selected(commitment(2, amount=2), P2)]
    listing = {"p1": (server("a"), server("b")), "p2": (server("c", project="p2"), server("d", project="p2"))}
    assert rules.match_servers(items, listing) == {commitment(1).uuid: 1, commitment(2).uuid: 2}


def test_an_amount_of_zero_matches_no_server() -> None:
    items = [selected(commitment(1, amount=0)), selected(commitment(2, amount=1))]
    assert rules.match_servers(items, {"p1": (server("a"),)}) == {commitment(1).uuid: 0, commitment(2).uuid: 1}


def test_equal_ids_are_ordered_by_uuid() -> None:
    # Limes ids are unique; the UUID only makes the order total, so the tie is decided the same way every pass.
    first = commitment(1, uuid="00000000-0000-4000-8000-000000000001", amount=1)
    second = commitment(1, uuid="00000000-0000-4000-8000-000000000002", amount=1)
    for order in ([first, second], [second, first]):
        matched = rules.match_servers([selected(c) for c in order], {"p1": (server("a"),)})
        assert matched == {first.uuid: 1, second.uuid: 0}


@pytest.mark.parametrize(("resources", "count", "expected"), [
    ((("MEMORY_MB", 4096), ("VCPU", 2)), 3, {"MEMORY_MB": 12288, "VCPU": 6}),
    ((("VCPU", 2),), 1, {"VCPU": 2}),
    ((("VCPU", 2),), 0, {}),  # nothing left to hold: no allocation, not an allocation of zeros
    ((), 4, {}),
])
def test_allocation_for(resources: tuple[tuple[str, int], ...], count: int, expected: dict[str, int]) -> None:
    assert rules.allocation_for(resources, count) == expected


def test_per_instance_keeps_a_single_nonzero_class() -> None:
    assert rules.per_instance(Flavor(id="x", name="x", vcpus=1, ram=0, disk=0)) == (("VCPU", 1),)
    assert rules.per_instance(Flavor(id="x", name="x", vcpus=0, ram=0, disk=1)) == (("DISK_GB", 1),)


# --- pools ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pools", "current", "own", "expected"),
    [
        # An exact fit is a fit.
        ([pool("a", room=2)], None, None, ("a", rules.HELD)),
        ([pool("a", room=0)], "a", NEED2, ("a", rules.HELD)),  # what we hold there is exactly the need
        ([pool("a", room=1)], "a", SMALL_NEED, ("a", rules.HELD)),
        # One class short is no room.
        ([pool("a", DISK_GB=40, MEMORY_MB=8192, VCPU=4)], None, None, ("a", rules.HELD)),
        ([pool("a", DISK_GB=40, MEMORY_MB=8192, VCPU=3)], None, None, (None, rules.NO_ROOM)),
        ([pool("a", DISK_GB=40, MEMORY_MB=8191, VCPU=4)], None, None, (None, rules.NO_ROOM)),
        ([pool("a", DISK_GB=39, MEMORY_MB=8192, VCPU=4)], None, None, (None, rules.NO_ROOM)),
        # The current pool, gone from the list, is not chosen; the first other one by name is.
        ([pool("c"), pool("b")], "a", NEED2, ("b", rules.HELD)),
        # The current pool in another AZ is left.
        ([pool("a", az="az2"), pool("b")], "a", NEED2, ("b", rules.HELD)),
        ([pool("a", az="az2")], "a", NEED2, (None, rules.NO_POOL)),
        # The current pool first, even when another comes first by name.
        ([pool("a"), pool("b")], "b", None, ("b", rules.HELD)),
        # Our hold counts on the current pool only: another pool's room is its own.
        ([pool("a", room=1), pool("b", room=1)], "b", None, (None, rules.NO_ROOM)),
        # An inactive pool with room makes it no_pool, not no_room; an active one in another AZ too.
        ([pool("a", active=False)], None, None, (None, rules.NO_POOL)),
        ([pool("a", az="az2")], None, None, (None, rules.NO_POOL)),
        ([pool("a", active=False), pool("b", room=1)], None, None, (None, rules.NO_ROOM)),
        # Missing one class is no candidate; with every class and too little room it is.
        ([pool("a", DISK_GB=100, MEMORY_MB=100_000)], None, None, (None, rules.NO_POOL)),
        ([pool("a", DISK_GB=100, VCPU=100)], None, None, (None, rules.NO_POOL)),
    ],
)
def test_choose_pool_at_its_edges(pools: list[Pool], current: str | None, own: dict[str, int] | None,
                                  expected: tuple[str | None, str]) -> None:
    assert rules.choose_pool("az1", NEED2, pools, current, own) == expected


def test_choose_pool_without_own_amounts_counts_nothing_held() -> None:
    assert rules.choose_pool("az1", NEED2, [pool("a", room=1)], "a") == (None, rules.NO_ROOM)
    assert rules.choose_pool("az1", NEED2, [pool("a", room=2)], "a") == ("a", rules.HELD)


def test_pools_are_tried_by_name_then_by_key() -> None:
    pools = [room_pool("same", "az1", True, dict(NEED2), id="k2"), room_pool("same", "az1", True, dict(NEED2), id="k1")]
    assert rules.choose_pool("az1", NEED2, pools) == ("k1", rules.HELD)
    assert rules.choose_pool("az1", NEED2, list(reversed(pools))) == ("k1", rules.HELD)


def test_the_current_pool_is_found_by_key_not_name() -> None:
    pools = [room_pool("a", "az1", True, dict(NEED2), id="k-a"), room_pool("b", "az1", True, dict(NEED2), id="k-b")]
    assert rules.choose_pool("az1", NEED2, pools, current="k-b") == ("k-b", rules.HELD)
    assert rules.choose_pool("az1", NEED2, pools, current="b") == ("k-a", rules.HELD)


# --- one listed commitment --------------------------------------------------------------------------


def zero_flavor_item(c: Any) -> rules.Selected:
    return rules.Selected(c, P1, ZERO, rules.derive_status(c, NOW))


def test_a_flavor_with_nothing_to_hold_is_released() -> None:
    c = commitment(5, resource_name="instances_zero", amount=3)
    fresh = rules.decide_present(zero_flavor_item(c), 0, None, None, [pool("a")])
    assert fresh.placement is None
    assert fresh.record is not None
    assert (fresh.record.status, fresh.record.reason, fresh.record.pool, fresh.record.remaining) == (
        "released", rules.NOTHING_TO_HOLD, None, 3)
    assert fresh.record.resources == ()
    # A leftover consumer of ours is deleted.
    leftover = rules.decide_present(zero_flavor_item(c), 0, None, ours({"a": NEED2}, generation=9), [pool("a")])
    assert leftover.placement == rules.PlacementChange("delete", c.uuid, "p1", SYNCER_USER, {}, 9)


@pytest.mark.parametrize(
    ("case", "status", "previous", "consumer", "reason", "change"),
    [
        # The record was held but our consumer is gone: still "after held", nothing to delete.
        ("held record, no consumer", "pending", HELD_A, None, "pending_after_held", None),
        ("held record, planned", "planned", HELD_A, None, "planned_after_held", None),
        # Our consumer alone is proof enough.
        ("our consumer, no record", "planned", None, MINE_A, "planned_after_held", 4),
        # Stays released while waiting, also when the waiting status changes.
        ("released pending, now planned", "planned",
         replace(HELD_A, status="released", reason="pending_after_held", pool=None), None, "planned_after_held", None),
        ("released planned, now pending", "pending",
         replace(HELD_A, status="released", reason="planned_after_held", pool=None), None, "pending_after_held", None),
        # Released for another reason, or never held: simply recorded as waiting.
        ("released fully used", "pending",
         replace(HELD_A, status="released", reason=rules.FULLY_USED, pool=None), None, None, None),
        ("unplaced, nothing of ours", "pending",
         replace(HELD_A, status="unplaced", reason=rules.NO_ROOM, pool=None), None, None, None),
        ("recorded pending", "pending",
         replace(HELD_A, status="pending", reason="status_pending", pool=None), None, None, None),
        # A foreign consumer is not ours: never touched, and no reason to think we held anything.
        ("foreign consumer", "pending", None, replace(MINE_A, user_id="other"), None, None),
    ],
)
def test_waiting_after_a_hold(case: str, status: str, previous: Reservation | None, consumer: Consumer | None,
                              reason: str | None, change: int | None) -> None:
    fields: dict[str, Any] = {"status": status, "confirmed_at": None}
    if status == "planned":
        fields["confirm_by"] = LATER - 1
    item = selected(commitment(7, amount=2, **fields))
    decision = rules.decide_present(item, 0, previous, consumer, [pool("a")])
    assert decision.record is not None
    if reason is None:
        assert (decision.record.status, decision.record.reason, decision.record.pool) == (
            status, f"status_{status}", None), case
    else:
        assert (decision.record.status, decision.record.reason, decision.record.pool) == (
            "released", reason, None), case
    assert decision.record.limes_status == status, case
    if change is None:
        assert decision.placement is None, case
    else:
        assert decision.placement == rules.PlacementChange("delete", item.commitment.uuid, "p1", SYNCER_USER, {},
                                                           change), case


@pytest.mark.parametrize("status", ["expired", "superseded"])
def test_a_terminal_commitment_never_touches_a_foreign_consumer(status: str) -> None:
    foreign = replace(MINE_A, user_id="someone")
    decision = rules.decide_present(selected(commitment(7, status=status)), 0, HELD_A, foreign, [pool("a")])
    assert decision.placement is None
    assert decision.record is not None
    assert (decision.record.status, decision.record.reason, decision.record.limes_status) == (
        "released", status, status)
    # Our user on a project that is neither the commitment's nor the recorded one: not ours either.
    stranger = ours({"a": NEED2}, project="p9")
    assert rules.decide_present(selected(commitment(7, status=status)), 0, HELD_A, stranger,
                                [pool("a")]).placement is None


def test_a_terminal_commitment_releases_our_consumer_without_a_record() -> None:
    decision = rules.decide_present(selected(commitment(7, status="superseded")), 0, None, MINE_A, [pool("a")])
    assert decision.placement == rules.PlacementChange("delete", C.uuid, "p1", SYNCER_USER, {}, 4)


@pytest.mark.parametrize(
    ("case", "fields", "matched", "flavor", "reason"),
    [
        ("waiting after held", {"status": "pending", "confirmed_at": None}, 0, SMALL, "pending_after_held"),
        ("fully used", {}, 2, SMALL, rules.FULLY_USED),
        ("nothing to hold", {"resource_name": "instances_zero"}, 0, ZERO, rules.NOTHING_TO_HOLD),
        ("superseded", {"status": "superseded"}, 0, SMALL, "superseded"),
    ],
)
def test_a_release_after_a_transfer_deletes_our_consumer_on_the_recorded_project(
        case: str, fields: dict[str, Any], matched: int, flavor: Flavor, reason: str) -> None:
    # The commitment moved whole from p1 to p2; our consumer is still on p1, where our record says it is.
    c = commitment(7, amount=2, **fields)
    item = rules.Selected(c, P2, flavor, rules.derive_status(c, NOW))
    decision = rules.decide_present(item, matched, HELD_A, MINE_A, [pool("a")])
    assert decision.record is not None
    assert (decision.record.status, decision.record.reason, decision.record.project_id) == (
        "released", reason, "p2"), case
    assert decision.placement == rules.PlacementChange("delete", c.uuid, "p1", SYNCER_USER, {}, 4), case


def test_the_record_of_a_held_commitment_in_full() -> None:
    c = commitment(9, amount=5, availability_zone="az1", expires_at=LATER + 7)
    project = P1.model_copy(update={"domain_id": "d9"})
    decision = rules.decide_present(rules.Selected(c, project, SMALL, "guaranteed"), 2, None, None,
                                    [pool("a", room=3)])
    assert decision.record == Reservation(
        commitment_uuid=c.uuid, commitment_id=9, project_id="p1", domain_id="d9", availability_zone="az1",
        flavor="m1.small", amount=5, matched=2, remaining=3, resources=(("DISK_GB", 20), ("MEMORY_MB", 4096),
                                                                        ("VCPU", 2)),
        status="held", reason=rules.HELD, pool="a", expires_at=LATER + 7, limes_status="guaranteed",
    )
    assert decision.record.creator == CREATOR == "commitments syncer"
    assert decision.placement == rules.PlacementChange("write", c.uuid, "p1", SYNCER_USER, {"a": times(SMALL_NEED, 3)},
                                                       None)


def test_the_record_of_an_unplaced_commitment_in_full() -> None:
    decision = rules.decide_present(selected(C), 0, None, None, [pool("a", room=1)])
    assert decision == rules.Decision(record_for(C, status="unplaced", reason=rules.NO_ROOM, pool=None))


def test_the_record_of_a_released_commitment_in_full() -> None:
    decision = rules.decide_present(selected(C), 3, None, None, [pool("a")])
    assert decision == rules.Decision(record_for(C, matched=3, remaining=0, status="released",
                                                 reason=rules.FULLY_USED, pool=None))


def test_a_pending_record_in_full() -> None:
    c = commitment(7, amount=2, status="pending", confirmed_at=None)
    decision = rules.decide_present(selected(c), 1, None, None, [pool("a")])
    assert decision == rules.Decision(record_for(c, matched=1, remaining=1, status="pending", reason="status_pending",
                                                 pool=None, limes_status="pending"))


def test_our_consumer_without_a_held_record_and_not_adoptable_is_a_conflict() -> None:
    # Our user and project, but our record holds nothing and the allocation is not what we would write.
    unplaced = replace(HELD_A, status="unplaced", reason=rules.NO_ROOM, pool=None)
    decision = rules.decide_present(selected(C), 0, unplaced, ours({"a": SMALL_NEED}), [pool("a")])
    assert decision == rules.Decision(replace(HELD_A, status="conflict", reason=rules.FOREIGN_CONSUMER, pool=None))


def test_a_consumer_on_the_old_project_without_a_held_record_is_not_adopted() -> None:
    # Adoption needs the commitment's project; the recorded one counts only while our record holds the pool.
    unplaced = replace(HELD_A, status="unplaced", reason=rules.NO_ROOM, pool=None)
    decision = rules.decide_present(selected(C, P2), 0, unplaced, MINE_A, [pool("a")])
    assert decision.record is not None
    assert (decision.record.status, decision.record.reason, decision.placement) == (
        "conflict", rules.FOREIGN_CONSUMER, None)


def test_a_consumer_on_two_pools_is_not_adopted_but_ours_is_rewritten() -> None:
    # Listed "b" first: neither of its two pools is the current one, so the first by name is chosen.
    split = ours({"b": SMALL_NEED, "a": SMALL_NEED}, generation=6)
    # Not what we would write: without our record it is someone's, left alone.
    stranger = rules.decide_present(selected(C), 0, None, split, [pool("a"), pool("b")])
    assert stranger.record is not None
    assert (stranger.record.status, stranger.placement) == ("conflict", None)
    # With our record it is ours: rewritten onto the first pool by name, generation-checked.
    mine = rules.decide_present(selected(C), 0, HELD_A, split, [pool("b"), pool("a")])
    assert mine.record is not None
    assert (mine.record.status, mine.record.pool) == ("held", "a")
    assert mine.placement == rules.PlacementChange("write", C.uuid, "p1", SYNCER_USER, {"a": NEED2}, 6)


def test_adoption_needs_the_pool_we_would_choose_to_fit() -> None:
    # Exactly what we would write, on a pool that is no longer active: not adopted.
    decision = rules.decide_present(selected(C), 0, None, MINE_A, [pool("a", active=False), pool("b")])
    assert decision.record is not None
    assert (decision.record.status, decision.placement) == ("conflict", None)
    # Adopted when our own hold makes the fit exact.
    adopted = rules.decide_present(selected(C), 0, None, MINE_A, [pool("a", room=0)])
    assert adopted == rules.Decision(HELD_A)


def test_an_unplaced_hold_keeps_its_pool_and_counts_our_amounts() -> None:
    # Grown from 2 to 3 with room for one more on the current pool only thanks to what we hold: held.
    grown = commitment(7, amount=3)
    decision = rules.decide_present(selected(grown), 0, HELD_A, MINE_A, [pool("a", room=1)])
    assert decision.record is not None
    assert (decision.record.status, decision.record.pool) == ("held", "a")
    assert decision.placement == rules.PlacementChange("write", C.uuid, "p1", SYNCER_USER,
                                                       {"a": times(SMALL_NEED, 3)}, 4)


def test_an_unchanged_hold_writes_nothing_but_a_changed_one_does() -> None:
    assert rules.decide_present(selected(C), 0, HELD_A, MINE_A, [pool("a")]).placement is None
    other_pool_amounts = ours({"a": NEED2, "b": {}}, generation=4)
    assert rules.decide_present(selected(C), 0, HELD_A, other_pool_amounts, [pool("a")]).placement is not None


# --- a kept commitment missing from the answers -----------------------------------------------------


@pytest.mark.parametrize(
    ("previous", "now", "status", "reason", "missing", "limes_status"),
    [
        # A recorded expiry at this very second has passed.
        (HELD_A, float(HELD_A.expires_at or 0), "released", "expired", 0, "expired"),
        (HELD_A, float(HELD_A.expires_at or 0) - 1, "held", rules.HELD, 1, "confirmed"),
        # The count goes on from the stored one; the reason given is the one recorded.
        (replace(HELD_A, missing_passes=1), NOW, "released", rules.PROJECT_GONE, 2, "confirmed"),
        (replace(HELD_A, missing_passes=5), NOW, "released", rules.PROJECT_GONE, 6, "confirmed"),
        (HELD_A, NOW, "held", rules.HELD, 1, "confirmed"),
    ],
)
def test_decide_missing_at_its_boundaries(previous: Reservation, now: float, status: str, reason: str,
                                          missing: int, limes_status: str) -> None:
    decision = rules.decide_missing(previous, MINE_A, now, rules.PROJECT_GONE)
    assert decision.record == replace(previous, status=status, reason=reason, missing_passes=missing,
                                      limes_status=limes_status, pool=None if status == "released" else previous.pool)
    if status == "released":
        assert decision.placement == rules.PlacementChange("delete", C.uuid, "p1", SYNCER_USER, {}, 4)
    else:
        assert decision.placement is None


def test_a_released_record_still_deletes_a_leftover_consumer_of_ours() -> None:
    released = replace(HELD_A, status="released", reason=rules.FULLY_USED, pool=None, missing_passes=1)
    decision = rules.decide_missing(released, MINE_A, NOW, rules.MISSING_FROM_LIMES)
    assert decision == rules.Decision(released, rules.PlacementChange("delete", C.uuid, "p1", SYNCER_USER, {}, 4))
    # Someone else's consumer is never deleted.
    assert rules.decide_missing(released, replace(MINE_A, user_id="x"), NOW,
                                rules.MISSING_FROM_LIMES) == rules.Decision(released)


def test_record_changed_compares_every_field() -> None:
    assert rules.record_changed(replace(HELD_A, missing_passes=1), HELD_A)
    assert rules.record_changed(replace(HELD_A, limes_status="guaranteed"), HELD_A)
    assert not rules.record_changed(None, None)


# --- a whole pass -----------------------------------------------------------------------------------


def test_writes_lists_a_placement_change_even_when_the_record_is_unchanged() -> None:
    change = rules.PlacementChange("delete", C.uuid, "p1", SYNCER_USER, {}, 4)
    plan = rules.PassPlan(decisions={C.uuid: rules.Decision(HELD_A, change), "other": rules.Decision(HELD_A),
                                     "none": rules.Decision(None)})
    assert plan.writes({C.uuid: HELD_A, "other": HELD_A}) == [(C.uuid, rules.Decision(HELD_A, change))]
    assert plan.writes({}) == [(C.uuid, rules.Decision(HELD_A, change)), ("other", rules.Decision(HELD_A))]


def test_status_counts_are_the_records_after_the_pass() -> None:
    stored = {"x": replace(HELD_A, status="planned"), "y": HELD_A}
    plan = rules.PassPlan(decisions={"y": rules.Decision(replace(HELD_A, status="released")),
                                     "z": rules.Decision(HELD_A), "none": rules.Decision(None)})
    assert plan.status_counts(stored) == Counter({"planned": 1, "released": 1, "held": 1})
    assert stored["y"] == HELD_A  # the stored records are read, not changed


def test_a_pass_counts_commitments_skips_and_malformed() -> None:
    snap = snapshot({"p1": [commitment(1), commitment(2, resource_name="cores")],
                     "p2": [commitment(3, service_type="network")]}, malformed=3)
    plan = rules.plan_pass(snap, {}, {}, [pool("a")], NOW)
    assert plan.commitments == 6  # every listed entry, parsed or not (issue 14 item 1)
    assert plan.skipped == Counter({rules.MALFORMED: 3, rules.NOT_INSTANCES: 1, rules.NOT_COMPUTE: 1})
    assert set(plan.decisions) == {commitment(1).uuid}


def test_skips_of_one_reason_add_up() -> None:
    snap = snapshot({"p1": [commitment(1, resource_name="instances_gone"), commitment(2, resource_name="instances_x")],
                     "p2": [commitment(3, resource_name="instances_y")]}, malformed=1)
    plan = rules.plan_pass(snap, {}, {}, [pool("a")], NOW)
    assert plan.skipped == Counter({rules.UNKNOWN_FLAVOR: 3, rules.MALFORMED: 1})


def test_a_skipped_commitment_is_not_missing() -> None:
    # Listed but skipped (unknown flavor): its record is left as it is, not counted towards the two-pass release.
    stored = {C.uuid: HELD_A}
    snap = snapshot({"p1": [commitment(7, resource_name="instances_gone")]})
    for _ in range(2):
        plan = rules.plan_pass(snap, stored, {C.uuid: MINE_A}, [pool("a")], NOW)
        assert plan.decisions == {}


def test_a_pass_names_the_reason_of_a_missing_commitment_by_its_project() -> None:
    stored = {commitment(1).uuid: replace(record_for(commitment(1)), missing_passes=1),
              commitment(2).uuid: replace(record_for(commitment(2)), project_id="p2", missing_passes=1),
              commitment(3).uuid: replace(record_for(commitment(3)), project_id="p3", missing_passes=1)}
    plan = rules.plan_pass(snapshot({}, projects=(P1, P2)), stored, {}, [pool("a")], NOW)
    assert {uuid: (d.record.status, d.record.reason) for uuid, d in plan.decisions.items() if d.record} == {
        commitment(1).uuid: ("released", rules.MISSING_FROM_LIMES),
        commitment(2).uuid: ("released", rules.MISSING_FROM_LIMES),
        commitment(3).uuid: ("released", rules.PROJECT_GONE),
    }


def test_a_pass_passes_each_commitment_its_own_consumer_and_record() -> None:
    c1, c2 = commitment(1), commitment(2)
    stored = {c1.uuid: record_for(c1), c2.uuid: record_for(c2)}
    consumers = {c1.uuid: ours({"a": NEED2}, generation=3), c2.uuid: ours({"a": NEED2}, generation=8)}
    gone = replace(record_for(commitment(3)), missing_passes=1)
    consumers[commitment(3).uuid] = ours({"a": NEED2}, generation=5)
    plan = rules.plan_pass(snapshot({"p1": [c1, c2]}, servers={"p1": [server("s")]}),
                           {**stored, commitment(3).uuid: gone}, consumers, [pool("a", room=0)], NOW)
    assert plan.decisions[c1.uuid].placement == rules.PlacementChange(
        "write", c1.uuid, "p1", SYNCER_USER, {"a": SMALL_NEED}, 3)  # one server runs: one instance held
    assert plan.decisions[c2.uuid].placement is None
    assert plan.decisions[commitment(3).uuid].placement == rules.PlacementChange(
        "delete", commitment(3).uuid, "p1", SYNCER_USER, {}, 5)


def test_a_smaller_hold_frees_room_for_the_next_commitment_in_the_same_pass() -> None:
    world = World([pool("a", room=3)])
    world.run(snapshot({"p1": [commitment(1, amount=2), commitment(2, amount=2)]}))
    assert world.records[commitment(2).uuid].status == "unplaced"
    # A VM of commitment 1 starts: its hold shrinks to one instance, and commitment 2 fits in what that frees.
    plan, _ = world.run(snapshot({"p1": [commitment(1, amount=2), commitment(2, amount=2)]},
                                 servers={"p1": [server("s")]}))
    assert plan.decisions[commitment(2).uuid].record.status == "held"
    assert dict(world.consumers[commitment(1).uuid].allocations) == {"a": SMALL_NEED}


def test_a_hold_takes_its_room_from_the_commitments_after_it() -> None:
    plan = rules.plan_pass(snapshot({"p1": [commitment(2, amount=2), commitment(1, amount=2)]}), {}, {},
                           [pool("a", room=2), pool("b", room=2)], NOW)
    assert [plan.decisions[commitment(n).uuid].record.pool for n in (1, 2)] == ["a", "b"]


def test_pools_named_by_id_are_counted_by_id_within_a_pass() -> None:
    pools = [room_pool("a", "az1", True, dict(NEED2), id="k-a"), room_pool("b", "az1", True, dict(NEED2), id="k-b")]
    plan = rules.plan_pass(snapshot({"p1": [commitment(1), commitment(2)]}), {}, {}, pools, NOW)
    assert [plan.decisions[commitment(n).uuid].record.pool for n in (1, 2)] == ["k-a", "k-b"]


def test_a_hold_on_a_pool_no_longer_listed_moves_without_miscounting() -> None:
    # Our consumer sits on a pool the tenant no longer has: the hold moves, and the old amounts are not
    # counted as room on any listed pool.
    c1, c2 = commitment(1), commitment(2)
    stored = {c1.uuid: record_for(c1, pool="gone")}
    consumers = {c1.uuid: ours({"gone": NEED2}, generation=2)}
    plan = rules.plan_pass(snapshot({"p1": [c1, c2]}), stored, consumers, [pool("a", room=3)], NOW)
    assert plan.decisions[c1.uuid].placement == rules.PlacementChange("write", c1.uuid, "p1", SYNCER_USER,
                                                                      {"a": NEED2}, 2)
    assert plan.decisions[c2.uuid].record.status == "unplaced"


def test_a_missing_commitments_release_frees_room_for_a_listed_one() -> None:
    gone = replace(record_for(commitment(1)), missing_passes=1)
    plan = rules.plan_pass(snapshot({"p1": [commitment(2)]}), {commitment(1).uuid: gone},
                           {commitment(1).uuid: ours({"a": NEED2})}, [pool("a", room=0)], NOW)
    assert plan.decisions[commitment(2).uuid].record.status == "held"


# --- the stored record ------------------------------------------------------------------------------


def test_from_dict_reads_what_the_store_gives_back() -> None:
    # DynamoDB numbers come back as Decimal; older items may lack the keys added later.
    item = {
        "commitmentUuid": C.uuid, "commitmentId": Decimal(7), "projectId": "p1", "domainId": "d1",
        "availabilityZone": "az1", "flavor": "m1.small", "amount": Decimal(2), "matched": Decimal(0),
        "remaining": Decimal(2), "resources": {"VCPU": Decimal(2), "DISK_GB": Decimal(20), "MEMORY_MB": Decimal(4096)},
        "status": "held", "reason": rules.HELD, "pool": "a", "expiresAt": Decimal(LATER), "limesStatus": "confirmed",
    }
    record = Reservation.from_dict(item)
    assert record == HELD_A
    assert [type(v) for v in (record.commitment_id, record.amount, record.matched, record.remaining,
                              record.expires_at, record.missing_passes)] == [int] * 6
    assert all(type(n) is int for _, n in record.resources)
    assert (record.missing_passes, record.creator) == (0, "commitments syncer")


def test_from_dict_with_nothing_held_and_no_expiry() -> None:
    item = {**HELD_A.to_dict(), "pool": None, "expiresAt": None, "resources": None, "missingPasses": Decimal(1),
            "creator": "someone"}
    record = Reservation.from_dict(item)
    assert (record.pool, record.expires_at, record.resources, record.missing_passes, record.creator) == (
        None, None, (), 1, "someone")
    without = {k: v for k, v in HELD_A.to_dict().items() if k not in ("pool", "expiresAt", "resources")}
    record = Reservation.from_dict(without)
    assert (record.pool, record.expires_at, record.resources) == (None, None, ())
    assert Reservation.from_dict({**HELD_A.to_dict(), "expiresAt": 0}).expires_at == 0


def test_to_dict_names_every_field() -> None:
    record = replace(HELD_A, missing_passes=1, creator="x")
    assert record.to_dict() == {
        "commitmentUuid": C.uuid, "commitmentId": 7, "projectId": "p1", "domainId": "d1",
        "availabilityZone": "az1", "flavor": "m1.small", "amount": 2, "matched": 0, "remaining": 2,
        "resources": SMALL_NEED, "status": "held", "reason": rules.HELD, "pool": "a", "expiresAt": LATER,
        "limesStatus": "confirmed", "missingPasses": 1, "creator": "x",
    }


def test_a_pool_is_named_by_its_id_else_its_name() -> None:
    assert room_pool("n", "az1", True, {}, id="k").key == "k"
    assert room_pool("n", "az1", True, {}).key == "n"
