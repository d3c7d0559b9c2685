"""The commitment sync's rules, pure: from what was read to what each reservation should be.

No I/O: a pass fetches a Snapshot, reads the stored reservations, the Placement consumers and
the pools, then `plan_pass` says, per commitment, the record to keep and the Placement change
(write or delete, consumer-generation checked) to make. `record_changed` is the "unchanged
world writes nothing" test. docs/commitments.md explains each rule and where it departs from Cortex.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from chalicelib.commitments.models import (
    INSTANCES_PREFIX,
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

HOLDING = frozenset({"confirmed", "guaranteed"})  # capacity is owed now
WAITING = frozenset({"pending", "planned"})  # recorded, hold nothing
TERMINAL = frozenset({"expired", "superseded"})  # released at once
KNOWN_STATUSES = HOLDING | WAITING | TERMINAL

# Why a listed commitment is not considered at all (counted per reason; an existing record is left as it is).
NOT_COMPUTE = "not_compute"
NOT_INSTANCES = "not_instances"
UNKNOWN_FLAVOR = "unknown_flavor"
UNKNOWN_STATUS = "unknown_status"
MALFORMED = "malformed"

# Reservation reasons.
HELD = "capacity_held"
NO_POOL = "no_pool"  # no active pool in the AZ with inventory of every class needed
NO_ROOM = "no_room"  # such pools exist, none has the room
FOREIGN_CONSUMER = "foreign_consumer"
FULLY_USED = "fully_used"
NOTHING_TO_HOLD = "nothing_to_hold"  # a flavor whose every per-instance amount is 0
MISSING_FROM_LIMES = "missing_from_limes"
PROJECT_GONE = "project_gone"
AFTER_HELD = {"pending": "pending_after_held", "planned": "planned_after_held"}

RESOURCE_CLASSES = ("DISK_GB", "MEMORY_MB", "VCPU")
MISSING_PASSES_TO_RELEASE = 2


# --- status and selection ---------------------------------------------------------------------------


def derive_status(commitment: Commitment, now: float) -> str:
    """The status to act on: expires_at in the past wins; a missing status is derived as Limes does."""
    if commitment.expires_at is not None and commitment.expires_at <= now:
        return "expired"
    if commitment.status:
        return commitment.status
    if commitment.confirm_by is not None and commitment.confirm_by > now:
        return "planned"
    if commitment.confirmed_at is None:
        return "pending"
    return "confirmed"


def is_instance_commitment(commitment: Commitment) -> bool:
    return commitment.service_type == "compute" and commitment.resource_name.startswith(INSTANCES_PREFIX)


def needs_servers(commitments: Iterable[Commitment]) -> bool:
    """Whether a project's servers must be read: it has a compute instance commitment."""
    return any(is_instance_commitment(c) for c in commitments)


@dataclass(frozen=True)
class Selected:
    commitment: Commitment
    project: Project
    flavor: Flavor
    status: str


@dataclass(frozen=True)
class Skipped:
    commitment: Commitment
    reason: str


def select(commitment: Commitment, project: Project, flavors: Mapping[str, Flavor], now: float) -> Selected | Skipped:
    if commitment.service_type != "compute":
        return Skipped(commitment, NOT_COMPUTE)
    if not commitment.resource_name.startswith(INSTANCES_PREFIX):
        return Skipped(commitment, NOT_INSTANCES)
    flavor = flavors.get(commitment.resource_name[len(INSTANCES_PREFIX):])
    if flavor is None:
        return Skipped(commitment, UNKNOWN_FLAVOR)
    status = derive_status(commitment, now)
    if status not in KNOWN_STATUSES:
        return Skipped(commitment, UNKNOWN_STATUS)
    return Selected(commitment, project, flavor, status)


# --- subtraction of running servers -----------------------------------------------------------------


def match_servers(selected: Sequence[Selected], servers: Mapping[str, Sequence[Server]]) -> dict[str, int]:
    """Servers already running per commitment UUID: same project and AZ, flavor.original_name = the flavor.

    Commitments in ascending id, servers in ascending id, each server counted at most once.
    Expired and superseded commitments hold nothing, so they take no servers from their successors.
    """
    used: set[tuple[str, str]] = set()
    matched: dict[str, int] = {}
    for item in sorted(selected, key=lambda s: (s.commitment.id, s.commitment.uuid)):
        count = 0
        if item.status not in TERMINAL:
            wanted = item.commitment.amount
            for server in sorted(servers.get(item.project.id, ()), key=lambda v: v.id):
                if count >= wanted:
                    break
                key = (server.tenant_id, server.id)
                if (key not in used and server.flavor_name == item.flavor.name
                        and server.availability_zone == item.commitment.availability_zone):
                    used.add(key)
                    count += 1
        matched[item.commitment.uuid] = count
    return matched


def remaining(amount: int, matched: int) -> int:
    return max(0, amount - matched)


def per_instance(flavor: Flavor) -> tuple[tuple[str, int], ...]:
    """VCPU = vcpus, MEMORY_MB = ram, DISK_GB = disk; a zero amount is left out (boot from volume)."""
    amounts = {"VCPU": flavor.vcpus, "MEMORY_MB": flavor.ram, "DISK_GB": flavor.disk}
    return tuple((cls, amounts[cls]) for cls in RESOURCE_CLASSES if amounts[cls] > 0)


def allocation_for(resources: Iterable[tuple[str, int]], count: int) -> dict[str, int]:
    return {cls: amount * count for cls, amount in resources} if count > 0 else {}


# --- pools ------------------------------------------------------------------------------------------


def _fits(pool: Pool, az: str, need: Mapping[str, int], own: Mapping[str, int]) -> bool:
    return (pool.active and pool.availability_zone == az and all(cls in pool.free for cls in need)
            and all(pool.free[cls] + own.get(cls, 0) >= amount for cls, amount in need.items()))


def choose_pool(
    az: str, need: Mapping[str, int], pools: Sequence[Pool], current: str | None = None,
    own_on_current: Mapping[str, int] | None = None,
) -> tuple[str | None, str]:
    """Stay on the current pool while it fits (counting what we hold there), else the first by name that fits."""
    own = own_on_current or {}
    if current is not None:
        for pool in pools:
            if pool.name == current and _fits(pool, az, need, own):
                return current, HELD
    for pool in sorted(pools, key=lambda p: p.name):
        if pool.name != current and _fits(pool, az, need, {}):
            return pool.name, HELD
    candidates = [p for p in pools if p.active and p.availability_zone == az and all(c in p.free for c in need)]
    return None, NO_ROOM if candidates else NO_POOL


# --- the decision for one commitment ----------------------------------------------------------------


@dataclass(frozen=True)
class PlacementChange:
    """Write (replace) or delete the consumer's allocations; `generation` None means a new consumer."""

    kind: str  # "write" | "delete"
    consumer: str
    project_id: str
    user_id: str
    allocations: Mapping[str, Mapping[str, int]]
    generation: int | None


@dataclass(frozen=True)
class Decision:
    record: Reservation | None  # None: no record (nothing was ever kept for it)
    placement: PlacementChange | None = None


def _ours(consumer: Consumer | None, project_id: str, previous: Reservation | None = None) -> bool:
    """The syncer's consumer: its user, and the commitment's project (or the recorded one, after a transfer)."""
    if consumer is None or consumer.user_id != SYNCER_USER:
        return False
    return consumer.project_id == project_id or (previous is not None and consumer.project_id == previous.project_id)


def _only_pool(consumer: Consumer) -> str | None:
    return next(iter(consumer.allocations)) if len(consumer.allocations) == 1 else None


def _release(record: Reservation, reason: str, consumer: Consumer | None,
             previous: Reservation | None = None) -> Decision:
    """Released: our allocation (if any) deleted, generation-checked; a foreign consumer is never touched."""
    change = None
    if consumer is not None and _ours(consumer, record.project_id, previous):
        change = PlacementChange("delete", record.commitment_uuid, consumer.project_id, SYNCER_USER, {},
                                 consumer.generation)
    return Decision(replace(record, status="released", reason=reason, pool=None), change)


def decide_present(
    item: Selected, matched: int, previous: Reservation | None, consumer: Consumer | None,
    pools: Sequence[Pool],
) -> Decision:
    """A commitment listed in this pass's successful answer."""
    c = item.commitment
    resources = per_instance(item.flavor)
    left = remaining(c.amount, matched)
    record = Reservation(
        commitment_uuid=c.uuid, commitment_id=c.id, project_id=item.project.id, domain_id=item.project.domain_id,
        availability_zone=c.availability_zone, flavor=item.flavor.name, amount=c.amount, matched=matched,
        remaining=left, resources=resources, status="", reason="", pool=None, expires_at=c.expires_at,
        limes_status=item.status,
    )
    ours = _ours(consumer, record.project_id, previous)
    if item.status in TERMINAL:
        return _release(record, item.status, consumer, previous)
    if item.status in WAITING:
        after_held = AFTER_HELD[item.status]
        was_held = ours or (previous is not None and (
            previous.status == "held" or (previous.status == "released" and previous.reason in AFTER_HELD.values())))
        if was_held:
            return _release(record, after_held, consumer, previous)
        return Decision(replace(record, status=item.status, reason=f"status_{item.status}"))
    if left == 0:
        return _release(record, FULLY_USED, consumer, previous)
    need = allocation_for(resources, left)
    if not need:
        return _release(record, NOTHING_TO_HOLD, consumer, previous)
    current: str | None = None
    if consumer is not None:
        current = _only_pool(consumer) if ours else None
        recorded_ours = previous is not None and previous.pool is not None
        if not ours or not (recorded_ours or _adoptable(consumer, need, current, record, pools)):
            return Decision(replace(record, status="conflict", reason=FOREIGN_CONSUMER))
    own = dict(consumer.allocations[current]) if consumer is not None and current is not None else {}
    pool, reason = choose_pool(record.availability_zone, need, pools, current, own)
    if pool is None:
        # Keep what is held (a smaller hold beats none) and say the rest found no room.
        return Decision(replace(record, status="unplaced", reason=reason, pool=current))
    target = {pool: need}
    held = replace(record, status="held", reason=HELD, pool=pool)
    # A commitment transferred whole keeps its UUID: the same allocation moves to the new project.
    if consumer is not None and consumer.project_id == record.project_id and _same(consumer.allocations, target):
        return Decision(held)
    return Decision(held, PlacementChange("write", c.uuid, record.project_id, SYNCER_USER, target,
                                          consumer.generation if consumer is not None else None))


def _adoptable(consumer: Consumer, need: Mapping[str, int], current: str | None, record: Reservation,
               pools: Sequence[Pool]) -> bool:
    """A consumer of ours left without its record (a crash between the two writes) is exactly what we would write."""
    if consumer.project_id != record.project_id:
        return False
    if current is None or not _same(consumer.allocations, {current: need}):
        return False
    return choose_pool(record.availability_zone, need, pools, current, need)[0] == current


def _same(a: Mapping[str, Mapping[str, int]], b: Mapping[str, Mapping[str, int]]) -> bool:
    return {k: dict(v) for k, v in a.items()} == {k: dict(v) for k, v in b.items()}


def decide_missing(previous: Reservation, consumer: Consumer | None, now: float, reason: str) -> Decision:
    """A kept commitment absent from this pass's successful answers (its project's, or Keystone's listing)."""
    if previous.status == "released":
        return _release(previous, previous.reason, consumer)
    if previous.expires_at is not None and previous.expires_at <= now:
        return _release(replace(previous, limes_status="expired"), "expired", consumer)
    missing = previous.missing_passes + 1
    if missing >= MISSING_PASSES_TO_RELEASE:
        return _release(replace(previous, missing_passes=missing), reason, consumer)
    return Decision(replace(previous, missing_passes=missing))


def record_changed(new: Reservation | None, stored: Reservation | None) -> bool:
    """Whether the record must be written: an unchanged world writes nothing."""
    return new is not None and new != stored


# --- one pass ---------------------------------------------------------------------------------------


@dataclass
class PassPlan:
    decisions: dict[str, Decision] = field(default_factory=dict)  # by commitment UUID
    skipped: Counter[str] = field(default_factory=Counter)
    commitments: int = 0

    def writes(self, stored: Mapping[str, Reservation]) -> list[tuple[str, Decision]]:
        """The decisions that change something: a record that differs, or a Placement change."""
        return [(uuid, d) for uuid, d in self.decisions.items()
                if d.placement is not None or record_changed(d.record, stored.get(uuid))]

    def status_counts(self, stored: Mapping[str, Reservation]) -> Counter[str]:
        after = dict(stored)
        after.update({uuid: d.record for uuid, d in self.decisions.items() if d.record is not None})
        return Counter(r.status for r in after.values())


def plan_pass(
    snapshot: Snapshot, stored: Mapping[str, Reservation], consumers: Mapping[str, Consumer],
    pools: Sequence[Pool], now: float,
) -> PassPlan:
    """Decide every commitment of a successful fetch, releases first so their room is free for holds."""
    plan = PassPlan()
    plan.skipped[MALFORMED] += snapshot.malformed
    free = {p.name: Counter(p.free) for p in pools}
    listed_projects = {p.id: p for p in snapshot.projects}
    listed: set[str] = set()
    selected: list[Selected] = []
    for project in snapshot.projects:
        for commitment in snapshot.commitments.get(project.id, ()):
            plan.commitments += 1
            listed.add(commitment.uuid)
            choice = select(commitment, project, snapshot.flavors, now)
            if isinstance(choice, Skipped):
                plan.skipped[choice.reason] += 1
            else:
                selected.append(choice)

    for uuid, previous in sorted(stored.items()):
        if uuid in listed:
            continue
        reason = MISSING_FROM_LIMES if previous.project_id in listed_projects else PROJECT_GONE
        decision = decide_missing(previous, consumers.get(uuid), now, reason)
        _apply_to_free(free, consumers.get(uuid), decision)
        plan.decisions[uuid] = decision

    matched = match_servers(selected, snapshot.servers)
    for item in sorted(selected, key=lambda s: (s.commitment.id, s.commitment.uuid)):
        uuid = item.commitment.uuid
        view = [replace(p, free=dict(free[p.name])) for p in pools]
        decision = decide_present(item, matched[uuid], stored.get(uuid), consumers.get(uuid), view)
        _apply_to_free(free, consumers.get(uuid), decision)
        plan.decisions[uuid] = decision
    return plan


def _apply_to_free(free: dict[str, Counter[str]], consumer: Consumer | None, decision: Decision) -> None:
    change = decision.placement
    if change is None:
        return
    if consumer is not None:
        for pool, amounts in consumer.allocations.items():
            if pool in free:
                free[pool].update(amounts)
    for pool, amounts in change.allocations.items():
        if pool in free:
            free[pool].subtract(amounts)
