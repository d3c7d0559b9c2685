"""The commitment sync's pure rules, table by table (issue 10, research/commitments.md §6)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.commitments import rules
from chalicelib.commitments.models import (
    SYNCER_USER,
    Commitment,
    Consumer,
    Flavor,
    Pool,
    Project,
    Reservation,
    Server,
    Snapshot,
)
from chalicelib.placement.models import Inventory

NOW = 1_800_000_000
LATER = NOW + 86_400 * 365
EARLIER = NOW - 86_400

SMALL = Flavor(id="f1", name="m1.small", vcpus=2, ram=4096, disk=20)
VOLUME = Flavor(id="f2", name="bfv.large", vcpus=8, ram=32768, disk=0)
FLAVORS = {f.name: f for f in (SMALL, VOLUME)}
P1 = Project(id="p1", name="one", domain_id="d1")
P2 = Project(id="p2", name="two", domain_id="d1")
SMALL_NEED = {"DISK_GB": 20, "MEMORY_MB": 4096, "VCPU": 2}


def commitment(n: int = 1, **overrides: Any) -> Commitment:
    values: dict[str, Any] = {
        "id": n, "uuid": f"00000000-0000-4000-8000-{n:012d}", "service_type": "compute",
        "resource_name": "instances_m1.small", "availability_zone": "az1", "amount": 2, "duration": "1 year",
        "created_at": EARLIER, "confirmed_at": EARLIER, "expires_at": LATER, "status": "confirmed",
    }
    values.update(overrides)
    return Commitment.model_validate(values)


def server(sid: str, project: str = "p1", az: str = "az1", flavor: str = "m1.small", status: str = "ACTIVE") -> Server:
    return Server(id=sid, tenant_id=project, availability_zone=az, flavor_name=flavor, status=status)


def room_pool(name: str, az: str, active: bool, free: dict[str, int], id: str | None = None) -> Pool:  # noqa: A002
    """A pool whose provider has inventory of `free` per class (Placement's defaults otherwise), nothing used."""
    return Pool(name=name, availability_zone=az, active=active,
                inventories={cls: Inventory(total=amount) for cls, amount in free.items()}, id=id)


def pool(name: str, az: str = "az1", active: bool = True, room: int = 10, **free: int) -> Pool:
    amounts = free or {cls: amount * room for cls, amount in SMALL_NEED.items()}
    return room_pool(name, az, active, amounts)


def ours(allocations: dict[str, dict[str, int]], generation: int = 1, project: str = "p1") -> Consumer:
    return Consumer(project_id=project, user_id=SYNCER_USER, generation=generation, allocations=allocations)


def times(need: dict[str, int], n: int) -> dict[str, int]:
    return {cls: amount * n for cls, amount in need.items()}


def selected(c: Commitment, project: Project = P1, now: float = NOW) -> rules.Selected:
    choice = rules.select(c, project, FLAVORS, now)
    assert isinstance(choice, rules.Selected)
    return choice


# --- status -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"status": "confirmed"}, "confirmed"),
        ({"status": "guaranteed", "confirm_by": LATER - 1, "confirmed_at": None}, "guaranteed"),
        ({"status": "pending", "confirmed_at": None}, "pending"),
        ({"status": "planned", "confirm_by": LATER - 1, "confirmed_at": None}, "planned"),
        ({"status": "superseded"}, "superseded"),
        ({"status": "expired"}, "expired"),
        ({"status": "confirmed", "expires_at": EARLIER}, "expired"),  # Limes' status lags its expiry
        ({"status": "planned", "expires_at": NOW}, "expired"),  # expires_at == now is past (Limes: <=)
        ({"status": "confirmed", "expires_at": NOW + 1}, "confirmed"),
        # No status (older Limes): derived as Limes does.
        ({"status": None, "confirm_by": NOW + 1, "confirmed_at": None}, "planned"),
        ({"status": None, "confirm_by": NOW - 1, "confirmed_at": None}, "pending"),
        ({"status": None, "confirm_by": None, "confirmed_at": None}, "pending"),
        ({"status": None, "confirmed_at": EARLIER}, "confirmed"),
        ({"status": None, "expires_at": EARLIER, "confirm_by": NOW + 1}, "expired"),
        ({"status": "", "confirmed_at": EARLIER}, "confirmed"),
        ({"status": "frozen"}, "frozen"),  # unknown: select() skips it
    ],
)
def test_derive_status(fields, expected) -> None:
    assert rules.derive_status(commitment(**fields), NOW) == expected


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"service_type": "network"}, rules.NOT_COMPUTE),
        ({"resource_name": "cores"}, rules.NOT_INSTANCES),
        ({"resource_name": "ram", "unit": "MiB"}, rules.NOT_INSTANCES),
        ({"resource_name": "instances"}, rules.NOT_INSTANCES),
        ({"resource_name": "instances_m1.gone"}, rules.UNKNOWN_FLAVOR),
        ({"resource_name": "instances_"}, rules.UNKNOWN_FLAVOR),
        ({"status": "frozen"}, rules.UNKNOWN_STATUS),
    ],
)
def test_select_skips_by_reason(fields, reason) -> None:
    choice = rules.select(commitment(**fields), P1, FLAVORS, NOW)
    assert isinstance(choice, rules.Skipped)
    assert choice.reason == reason


def test_select_keeps_a_known_instance_flavor() -> None:
    choice = rules.select(commitment(resource_name="instances_bfv.large"), P1, FLAVORS, NOW)
    assert choice == rules.Selected(commitment(resource_name="instances_bfv.large"), P1, VOLUME, "confirmed")


def test_needs_servers() -> None:
    assert rules.needs_servers([commitment(resource_name="cores"), commitment(resource_name="instances_x")])
    assert not rules.needs_servers([commitment(resource_name="cores"), commitment(service_type="network")])
    assert not rules.needs_servers([])


# --- subtraction ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("commitments", "servers", "expected"),
    [
        # Same project, AZ and flavor; any server status counts.
        ([commitment(1, amount=3)], [server("a", status="SHUTOFF"), server("b", status="ERROR")], {1: 2}),
        # Another AZ, another flavor, another project: none counts.
        ([commitment(1)], [server("a", az="az2"), server("b", flavor="bfv.large"), server("c", project="p2")],
         {1: 0}),
        # Each server once across commitments, commitments by ascending id.
        ([commitment(2, amount=2), commitment(1, amount=2)], [server("a"), server("b"), server("c")], {1: 2, 2: 1}),
        # More servers than committed: matched stops at the amount (never an underflow).
        ([commitment(1, amount=1)], [server(s) for s in "abcde"], {1: 1}),
        # Expired and superseded commitments take no servers from their successors.
        ([commitment(1, amount=2, status="superseded"), commitment(2, amount=2)], [server("a"), server("b")],
         {1: 0, 2: 2}),
        ([commitment(1, amount=2, expires_at=EARLIER), commitment(2, amount=2)], [server("a")], {1: 0, 2: 1}),
        # Pending and planned count like Limes counts them (they record matched, hold nothing).
        ([commitment(1, amount=1, status="pending", confirmed_at=None), commitment(2, amount=1)], [server("a")],
         {1: 1, 2: 0}),
    ],
)
def test_match_servers(commitments, servers, expected) -> None:
    by_project: dict[str, list[Server]] = {}
    for s in servers:
        by_project.setdefault(s.tenant_id, []).append(s)
    matched = rules.match_servers([selected(c) for c in commitments], by_project)
    assert matched == {commitment(n).uuid: count for n, count in expected.items()}


def test_match_servers_takes_servers_by_ascending_id() -> None:
    # Two commitments on different AZs would each take "their" server; servers are visited in id order,
    # so the listing order Nova happened to use does not change who gets what.
    first, second = commitment(1, amount=1), commitment(2, amount=1, availability_zone="az2")
    listing = {"p1": [server("z", az="az1"), server("b", az="az2"), server("a", az="az1")]}
    assert rules.match_servers([selected(first), selected(second)], listing) == {first.uuid: 1, second.uuid: 1}


@pytest.mark.parametrize(("amount", "matched", "left"), [(3, 0, 3), (3, 2, 1), (3, 3, 0), (3, 7, 0), (0, 0, 0)])
def test_remaining_is_clamped(amount, matched, left) -> None:
    assert rules.remaining(amount, matched) == left


@pytest.mark.parametrize(
    ("flavor", "expected"),
    [
        (SMALL, (("DISK_GB", 20), ("MEMORY_MB", 4096), ("VCPU", 2))),
        (VOLUME, (("MEMORY_MB", 32768), ("VCPU", 8))),  # boot from volume: no DISK_GB
        (Flavor(id="z", name="zero", vcpus=0, ram=0, disk=0), ()),
    ],
)
def test_per_instance(flavor, expected) -> None:
    assert rules.per_instance(flavor) == expected


# --- pools ------------------------------------------------------------------------------------------

NEED2 = times(SMALL_NEED, 2)


@pytest.mark.parametrize(
    ("pools", "current", "own", "expected"),
    [
        ([pool("b"), pool("a")], None, None, ("a", rules.HELD)),  # first by name
        ([pool("a"), pool("b")], "b", NEED2, ("b", rules.HELD)),  # stays on the current pool while it fits
        # The current pool fits only with what we already hold there.
        ([pool("a"), pool("b", room=1)], "b", NEED2, ("b", rules.HELD)),
        ([pool("a"), pool("b", room=1)], "b", None, ("a", rules.HELD)),
        ([pool("a"), pool("b", active=False)], "b", NEED2, ("a", rules.HELD)),  # inactive: moves
        ([pool("a", az="az2"), pool("b")], None, None, ("b", rules.HELD)),  # other AZ never
        ([pool("a", active=False), pool("b", az="az2")], None, None, (None, rules.NO_POOL)),
        ([pool("a", room=1), pool("b", room=0)], None, None, (None, rules.NO_ROOM)),
        # Inventory of every class needed, or not a candidate at all.
        ([pool("a", VCPU=100, MEMORY_MB=100_000)], None, None, (None, rules.NO_POOL)),
        ([], None, None, (None, rules.NO_POOL)),
    ],
)
def test_choose_pool(pools, current, own, expected) -> None:
    assert rules.choose_pool("az1", NEED2, pools, current, own) == expected


def test_a_class_of_zero_needs_no_inventory() -> None:
    need = times(dict(rules.per_instance(VOLUME)), 1)
    assert rules.choose_pool("az1", need, [pool("a", VCPU=8, MEMORY_MB=32768)]) == ("a", rules.HELD)


# --- one commitment ---------------------------------------------------------------------------------


def record_for(c: Commitment, **overrides: Any) -> Reservation:
    values: dict[str, Any] = {
        "commitment_uuid": c.uuid, "commitment_id": c.id, "project_id": "p1", "domain_id": "d1",
        "availability_zone": c.availability_zone, "flavor": "m1.small", "amount": c.amount, "matched": 0,
        "remaining": c.amount, "resources": rules.per_instance(SMALL), "status": "held", "reason": rules.HELD,
        "pool": "a", "expires_at": c.expires_at, "limes_status": "confirmed",
    }
    values.update(overrides)
    return Reservation(**values)


C = commitment(7, amount=2)
HELD_A = record_for(C)
MINE_A = ours({"a": NEED2}, generation=4)


@pytest.mark.parametrize(
    ("case", "item", "matched", "previous", "consumer", "pools", "status", "reason", "pool", "change"),
    [
        ("new confirmed", C, 0, None, None, [pool("a")], "held", rules.HELD, "a", ("write", {"a": NEED2}, None)),
        ("guaranteed holds", commitment(7, amount=2, status="guaranteed", confirm_by=LATER - 5, confirmed_at=None),
         0, None, None, [pool("a")], "held", rules.HELD, "a", ("write", {"a": NEED2}, None)),
        ("unchanged", C, 0, HELD_A, MINE_A, [pool("a")], "held", rules.HELD, "a", None),
        ("one VM started", C, 1, HELD_A, MINE_A, [pool("a")], "held", rules.HELD, "a",
         ("write", {"a": SMALL_NEED}, 4)),
        ("all VMs started", C, 2, HELD_A, MINE_A, [pool("a")], "released", rules.FULLY_USED, None,
         ("delete", {}, 4)),
        ("never needed capacity", C, 2, None, None, [pool("a")], "released", rules.FULLY_USED, None, None),
        ("expired when first seen", commitment(7, expires_at=EARLIER), 0, None, None, [pool("a")],
         "released", "expired", None, None),
        ("expired by time while held", commitment(7, expires_at=NOW), 0, HELD_A, MINE_A, [pool("a")],
         "released", "expired", None, ("delete", {}, 4)),
        ("superseded while held", commitment(7, status="superseded"), 0, HELD_A, MINE_A, [pool("a")],
         "released", "superseded", None, ("delete", {}, 4)),
        ("planned", commitment(7, status="planned", confirm_by=LATER - 5, confirmed_at=None), 0, None, None,
         [pool("a")], "planned", "status_planned", None, None),
        ("pending", commitment(7, status="pending", confirmed_at=None), 0, None, None, [pool("a")],
         "pending", "status_pending", None, None),
        ("pending after held", commitment(7, status="pending", confirmed_at=None), 0, HELD_A, MINE_A,
         [pool("a")], "released", "pending_after_held", None, ("delete", {}, 4)),
        ("pending after held, next pass", commitment(7, status="pending", confirmed_at=None), 0,
         replace(HELD_A, status="released", reason="pending_after_held", pool=None), None, [pool("a")],
         "released", "pending_after_held", None, None),
        ("foreign user", C, 0, None, replace(MINE_A, user_id="someone"), [pool("a")],
         "conflict", rules.FOREIGN_CONSUMER, None, None),
        ("foreign user, even with our record", C, 0, HELD_A, replace(MINE_A, user_id="someone"), [pool("a")],
         "conflict", rules.FOREIGN_CONSUMER, None, None),
        ("our user, another project", C, 0, None, ours({"a": NEED2}, project="p2"), [pool("a")],
         "conflict", rules.FOREIGN_CONSUMER, None, None),
        ("adopted after a crash", C, 0, None, MINE_A, [pool("a")], "held", rules.HELD, "a", None),
        ("adopted over an unplaced record", C, 0, replace(HELD_A, status="unplaced", reason=rules.NO_ROOM, pool=None),
         MINE_A, [pool("a")], "held", rules.HELD, "a", None),
        ("not adopted: other amounts", C, 0, None, ours({"a": SMALL_NEED}), [pool("a")],
         "conflict", rules.FOREIGN_CONSUMER, None, None),
        ("not adopted: a pool we would not use", C, 0, None, ours({"z": NEED2}), [pool("a"), pool("z", az="az2")],
         "conflict", rules.FOREIGN_CONSUMER, None, None),
        ("no pool in the AZ", C, 0, None, None, [pool("a", az="az2")], "unplaced", rules.NO_POOL, None, None),
        ("pool full", C, 0, None, None, [pool("a", room=1)], "unplaced", rules.NO_ROOM, None, None),
        ("grew past the pool: keeps what it holds", commitment(7, amount=3), 0, HELD_A, MINE_A,
         [pool("a", room=0)], "unplaced", rules.NO_ROOM, "a", None),
        ("current pool retired: moves", C, 0, HELD_A, MINE_A, [pool("a", active=False), pool("b")],
         "held", rules.HELD, "b", ("write", {"b": NEED2}, 4)),
        ("our allocation vanished: placed again", C, 0, HELD_A, None, [pool("a")], "held", rules.HELD, "a",
         ("write", {"a": NEED2}, None)),
    ],
)
def test_decide_present(case, item, matched, previous, consumer, pools, status, reason, pool, change) -> None:
    decision = rules.decide_present(selected(item), matched, previous, consumer, pools)
    assert decision.record is not None
    assert (decision.record.status, decision.record.reason, decision.record.pool) == (status, reason, pool), case
    assert decision.record.remaining == max(0, item.amount - matched)
    if change is None:
        assert decision.placement is None, case
    else:
        kind, allocations, generation = change
        assert decision.placement is not None, case
        assert (decision.placement.kind, dict(decision.placement.allocations), decision.placement.generation) == (
            kind, allocations, generation), case
        assert (decision.placement.consumer, decision.placement.project_id, decision.placement.user_id) == (
            item.uuid, "p1", SYNCER_USER)


def test_a_commitment_transferred_whole_takes_its_allocation_along() -> None:
    # Limes keeps the UUID when a whole commitment moves to another project: the hold moves with it.
    decision = rules.decide_present(selected(C, P2), 0, HELD_A, MINE_A, [pool("a")])
    assert (decision.record.status, decision.record.project_id, decision.record.pool) == ("held", "p2", "a")
    assert decision.placement == rules.PlacementChange("write", C.uuid, "p2", SYNCER_USER, {"a": NEED2}, 4)
    # Released after the move: our consumer (still on the old project) is the one deleted.
    gone = rules.decide_present(selected(commitment(7, status="superseded"), P2), 0, HELD_A, MINE_A, [pool("a")])
    assert gone.placement == rules.PlacementChange("delete", C.uuid, "p1", SYNCER_USER, {}, 4)
    # Without a record of ours, a consumer on another project is not adopted.
    stranger = rules.decide_present(selected(C, P2), 0, None, MINE_A, [pool("a")])
    assert (stranger.record.status, stranger.placement) == ("conflict", None)


def test_a_boot_from_volume_flavor_leaves_disk_out() -> None:
    c = commitment(3, amount=1, resource_name="instances_bfv.large")
    decision = rules.decide_present(selected(c), 0, None, None, [pool("a", VCPU=8, MEMORY_MB=32768)])
    assert decision.placement is not None
    assert dict(decision.placement.allocations) == {"a": {"MEMORY_MB": 32768, "VCPU": 8}}


def test_the_record_carries_everything_the_issue_lists() -> None:
    decision = rules.decide_present(selected(C), 1, None, None, [pool("a")])
    assert decision.record is not None
    assert decision.record.to_dict() == {
        "commitmentUuid": C.uuid, "commitmentId": 7, "projectId": "p1", "domainId": "d1",
        "availabilityZone": "az1", "flavor": "m1.small", "amount": 2, "matched": 1, "remaining": 1,
        "resources": SMALL_NEED, "status": "held", "reason": rules.HELD, "pool": "a", "expiresAt": LATER,
        "limesStatus": "confirmed", "missingPasses": 0, "creator": "commitments syncer",
    }


@pytest.mark.parametrize(
    ("previous", "consumer", "now", "status", "reason", "missing", "deletes"),
    [
        (HELD_A, MINE_A, NOW, "held", rules.HELD, 1, False),  # one answer without it frees nothing
        (replace(HELD_A, missing_passes=1), MINE_A, NOW, "released", rules.MISSING_FROM_LIMES, 2, True),
        (HELD_A, MINE_A, LATER, "released", "expired", 0, True),  # its recorded expires_at passed: at once
        (replace(HELD_A, expires_at=None), MINE_A, LATER, "held", rules.HELD, 1, False),
        (replace(HELD_A, status="released", reason="expired", pool=None), None, NOW, "released", "expired", 0,
         False),
        (replace(HELD_A, status="conflict", reason=rules.FOREIGN_CONSUMER, pool=None, missing_passes=1),
         replace(MINE_A, user_id="x"), NOW, "released", rules.MISSING_FROM_LIMES, 2, False),
        (replace(HELD_A, status="planned", reason="status_planned", pool=None, missing_passes=1), None, NOW,
         "released", rules.MISSING_FROM_LIMES, 2, False),
    ],
)
def test_decide_missing(previous, consumer, now, status, reason, missing, deletes) -> None:
    decision = rules.decide_missing(previous, consumer, now, rules.MISSING_FROM_LIMES)
    assert decision.record is not None
    assert (decision.record.status, decision.record.reason, decision.record.missing_passes) == (
        status, reason, missing)
    assert (decision.placement is not None and decision.placement.kind == "delete") == deletes
    if deletes:
        assert decision.placement is not None and decision.placement.generation == consumer.generation


def test_a_released_record_missing_from_limes_does_not_change() -> None:
    released = replace(HELD_A, status="released", reason=rules.FULLY_USED, pool=None)
    decision = rules.decide_missing(released, None, NOW, rules.MISSING_FROM_LIMES)
    assert not rules.record_changed(decision.record, released)
    assert decision.placement is None


def test_record_changed() -> None:
    assert not rules.record_changed(HELD_A, HELD_A)
    assert not rules.record_changed(replace(HELD_A), HELD_A)
    assert rules.record_changed(replace(HELD_A, matched=1), HELD_A)
    assert rules.record_changed(HELD_A, None)
    assert not rules.record_changed(None, HELD_A)


# --- a whole pass -----------------------------------------------------------------------------------


def snapshot(commitments: dict[str, list[Commitment]], servers: dict[str, list[Server]] | None = None,
             projects: tuple[Project, ...] = (P1, P2), malformed: int = 0,
             unparsed: dict[str, tuple[str | None, ...]] | None = None,
             not_found: frozenset[str] = frozenset()) -> Snapshot:
    """`malformed` entries without a readable UUID in p1, or `unparsed` UUIDs per project."""
    return Snapshot(
        fetched_at=NOW, projects=projects, flavors=MappingProxyType(FLAVORS),
        commitments=MappingProxyType({p.id: tuple(commitments.get(p.id, ())) for p in projects}),
        servers=MappingProxyType({k: tuple(v) for k, v in (servers or {}).items()}),
        unparsed=unparsed if unparsed is not None else ({"p1": (None,) * malformed} if malformed else {}),
        limes_not_found=not_found,
    )


class World:
    """Stored records, Placement consumers and pools, changed only by applying a plan (as a pass would)."""

    def __init__(self, pools: list[Pool]) -> None:
        self.records: dict[str, Reservation] = {}
        self.consumers: dict[str, Consumer] = {}
        self.capacity = {p.name: dict(p.free) for p in pools}
        self.pools = pools

    def free_pools(self) -> list[Pool]:
        used: Counter[tuple[str, str]] = Counter()
        for consumer in self.consumers.values():
            for name, amounts in consumer.allocations.items():
                for cls, amount in amounts.items():
                    used[(name, cls)] += amount
        return [replace(p, inventories={c: Inventory(total=a) for c, a in self.capacity[p.name].items()},
                        used={c: used[(p.name, c)] for c in self.capacity[p.name]}) for p in self.pools]

    def run(self, snap: Snapshot, now: float = NOW) -> tuple[rules.PassPlan, int]:
        plan = rules.plan_pass(snap, self.records, self.consumers, self.free_pools(), now)
        changes = plan.writes(self.records)
        for uuid, decision in changes:
            change = decision.placement
            if change is not None and change.kind == "delete":
                self.consumers.pop(uuid)
            elif change is not None:
                generation = self.consumers[uuid].generation + 1 if uuid in self.consumers else 1
                self.consumers[uuid] = Consumer(change.project_id, change.user_id, generation, change.allocations)
            if decision.record is not None:
                self.records[uuid] = decision.record
        return plan, len(changes)


def test_duplicate_prefix_uuids_are_two_reservations() -> None:
    # Cortex names slots commitment-<uuid[:5]>-<n>: these two would collide and one would be dropped.
    a = commitment(1, uuid="9b1c2d3e-aaaa-4bbb-8ccc-000000000001", amount=2)
    b = commitment(2, uuid="9b1c2d3e-aaaa-4bbb-8ccc-000000000002", amount=3)
    world = World([pool("a")])
    plan, _ = world.run(snapshot({"p1": [a, b]}))
    assert {uuid: d.record.status for uuid, d in plan.decisions.items() if d.record} == {
        a.uuid: "held", b.uuid: "held"}
    assert dict(world.consumers[a.uuid].allocations) == {"a": times(SMALL_NEED, 2)}
    assert dict(world.consumers[b.uuid].allocations) == {"a": times(SMALL_NEED, 3)}


def test_an_unchanged_world_writes_nothing() -> None:
    world = World([pool("a"), pool("b")])
    snap = snapshot({"p1": [commitment(1), commitment(2, status="planned", confirm_by=LATER - 5,
                                                       confirmed_at=None), commitment(3, amount=1)],
                     "p2": [commitment(4, expires_at=EARLIER)]}, servers={"p1": [server("s1")]})
    _, first = world.run(snap)
    assert first > 0
    plan, second = world.run(snap)
    assert second == 0
    assert plan.status_counts(world.records) == Counter({"held": 2, "planned": 1, "released": 1})


def test_the_pool_fills_up_within_a_pass_then_capacity_is_added() -> None:
    world = World([pool("a", room=3)])
    snap = snapshot({"p1": [commitment(1, amount=2), commitment(2, amount=2)]})
    plan, _ = world.run(snap)
    assert [plan.decisions[commitment(n).uuid].record.status for n in (1, 2)] == ["held", "unplaced"]
    world.capacity["a"] = times(SMALL_NEED, 4)
    plan, writes = world.run(snap)
    assert plan.decisions[commitment(2).uuid].record.status == "held"
    assert writes == 1


def test_a_release_frees_room_for_a_hold_in_the_same_pass() -> None:
    world = World([pool("a", room=2)])
    world.run(snapshot({"p1": [commitment(1, amount=2)]}))
    plan, _ = world.run(snapshot({"p1": [commitment(1, amount=2, status="superseded"), commitment(2, amount=2)]}))
    assert plan.decisions[commitment(2).uuid].record.status == "held"


def test_two_pass_release_of_a_missing_commitment_and_a_gone_project() -> None:
    world = World([pool("a")])
    world.run(snapshot({"p1": [commitment(1)], "p2": [commitment(2)]}))
    only_p1 = snapshot({}, projects=(P1,))
    plan, _ = world.run(only_p1)
    assert {d.record.status for d in plan.decisions.values()} == {"held"}
    assert len(world.consumers) == 2
    plan, _ = world.run(only_p1)
    assert plan.decisions[commitment(1).uuid].record.reason == rules.MISSING_FROM_LIMES
    assert plan.decisions[commitment(2).uuid].record.reason == rules.PROJECT_GONE
    assert world.consumers == {}
    _, writes = world.run(only_p1)
    assert writes == 0


def test_a_commitment_back_after_one_missing_pass_resets_the_count() -> None:
    world = World([pool("a")])
    world.run(snapshot({"p1": [commitment(1)]}))
    world.run(snapshot({}))
    assert world.records[commitment(1).uuid].missing_passes == 1
    world.run(snapshot({"p1": [commitment(1)]}))
    world.run(snapshot({}))
    assert world.records[commitment(1).uuid].status == "held"


def test_skipped_commitments_are_counted_and_their_records_kept() -> None:
    world = World([pool("a")])
    world.run(snapshot({"p1": [commitment(1)]}))
    plan, writes = world.run(snapshot({"p1": [commitment(1, resource_name="instances_gone"),
                                              commitment(2, resource_name="cores"),
                                              commitment(3, service_type="network")]}, malformed=2))
    assert plan.skipped == Counter({rules.UNKNOWN_FLAVOR: 1, rules.NOT_INSTANCES: 1, rules.NOT_COMPUTE: 1,
                                    rules.MALFORMED: 2})
    assert plan.commitments == 5  # every listed entry, parsed or not (issue 14 item 1)
    assert writes == 0 and world.records[commitment(1).uuid].status == "held"


def test_a_crash_between_the_two_writes_converges() -> None:
    world = World([pool("a")])
    snap = snapshot({"p1": [commitment(1)]})
    plan = rules.plan_pass(snap, {}, {}, world.free_pools(), NOW)
    change = plan.decisions[commitment(1).uuid].placement
    world.consumers[commitment(1).uuid] = Consumer(change.project_id, change.user_id, 1, change.allocations)
    # The record was never written; the next pass adopts the consumer and writes only the record.
    plan, writes = world.run(snap)
    decision = plan.decisions[commitment(1).uuid]
    assert (decision.record.status, decision.placement, writes) == ("held", None, 1)


# --- properties -------------------------------------------------------------------------------------

ids = st.integers(min_value=1, max_value=40)


@st.composite
def worlds(draw: Any) -> tuple[list[Commitment], dict[str, list[Server]]]:
    azs, flavors = st.sampled_from(["az1", "az2"]), st.sampled_from(["instances_m1.small", "instances_bfv.large"])
    commitments = [commitment(n, amount=draw(st.integers(0, 5)), availability_zone=draw(azs),
                              resource_name=draw(flavors))
                   for n in sorted(draw(st.sets(ids, max_size=8)))]
    servers: dict[str, list[Server]] = {}
    for i in range(draw(st.integers(0, 20))):
        s = server(f"s{i:03d}", project="p1", az=draw(st.sampled_from(["az1", "az2"])),
                   flavor=draw(st.sampled_from(["m1.small", "bfv.large", "other"])))
        servers.setdefault("p1", []).append(s)
    return commitments, servers


@settings(max_examples=200, deadline=None)
@given(worlds())
def test_each_server_counts_at_most_once_and_remaining_is_never_negative(world) -> None:
    commitments, servers = world
    matched = rules.match_servers([selected(c) for c in commitments], servers)
    assert sum(matched.values()) <= len(servers.get("p1", []))
    for c in commitments:
        assert 0 <= matched[c.uuid] <= c.amount
        assert rules.remaining(c.amount, matched[c.uuid]) >= 0
    # Per (AZ, flavor), never more matched than servers of that kind.
    for az in ("az1", "az2"):
        for flavor in ("m1.small", "bfv.large"):
            kind = [s for s in servers.get("p1", []) if s.availability_zone == az and s.flavor_name == flavor]
            counted = sum(matched[c.uuid] for c in commitments
                          if c.availability_zone == az and c.resource_name == f"instances_{flavor}")
            assert counted <= len(kind)


@settings(max_examples=100, deadline=None)
@given(worlds(), st.integers(0, 12))
def test_a_second_pass_over_the_same_world_writes_nothing(world, room) -> None:
    commitments, servers = world
    state = World([pool("a", room=room), pool("b", room=room // 2, VCPU=1000, MEMORY_MB=10**6)])
    snap = snapshot({"p1": commitments}, servers=servers)
    state.run(snap)
    _, writes = state.run(snap)
    assert writes == 0
    for consumer in state.consumers.values():
        assert consumer.user_id == SYNCER_USER
    for name, capacity in state.capacity.items():
        for p in state.free_pools():
            if p.name == name:
                assert all(p.free[c] >= 0 for c in capacity)


pools_strategy = st.lists(
    st.builds(lambda name, az, active, vcpu, mem: room_pool(name, az, active, {"VCPU": vcpu, "MEMORY_MB": mem}),
              st.sampled_from("abcdef"), st.sampled_from(["az1", "az2"]), st.booleans(),
              st.integers(0, 16), st.integers(0, 65536)),
    max_size=6, unique_by=lambda p: p.name)


@settings(max_examples=300, deadline=None)
@given(pools_strategy, st.integers(1, 8), st.sampled_from([None, "a", "c"]))
def test_the_chosen_pool_fits_and_one_is_chosen_when_any_fits(pools, vcpu, current) -> None:
    need = {"VCPU": vcpu, "MEMORY_MB": vcpu * 4096}
    chosen, reason = rules.choose_pool("az1", need, pools, current)
    fitting = sorted(p.name for p in pools if p.active and p.availability_zone == "az1"
                     and all(p.free[c] >= a for c, a in need.items()))
    if not fitting:
        assert chosen is None and reason in (rules.NO_POOL, rules.NO_ROOM)
    elif current in fitting:
        assert chosen == current
    else:
        assert chosen == fitting[0]


# --- pools named by id, canonical UUIDs, the stored record ----------------------------------------------


def test_pools_are_chosen_by_name_and_named_by_id() -> None:
    pools = [room_pool("b-pool", "az1", True, {"VCPU": 10, "MEMORY_MB": 10**6},
                       id="00000000-0000-4000-8000-00000000000a"),
             room_pool("a-pool", "az1", True, {"VCPU": 10, "MEMORY_MB": 10**6},
                       id="00000000-0000-4000-8000-00000000000b")]
    assert rules.choose_pool("az1", {"VCPU": 1, "MEMORY_MB": 1}, pools) == (
        "00000000-0000-4000-8000-00000000000b", rules.HELD)
    # The current pool is recognised by its id.
    assert rules.choose_pool("az1", {"VCPU": 1}, pools, current="00000000-0000-4000-8000-00000000000a")[0] == (
        "00000000-0000-4000-8000-00000000000a")


@pytest.mark.parametrize("value, canonical", [
    ("9b1c2d3e-aaaa-4bbb-8ccc-0123456789ab", True),
    ("9B1C2D3E-AAAA-4BBB-8CCC-0123456789AB", False),
    ("9b1c2d3eaaaa4bbb8ccc0123456789ab", False),
    ("12345-67890-abcdef", False),
])
def test_only_canonical_uuids_are_selected(value: str, canonical: bool) -> None:
    choice = rules.select(commitment(1, uuid=value), P1, FLAVORS, NOW)
    assert isinstance(choice, rules.Selected) is canonical
    if not canonical:
        assert choice == rules.Skipped(choice.commitment, rules.INVALID_UUID)


def test_a_reservation_round_trips_through_its_dictionary() -> None:
    decision = rules.decide_present(selected(commitment(1)), 0, None, None, [pool("a")])
    assert decision.record is not None
    assert Reservation.from_dict(decision.record.to_dict()) == decision.record
