"""The commitment sync's rules for what upstream lists (issue 14 items 1, 2, 5, 6, 7, 8): anything listed is never
missing, each entry counts once, a fit is what Placement accepts, a server counts for its own project, a UUID
of two projects is a conflict, and Limes answering 404 everywhere is a fault. The helpers are test_commitments_rules'.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from chalicelib.commitments import rules
from chalicelib.commitments.models import Commitment, Pool, Reservation
from chalicelib.placement.errors import PlacementError
from chalicelib.placement.models import ConsumerWrite, Inventory, Provider
from chalicelib.placement.rules import decide_allocations
from tests.unit.test_commitments_rules import (
    LATER,
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
    selected,
    server,
    snapshot,
)

C1 = commitment(1)

# --- item 1: read only what is used, tolerantly; a listed commitment is never missing -------------------------


def test_keys_the_rules_do_not_use_never_make_a_commitment_unreadable() -> None:
    raw = C1.model_dump() | {"created_at": "2026-01-01T00:00:00Z", "duration": {"weird": True}, "unit": 5,
                             "transfer_status": 3}
    assert Commitment.model_validate(raw) == C1


@pytest.mark.parametrize(("value", "seconds"), [
    (LATER, LATER), (float(LATER), LATER), (str(LATER), LATER), (f" {LATER}.0", LATER),
    ("20270115", 20_270_115),  # a number, though it reads as a basic ISO 8601 date too
    ("2027-01-15T08:00:00Z", NOW), ("2027-01-15T08:00:00", NOW),
    ("2027-01-15T10:00:00+02:00", NOW),
])
def test_times_are_read_tolerantly(value: object, seconds: int) -> None:
    assert Commitment.model_validate(C1.model_dump() | {"expires_at": value}).expires_at == seconds


def test_a_timestamp_without_an_offset_is_utc_wherever_the_service_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        assert Commitment.model_validate(C1.model_dump() | {"expires_at": "2027-01-15T08:00:00"}).expires_at == NOW
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.parametrize("fields", [{"amount": "five"}, {"amount": -1}, {"amount": 2.5}, {"expires_at": "soon"},
                                    {"expires_at": f"{NOW}.5"}, {"expires_at": NOW + 0.5}, {"uuid": ""},
                                    {"id": "one"}])
def test_what_is_used_and_unreadable_does_not_parse(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Commitment.model_validate(C1.model_dump() | fields)


def test_a_commitment_that_does_not_parse_keeps_its_record_and_hold() -> None:
    world = World([pool("a")])
    world.run(snapshot({"p1": [C1]}))
    held = dict(world.records)
    for _ in range(3):  # the two-pass rule would have released it on the second
        plan, writes = world.run(snapshot({"p1": []}, unparsed={"p1": (C1.uuid,)}))
        assert (writes, plan.commitments, plan.skipped) == (0, 1, Counter({rules.MALFORMED: 1}))
    assert world.records == held and C1.uuid in world.consumers


def test_an_entry_without_a_readable_uuid_keeps_every_record_of_its_project() -> None:
    c2 = commitment(2)
    world = World([pool("a")])
    world.run(snapshot({"p1": [C1], "p2": [c2]}))
    for _ in range(2):
        world.run(snapshot({}, unparsed={"p1": (None,)}))
    assert world.records[C1.uuid].status == "held"  # which entry it was cannot be told: none is missing
    assert (world.records[c2.uuid].status, world.records[c2.uuid].reason) == ("released", rules.MISSING_FROM_LIMES)


# --- item 2: every project, commitment and server once -----------------------------------------------------


def test_a_repeated_commitment_counts_once_and_still_subtracts_its_servers() -> None:
    snap = snapshot({"p1": [C1, C1]}, servers={"p1": [server("s1"), server("s1")]}, projects=(P1, P1, P2))
    plan = rules.plan_pass(snap, {}, {}, [pool("a")], NOW)
    record = plan.decisions[C1.uuid].record
    assert record is not None and (record.matched, record.remaining) == (1, 1)
    assert (plan.commitments, plan.projects) == (1, 2)


@pytest.mark.parametrize(("snap", "what"), [
    (snapshot({"p1": [C1, commitment(1, amount=3)]}), "commitment"),
    (snapshot({"p1": [C1]}, servers={"p1": [server("s1"), server("s1", az="az2")]}), "server"),
    (snapshot({"p1": [C1]}, projects=(P1, P1.model_copy(update={"domain_id": "d2"}))), "project"),
], ids=["commitment", "server", "project"])
def test_duplicates_that_contradict_each_other_fail_closed(snap: object, what: str) -> None:
    with pytest.raises(rules.Untrusted) as fault:
        rules.plan_pass(snap, {}, {}, [pool("a")], NOW)  # type: ignore[arg-type]
    assert fault.value.what == f"{what} listed twice, differently" and str(fault.value) == fault.value.what


def test_a_project_without_a_commitments_entry_has_none() -> None:
    bare = replace(snapshot({}), commitments={})  # Snapshot promises an entry per project; be safe without
    plan = rules.plan_pass(bare, {}, {}, [pool("a")], NOW)
    assert (plan.commitments, plan.projects, plan.decisions) == (0, 2, {})


def test_unique_keeps_the_first_of_equal_entries_in_order() -> None:
    assert rules.unique([3, 1, 3, 2, 1], lambda n: n, "number") == (3, 1, 2)


# --- item 6: a server counts for its own project only ---------------------------------------------------------


def test_another_projects_server_in_a_listing_is_not_subtracted() -> None:
    listing = {"p1": [server("s1", project="p2"), server("s2", project="p2"), server("s3")]}
    assert rules.match_servers([selected(C1)], listing) == {C1.uuid: 1}
    plan = rules.plan_pass(snapshot({"p1": [C1]}, servers=listing), {}, {}, [pool("a")], NOW)
    record = plan.decisions[C1.uuid].record
    assert record is not None and (record.matched, record.remaining) == (1, 1)


# --- item 7: one UUID in two projects -----------------------------------------------------------------------


def test_a_uuid_listed_by_two_projects_is_a_conflict_left_alone() -> None:
    world = World([pool("a")])
    plan, _ = world.run(snapshot({"p1": [C1], "p2": [C1]}))
    record = plan.decisions[C1.uuid]
    assert record.record is not None and record.placement is None
    assert (record.record.status, record.record.reason, record.record.project_id) == (
        "conflict", rules.UUID_IN_SEVERAL_PROJECTS, "p1")
    assert plan.status_counts(world.records)["conflict"] == 1 and C1.uuid not in world.consumers
    assert world.run(snapshot({"p1": [C1], "p2": [C1]}))[1] == 0  # stable


def test_a_uuid_one_project_lists_unreadable_and_another_readable_is_a_conflict() -> None:
    plan = rules.plan_pass(snapshot({"p1": [C1]}, unparsed={"p2": (C1.uuid,)}), {}, {}, [pool("a")], NOW)
    record = plan.decisions[C1.uuid].record
    assert record is not None and (record.status, record.project_id) == ("conflict", "p1")


def test_a_conflict_is_listed_so_its_missing_count_restarts() -> None:
    previous = record_for(C1, missing_passes=1)
    plan = rules.plan_pass(snapshot({"p1": [C1], "p2": [C1]}), {C1.uuid: previous}, {}, [pool("a")], NOW)
    assert plan.decisions[C1.uuid].record == replace(previous, status="conflict",
                                                     reason=rules.UUID_IN_SEVERAL_PROJECTS, missing_passes=0)


def test_a_held_commitment_that_a_second_project_lists_keeps_its_hold_as_a_conflict() -> None:
    world = World([pool("a")])
    world.run(snapshot({"p1": [C1]}))
    consumer = world.consumers[C1.uuid]
    plan, _ = world.run(snapshot({"p1": [C1], "p2": [commitment(1, amount=5)]}))
    record = world.records[C1.uuid]
    assert (record.status, record.reason, record.pool) == ("conflict", rules.UUID_IN_SEVERAL_PROJECTS, "a")
    assert world.consumers[C1.uuid] == consumer and plan.decisions[C1.uuid].placement is None
    # Listed by one project again: ours (recorded on the pool), held as before, nothing written to Placement.
    plan, _ = world.run(snapshot({"p1": [C1]}))
    assert world.records[C1.uuid].status == "held" and plan.decisions[C1.uuid].placement is None


# --- item 8: Limes 404 for every project ---------------------------------------------------------------------


def test_limes_404_everywhere_while_reservations_are_kept_fails_closed() -> None:
    stored = {C1.uuid: record_for(C1)}
    every = snapshot({}, not_found=frozenset({"p1", "p2"}))
    with pytest.raises(rules.Untrusted) as fault:
        rules.plan_pass(every, stored, {C1.uuid: ours({"a": NEED2})}, [pool("a")], NOW)
    assert fault.value.what == "every project answered 404"
    # Not a fault: one project still answers; nothing kept; only released records kept.
    rules.plan_pass(snapshot({}, not_found=frozenset({"p1"})), stored, {}, [pool("a")], NOW)
    rules.plan_pass(every, {}, {}, [pool("a")], NOW)
    rules.plan_pass(every, {C1.uuid: record_for(C1, status="released", pool=None)}, {}, [pool("a")], NOW)


# --- item 5: a fit is what Placement accepts ---------------------------------------------------------------


def constrained(name: str, **inventory: object) -> Pool:
    """A pool with room for ten small instances, VCPU's inventory changed as given."""
    inventories = {cls: Inventory(total=amount * 10) for cls, amount in SMALL_NEED.items()}
    inventories["VCPU"] = replace(inventories["VCPU"], **inventory)  # type: ignore[arg-type]
    return Pool(name=name, availability_zone="az1", active=True, inventories=inventories)


@pytest.mark.parametrize(("inventory", "reason"), [
    ({"max_unit": 3}, rules.UNIT_CONSTRAINTS),  # two instances need VCPU 4
    ({"min_unit": 5}, rules.UNIT_CONSTRAINTS),
    ({"step_size": 3}, rules.UNIT_CONSTRAINTS),
    ({"reserved": 17}, rules.NO_ROOM),  # 20 - 17 = 3 < 4
    ({"allocation_ratio": 0.1}, rules.NO_ROOM),  # floor(20 x 0.1) = 2 < 4
])
def test_a_pool_placement_refuses_is_passed_over_for_the_next(inventory: dict[str, object], reason: str) -> None:
    refusing = constrained("a", **inventory)
    assert rules.placement_refusal(refusing, NEED2, {}) == reason
    assert rules.choose_pool("az1", NEED2, [refusing, pool("b")]) == ("b", rules.HELD)
    assert rules.choose_pool("az1", NEED2, [refusing]) == (None, reason)
    world = World([])
    plan = rules.plan_pass(snapshot({"p1": [C1]}), world.records, {}, [refusing, pool("b")], NOW)
    assert plan.decisions[C1.uuid].placement.allocations == {"b": NEED2}  # type: ignore[union-attr]
    unplaced = rules.plan_pass(snapshot({"p1": [C1]}), {}, {}, [refusing], NOW).decisions[C1.uuid]
    assert unplaced.record is not None and (unplaced.record.status, unplaced.record.reason) == ("unplaced", reason)
    assert unplaced.placement is None


@pytest.mark.parametrize(("pool_", "need", "own"), [
    (constrained("a", step_size=3), {"VCPU": 1}, {}),  # lifted: min_unit 1 takes one
    (constrained("a", max_unit=2), {"VCPU": 3}, {}),  # lifted: step_size 1 takes three
    (replace(constrained("a", max_unit=3), used={"VCPU": 18}), {"VCPU": 18}, {"VCPU": 16}),  # room counts own
])
def test_unit_constraints_is_the_reason_when_lifting_them_would_fit(pool_: Pool, need: dict[str, int],
                                                                    own: dict[str, int]) -> None:
    assert rules.placement_refusal(pool_, need, own) == rules.UNIT_CONSTRAINTS


def test_what_we_hold_counts_on_the_current_pool_only() -> None:
    pools = [replace(constrained("a"), used={"VCPU": 18}), constrained("b", max_unit=3)]
    assert rules.choose_pool("az1", {"VCPU": 4}, pools, current="b", own_on_current={"VCPU": 4}) == (
        None, rules.NO_ROOM)


def test_the_record_of_a_new_conflict_in_full() -> None:
    listed = commitment(1, amount=3, status=None, confirm_by=LATER - 1, confirmed_at=None)
    gone = commitment(2, resource_name="instances_m9.gone")
    plan = rules.plan_pass(snapshot({"p1": [listed, gone], "p2": [listed, gone]}, projects=(P2, P1)), {}, {},
                           [pool("a")], NOW)
    assert plan.decisions[listed.uuid] == rules.Decision(Reservation(
        commitment_uuid=listed.uuid, commitment_id=1, project_id="p1", domain_id="d1", availability_zone="az1",
        flavor="m1.small", amount=3, matched=0, remaining=3, resources=rules.per_instance(SMALL), status="conflict",
        reason=rules.UUID_IN_SEVERAL_PROJECTS, pool=None, expires_at=listed.expires_at, limes_status="planned"))
    record = plan.decisions[gone.uuid].record
    assert record is not None and (record.flavor, record.resources, record.amount) == ("m9.gone", (), 2)
    cores = commitment(3, resource_name="cores")
    record = rules.conflict_record(P1, cores, {}, NOW)
    assert (record.flavor, record.commitment_id, record.domain_id) == ("cores", 3, "d1")


def test_room_for_capacity_wins_over_unit_constraints_as_the_reason() -> None:
    assert rules.choose_pool("az1", NEED2, [constrained("a", max_unit=3), constrained("b", reserved=19)]) == (
        None, rules.NO_ROOM)


def test_a_ratio_above_one_gives_room_placement_gives() -> None:
    assert rules.choose_pool("az1", {"VCPU": 30}, [constrained("a", allocation_ratio=1.5)]) == ("a", rules.HELD)


inventories = st.builds(
    lambda total, reserved, min_unit, max_unit, step, ratio, used: (
        Inventory(total=total, reserved=reserved, min_unit=min_unit, max_unit=max_unit, step_size=step,
                  allocation_ratio=ratio), used),
    st.integers(1, 40), st.integers(0, 40), st.integers(1, 8), st.integers(1, 40), st.integers(1, 5),
    st.sampled_from([0.5, 1.0, 1.5, 4.0]), st.integers(0, 40))


@settings(max_examples=300, deadline=None)
@given(st.lists(inventories, min_size=1, max_size=4), st.integers(1, 24))
def test_the_chosen_pool_is_one_placement_accepts_and_none_only_when_none_would(pools: list[tuple[Inventory, int]],
                                                                                 vcpu: int) -> None:
    candidates = [Pool(name=f"p{i}", availability_zone="az1", active=True, inventories={"VCPU": inv},
                       used={"VCPU": used}) for i, (inv, used) in enumerate(pools)]

    def accepts(p: Pool) -> bool:
        provider = Provider(uuid=p.key, name=p.name, inventories=dict(p.inventories), usages=dict(p.used))
        try:
            decide_allocations([ConsumerWrite(uuid="c", project_id="p", user_id="u", allocations={p.key: {
                "VCPU": vcpu}})], {"c": None}, {p.key: provider}, lambda _: True, lambda _: "")
        except PlacementError:
            return False
        return True

    chosen, _ = rules.choose_pool("az1", {"VCPU": vcpu}, candidates)
    accepting = [p.key for p in candidates if accepts(p)]
    assert chosen == (accepting[0] if accepting else None)
