"""The commitment sync's rules, pure: from what was read to what each reservation should be.

No I/O: a pass fetches a Snapshot, reads the stored reservations, the Placement consumers and
the pools, then `plan_pass` says, per commitment, the record to keep and the Placement change
(write or delete, consumer-generation checked) to make. `record_changed` is the "unchanged
world writes nothing" test. docs/commitments.md explains each rule and where it departs from Cortex.
"""

from __future__ import annotations

import uuid as uuidlib
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

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
from chalicelib.placement import models as placement_models
from chalicelib.placement.errors import PlacementError
from chalicelib.placement.rules import decide_allocations

T = TypeVar("T")

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
INVALID_UUID = "invalid_uuid"  # not a canonical UUID: it cannot name a Placement consumer

# Reservation reasons.
HELD = "capacity_held"
NO_POOL = "no_pool"  # no active pool in the AZ with inventory of every class needed
NO_ROOM = "no_room"  # such pools exist, none has the room
UNIT_CONSTRAINTS = "unit_constraints"  # such pools exist, but their min_unit, max_unit or step_size refuse the amount
UUID_IN_SEVERAL_PROJECTS = "uuid_in_several_projects"  # one commitment UUID listed by two projects: left alone
FOREIGN_CONSUMER = "foreign_consumer"
FULLY_USED = "fully_used"
NOTHING_TO_HOLD = "nothing_to_hold"  # a flavor whose every per-instance amount is 0
MISSING_FROM_LIMES = "missing_from_limes"
PROJECT_GONE = "project_gone"
AFTER_HELD = {"pending": "pending_after_held", "planned": "planned_after_held"}

RESOURCE_CLASSES = ("DISK_GB", "MEMORY_MB", "VCPU")
MISSING_PASSES_TO_RELEASE = 2


# --- one entry per id ---------------------------------------------------------------------------------


class Untrusted(Exception):
    """What was read cannot be acted on (fail closed: the pass writes and releases nothing). `what` names the
    fault, never a value read."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def unique(items: Iterable[T], key: Callable[[T], Hashable], what: str) -> tuple[T, ...]:
    """Each id once, in first-seen order: a repeated entry equal to the first is dropped (Keystone paging
    over a changing list, Limes or Nova repeating an entry); one that differs raises Untrusted, since which
    of the two is true cannot be known."""
    seen: dict[Hashable, T] = {}
    for item in items:
        first = seen.setdefault(key(item), item)
        if first != item:
            raise Untrusted(f"{what} listed twice, differently")
    return tuple(seen.values())


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


def canonical_uuid(value: str) -> bool:
    """A lower-case, hyphenated UUID: the form Placement names consumers by."""
    try:
        return str(uuidlib.UUID(value)) == value
    except ValueError:
        return False


def select(commitment: Commitment, project: Project, flavors: Mapping[str, Flavor], now: float) -> Selected | Skipped:
    if commitment.service_type != "compute":
        return Skipped(commitment, NOT_COMPUTE)
    if not commitment.resource_name.startswith(INSTANCES_PREFIX):
        return Skipped(commitment, NOT_INSTANCES)
    flavor = flavors.get(commitment.resource_name[len(INSTANCES_PREFIX):])
    if flavor is None:
        return Skipped(commitment, UNKNOWN_FLAVOR)
    if not canonical_uuid(commitment.uuid):
        return Skipped(commitment, INVALID_UUID)
    status = derive_status(commitment, now)
    if status not in KNOWN_STATUSES:
        return Skipped(commitment, UNKNOWN_STATUS)
    return Selected(commitment, project, flavor, status)


# --- subtraction of running servers -----------------------------------------------------------------


def match_servers(selected: Sequence[Selected], servers: Mapping[str, Sequence[Server]]) -> dict[str, int]:
    """Servers already running per commitment UUID: same project (the server's own tenant_id, whatever
    listing it came in) and AZ, flavor.original_name = the flavor.

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
                if (key not in used and server.tenant_id == item.project.id
                        and server.flavor_name == item.flavor.name
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

PROBE_CONSUMER = "00000000-0000-4000-8000-000000000000"  # the consumer a fit is tried for (never written)
# What Placement's rule is asked about, beyond the amounts: nothing it decides on (no generation check,
# every class exists, the names appear only in its messages), so one template each.
_PROBE_PROVIDER = placement_models.Provider(uuid=PROBE_CONSUMER, name="")
_PROBE_HELD = placement_models.Consumer(uuid=PROBE_CONSUMER, project_id="", user_id=SYNCER_USER, generation=0,
                                        version=0)
_PROBE_WRITE = placement_models.ConsumerWrite(uuid=PROBE_CONSUMER, project_id="", user_id=SYNCER_USER,
                                              allocations={})


def _placement_accepts(pool: Pool, need: Mapping[str, int], own: Mapping[str, int]) -> bool:
    """Placement's own allocation rule (placement.rules.decide_allocations, pure): writing `need` on the pool
    for a consumer that holds `own` there now. Inventory of every class, min_unit, max_unit, step_size, and
    capacity = (total - reserved) x allocation_ratio against usage without the consumer's own."""
    provider = replace(_PROBE_PROVIDER, inventories=dict(pool.inventories), usages=dict(pool.used))
    held = replace(_PROBE_HELD, allocations={pool.key: dict(own)}) if own else None
    try:
        decide_allocations([replace(_PROBE_WRITE, allocations={pool.key: dict(need)})], {PROBE_CONSUMER: held},
                           # Every class a pool's provider has inventory of exists (bool: any non-empty name);
                           # the prefix only begins a message nobody reads.
                           {pool.key: provider}, class_exists=bool, not_found_prefix=str)
    except PlacementError:
        return False
    return True


def placement_refusal(pool: Pool, need: Mapping[str, int], own: Mapping[str, int]) -> str | None:
    """None when Placement would accept the hold on this (active, same-AZ) pool, else why not: `no_pool`
    (a class without inventory), `unit_constraints` (min_unit, max_unit or step_size refuse the amount;
    the same write with those lifted would fit) or `no_room` (capacity, reserved, allocation_ratio)."""
    if not all(cls in pool.inventories for cls in need):
        return NO_POOL
    if _placement_accepts(pool, need, own):
        return None
    lifted = replace(pool, inventories={rc: replace(inv, min_unit=1, max_unit=placement_models.MAX_INT,
                                                    step_size=1) for rc, inv in pool.inventories.items()})
    return UNIT_CONSTRAINTS if _placement_accepts(lifted, need, own) else NO_ROOM


def choose_pool(
    az: str, need: Mapping[str, int], pools: Sequence[Pool], current: str | None = None,
    own_on_current: Mapping[str, int] | None = None,
) -> tuple[str | None, str]:
    """Stay on the current pool while Placement would accept the hold there (counting what we hold there),
    else the first pool by name that Placement accepts; with none, (None, the reason).

    Pools are named in the answer, allocations and records by `Pool.key` (the provider uuid). The reason
    is `no_pool` when no active pool in the AZ has inventory of every class, else `no_room` when a pool
    refused for capacity, else `unit_constraints`.
    """
    own = own_on_current or {}
    refusals: set[str] = set()
    ordered = [p for p in pools if p.key == current] + sorted(
        (p for p in pools if p.key != current), key=lambda p: (p.name, p.key))
    for pool in ordered:
        if not pool.active or pool.availability_zone != az:
            continue
        refusal = placement_refusal(pool, need, own if pool.key == current else {})
        if refusal is None:
            return pool.key, HELD
        refusals.add(refusal)
    for reason in (NO_ROOM, UNIT_CONSTRAINTS):
        if reason in refusals:
            return None, reason
    return None, NO_POOL


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
    commitments: int = 0  # every listed entry, parsed or not, each once
    projects: int = 0  # every listed project, each once

    def writes(self, stored: Mapping[str, Reservation]) -> list[tuple[str, Decision]]:
        """The decisions that change something: a record that differs, or a Placement change."""
        return [(uuid, d) for uuid, d in self.decisions.items()
                if d.placement is not None or record_changed(d.record, stored.get(uuid))]

    def status_counts(self, stored: Mapping[str, Reservation]) -> Counter[str]:
        after = dict(stored)
        after.update({uuid: d.record for uuid, d in self.decisions.items() if d.record is not None})
        return Counter(r.status for r in after.values())


def limes_answered_nowhere(snapshot: Snapshot, stored: Mapping[str, Reservation]) -> bool:
    """Every listed project answered 404 while reservations are kept (not released): a routing fault (a
    wrong endpoint, a Limes that lost its database), not a cloud without commitments. Two such passes would
    otherwise release everything."""
    ids = {p.id for p in snapshot.projects}
    return (bool(ids) and ids <= snapshot.limes_not_found
            and any(r.status != "released" for r in stored.values()))


def conflict_record(project: Project, commitment: Commitment, flavors: Mapping[str, Flavor],
                    now: float) -> Reservation:
    """The first record of a commitment UUID that two projects list (its first listing by project id):
    a conflict, left alone until one project lists it."""
    name = commitment.resource_name.removeprefix(INSTANCES_PREFIX)
    flavor = flavors.get(name)
    return Reservation(
        commitment_uuid=commitment.uuid, commitment_id=commitment.id, project_id=project.id,
        domain_id=project.domain_id, availability_zone=commitment.availability_zone, flavor=name,
        amount=commitment.amount, matched=0, remaining=commitment.amount,
        resources=per_instance(flavor) if flavor is not None else (), status="conflict",
        reason=UUID_IN_SEVERAL_PROJECTS, pool=None, expires_at=commitment.expires_at,
        limes_status=derive_status(commitment, now))


def plan_pass(
    snapshot: Snapshot, stored: Mapping[str, Reservation], consumers: Mapping[str, Consumer],
    pools: Sequence[Pool], now: float,
) -> PassPlan:
    """Decide every commitment of a successful fetch, releases first so their room is free for holds.

    Every project, commitment and server counts once (`unique`; contradicting duplicates raise Untrusted,
    as does a pass where every project answered 404 while reservations are kept). Anything listed is never
    missing: a commitment that did not parse keeps its record (and a project with an entry whose UUID could
    not be read keeps all of its records); a UUID listed by two projects is a conflict, left alone.
    """
    if limes_answered_nowhere(snapshot, stored):
        raise Untrusted("every project answered 404")
    plan = PassPlan()
    used = {p.key: Counter(p.used) for p in pools}
    projects = unique(snapshot.projects, lambda p: p.id, "project")
    plan.projects = len(projects)
    listed_projects = {p.id: p for p in projects}
    listed: set[str] = set()
    unreadable: set[str] = set()  # projects with an entry whose UUID could not be read
    entries: dict[str, list[tuple[Project, Commitment | None]]] = {}
    for project in projects:
        for uuid in snapshot.unparsed.get(project.id, ()):
            plan.commitments += 1
            plan.skipped[MALFORMED] += 1
            if uuid is None:
                unreadable.add(project.id)
            else:
                listed.add(uuid)
                entries.setdefault(uuid, []).append((project, None))
        for commitment in unique(snapshot.commitments.get(project.id, ()), lambda c: c.uuid, "commitment"):
            plan.commitments += 1
            listed.add(commitment.uuid)
            entries.setdefault(commitment.uuid, []).append((project, commitment))
    selected: list[Selected] = []
    conflicts: dict[str, Reservation] = {}
    for uuid, found in entries.items():
        parsed = [(p, c) for p, c in found if c is not None]
        if len({p.id for p, _ in found}) > 1 and canonical_uuid(uuid):
            # Whatever we hold stays and nothing is written to Placement until one project lists it.
            previous = stored.get(uuid)
            if previous is not None:
                conflicts[uuid] = replace(previous, status="conflict", reason=UUID_IN_SEVERAL_PROJECTS,
                                          missing_passes=0)
            elif parsed:
                project, commitment = min(parsed, key=lambda pc: pc[0].id)
                conflicts[uuid] = conflict_record(project, commitment, snapshot.flavors, now)
            continue
        for project, commitment in parsed:
            choice = select(commitment, project, snapshot.flavors, now)
            if isinstance(choice, Skipped):
                plan.skipped[choice.reason] += 1
            else:
                selected.append(choice)

    for uuid, previous in sorted(stored.items()):
        if uuid in listed or previous.project_id in unreadable:
            continue
        reason = MISSING_FROM_LIMES if previous.project_id in listed_projects else PROJECT_GONE
        decision = decide_missing(previous, consumers.get(uuid), now, reason)
        _apply_to_used(used, consumers.get(uuid), decision)
        plan.decisions[uuid] = decision
    for uuid, record in sorted(conflicts.items()):
        plan.decisions[uuid] = Decision(record)

    servers = {project: unique(listing, lambda v: v.id, "server") for project, listing in snapshot.servers.items()}
    matched = match_servers(selected, servers)
    for item in sorted(selected, key=lambda s: (s.commitment.id, s.commitment.uuid)):
        uuid = item.commitment.uuid
        view = [replace(p, used=dict(used[p.key])) for p in pools]
        decision = decide_present(item, matched[uuid], stored.get(uuid), consumers.get(uuid), view)
        _apply_to_used(used, consumers.get(uuid), decision)
        plan.decisions[uuid] = decision
    return plan


def _apply_to_used(used: dict[str, Counter[str]], consumer: Consumer | None, decision: Decision) -> None:
    """What a decision's Placement change does to the pools' usage, for the commitments decided after it."""
    change = decision.placement
    if change is None:
        return
    if consumer is not None:
        for pool, amounts in consumer.allocations.items():
            if pool in used:
                used[pool].subtract(amounts)
    for pool, amounts in change.allocations.items():
        if pool in used:
            used[pool].update(amounts)
