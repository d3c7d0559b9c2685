"""Placement's rules, pure: inventory validation, capacity, generations, consumer records.

Every function decides from values already read; the store writes the decision in one
transaction conditioned on those values being unchanged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field

from chalicelib.placement import errors
from chalicelib.placement.classes import class_order
from chalicelib.placement.models import (
    CONSUMER_COUNT,
    UNKNOWN_CONSUMER_TYPE,
    Consumer,
    ConsumerWrite,
    Inventory,
    Provider,
)

# --- inventories -------------------------------------------------------------------------------


INTEGER_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size")


def inventory_from(data: Mapping[str, object]) -> Inventory:
    """An inventory record from a validated body, with Placement's defaults. A whole-number float (`10.0`,
    which JSON Schema counts as an integer) is stored as the integer, as Placement stores it."""
    fields = {k: int(data[k]) for k in INTEGER_FIELDS if k in data}  # type: ignore[call-overload]
    ratio = data.get("allocation_ratio", 1.0)
    return Inventory(**fields, allocation_ratio=float(ratio))  # type: ignore[arg-type]


def capacity_problem(resource_class: str, provider_uuid: str, inventory: Inventory, *,
                     reserved_may_equal_total: bool) -> str | None:
    """Placement's capacity rule: `int((total - reserved) * allocation_ratio)` must be > 0, or >= 0 from 1.26
    (where reserved may equal total); it names reserved vs total, as Placement does, whatever the cause."""
    usable = int((inventory.total - inventory.reserved) * inventory.allocation_ratio)
    if reserved_may_equal_total:
        if usable < 0:
            return (f"Invalid inventory for '{resource_class}' on resource provider '{provider_uuid}'. "
                    "The reserved value is greater than total.")
        return None
    if usable <= 0:
        return (f"Invalid inventory for '{resource_class}' on resource provider '{provider_uuid}'. "
                "The reserved value is greater than or equal to total.")
    return None


def classes_in_use(provider: Provider, removed: Iterable[str]) -> list[str]:
    """Removed classes that still have allocations, in the standard class order."""
    return class_order(rc for rc in removed if provider.used(rc) > 0)


def in_use_message(classes: list[str], provider_uuid: str) -> str:
    return f"Inventory for '{', '.join(classes)}' on resource provider '{provider_uuid}' in use."


# --- consumer generations ----------------------------------------------------------------------


def check_consumer_generation(existing: Consumer | None, write: ConsumerWrite) -> None:
    """1.28+: null means "I expect no consumer"; otherwise the generation must match. 409 at once."""
    if not write.check_generation:
        return
    if existing is None:
        if write.generation is not None:
            raise errors.ConsumerGenerationConflict(
                f"consumer generation conflict - expected null but got {write.generation}")
        return
    if existing.generation != write.generation:
        got = "None" if write.generation is None else write.generation
        raise errors.ConsumerGenerationConflict(
            f"consumer generation conflict - expected {existing.generation} but got {got}")


def written_generation(old: Consumer | None, write: ConsumerWrite) -> int:
    """The consumer's generation after a write that leaves it, as upstream: a write that places allocations
    moves it (a new consumer is created at 0 and moved to 1); an empty one moves nothing, so a new consumer
    stays at 0 with no allocations (upstream's `ensure_consumer` creates the record, `replace_all` has
    nothing to write). A consumer emptied of its allocations does not stay (`decide_allocations`)."""
    if write.allocations:
        return (old.generation + 1) if old else 1
    return old.generation if old else 0


# --- allocations -------------------------------------------------------------------------------


@dataclass
class ProviderChange:
    """What a write does to one provider, as deltas applied where the item is (not values read):
    `deltas` per class, `limits` the highest usage per class that still leaves room for a positive
    delta (the capacity condition), `inventory_version` the inventory the checks were made against
    (None for a provider that was not read: a consumer moved off it, which only releases usage), and
    `created_at` the provider's creation stamp, so that a provider deleted and made again under the same
    uuid, whose inventory version starts over, is not taken for the one read (None: not checked)."""

    deltas: dict[str, int]
    limits: dict[str, int]
    bump_generation: bool
    inventory_version: int | None
    created_at: int | None = None


# A usage counter: (project, user or None for the whole project, consumer type or None for every type).
# GET /usages reads one of them (or, at 1.38 without `consumer_type`, the per-type ones of a project/user).
UsageBucket = tuple[str, str | None, str | None]
UsageDeltas = dict[UsageBucket, dict[str, int]]


@dataclass
class AllocationDecision:
    providers: dict[str, ProviderChange] = field(default_factory=dict)
    consumers: dict[str, Consumer | None] = field(default_factory=dict)  # new record; None = delete
    usage_deltas: UsageDeltas = field(default_factory=dict)


def usage_buckets(project: str, user: str, consumer_type: str | None) -> list[UsageBucket]:
    """The four counters a consumer's allocations count in: its project's and its user's, for all
    types and for its own type (None: "unknown")."""
    kind = consumer_type or UNKNOWN_CONSUMER_TYPE
    return [(project, None, None), (project, user, None), (project, None, kind), (project, user, kind)]


def count_consumer(target: UsageDeltas, consumer: Consumer, sign: int) -> None:
    """Counts `consumer` in its buckets, +1 or -1; one without allocations counts in none (upstream counts
    consumers through their allocations)."""
    buckets = usage_buckets(consumer.project_id, consumer.user_id, consumer.consumer_type)
    if consumer.allocations:
        for key in buckets:
            bucket = target.setdefault(key, {})
            bucket[CONSUMER_COUNT] = bucket.get(CONSUMER_COUNT, 0) + sign
    for resources in consumer.allocations.values():
        for rc, amount in resources.items():
            for key in buckets:
                bucket = target.setdefault(key, {})
                bucket[rc] = bucket.get(rc, 0) + sign * amount


def nonzero(deltas: UsageDeltas) -> UsageDeltas:
    return {key: {k: n for k, n in delta.items() if n} for key, delta in deltas.items() if any(delta.values())}


def decide_allocations(
    writes: list[ConsumerWrite],
    consumers: Mapping[str, Consumer | None],
    providers: Mapping[str, Provider | None],
    class_exists: Callable[[str], bool],
    not_found_prefix: Callable[[str], str],
) -> AllocationDecision:
    """Placement's allocation write, in its check order:

    consumer generations -> providers exist (400) -> classes exist (400) -> the class is in
    the provider's inventory (409) -> min_unit/max_unit/step_size (409) -> capacity (409),
    where capacity is checked against usage without the written consumers' own allocations,
    and an over-capacity result is accepted when it is no worse than before the write.
    """
    for write in writes:
        check_consumer_generation(consumers.get(write.uuid), write)
    for write in writes:
        for rp in write.allocations:
            if providers.get(rp) is None:
                raise errors.UnknownProvider(f"Allocation for resource provider '{rp}' that does not exist.")
    for write in writes:
        for resources in write.allocations.values():
            for rc in resources:
                if not class_exists(rc):
                    raise errors.UnknownResourceClass(f"{not_found_prefix(write.uuid)}No such resource class {rc}.")

    # Per provider and class: what the written consumers hold now, and what they ask for.
    held: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    requested: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for write in writes:
        old = consumers.get(write.uuid)
        for rp, resources in (old.allocations if old else {}).items():
            for rc, amount in resources.items():
                held[rp][rc] += amount
        for rp, resources in write.allocations.items():
            for rc, amount in resources.items():
                requested[rp][rc] += amount
    _check_every_provider_has_inventory(writes, providers)
    so_far: dict[str, dict[str, int]] = defaultdict(dict)
    for write in writes:
        for rp, resources in write.allocations.items():
            provider = providers[rp]
            assert provider is not None
            kept = {rc: provider.used(rc) - held[rp].get(rc, 0) for rc in resources}
            _check_one(provider, resources, kept, so_far[rp])

    named: set[str] = set()
    for write in writes:
        named.update(write.allocations)
        old = consumers.get(write.uuid)
        if not write.allocations and old is not None:
            named.update(old.allocations)  # an emptied consumer's providers count as written
    decision = AllocationDecision()
    for rp in sorted(set(held) | set(requested)):
        classes = set(held[rp]) | set(requested[rp])
        deltas = {rc: requested[rp].get(rc, 0) - held[rp].get(rc, 0) for rc in sorted(classes)}
        provider = providers.get(rp)
        limits: dict[str, int] = {}
        if provider is not None:
            for rc, delta in deltas.items():
                if delta > 0:  # room was checked above; the write must still find it
                    limits[rc] = math.floor(provider.inventories[rc].capacity) - delta
        decision.providers[rp] = ProviderChange(
            deltas={rc: d for rc, d in deltas.items() if d}, limits=limits, bump_generation=rp in named,
            inventory_version=provider.inventory_version if provider is not None else None,
            created_at=(provider.created_at or None) if provider is not None else None,
        )

    for write in writes:
        old = consumers.get(write.uuid)
        if old is not None:
            count_consumer(decision.usage_deltas, old, -1)
        # Below 1.38 (no type sent) an existing consumer keeps its type, a new one has none, as upstream.
        consumer_type = write.consumer_type if write.consumer_type is not None else (
            old.consumer_type if old else None)
        new = Consumer(
            uuid=write.uuid, project_id=write.project_id, user_id=write.user_id,
            generation=written_generation(old, write), version=(old.version + 1) if old else 1,
            allocations={rp: dict(res) for rp, res in write.allocations.items()}, consumer_type=consumer_type,
        )
        count_consumer(decision.usage_deltas, new, +1)
        emptied = not write.allocations and old is not None and bool(old.allocations)
        decision.consumers[write.uuid] = None if emptied else new
    decision.usage_deltas = nonzero(decision.usage_deltas)
    return decision


def _check_every_provider_has_inventory(writes: list[ConsumerWrite],
                                        providers: Mapping[str, Provider | None]) -> None:
    """As Placement, before any amount: a provider with inventory of none of the request's classes (all
    consumers, all providers) is refused naming every class the request asks for."""
    classes = {rc for write in writes for resources in write.allocations.values() for rc in resources}
    named = {rp for write in writes for rp in write.allocations}
    missing = sorted(rp for rp in named if not _has_any(providers[rp], classes))
    if missing:
        raise errors.AllocationInvalid(
            f"Unable to allocate inventory: Inventory for '{', '.join(class_order(classes))}' on resource "
            f"provider '{', '.join(missing)}' invalid.")


def _has_any(provider: Provider | None, classes: set[str]) -> bool:
    return provider is not None and any(rc in provider.inventories for rc in classes)


def _check_one(provider: Provider, resources: Mapping[str, int], kept: Mapping[str, int],
               so_far: MutableMapping[str, int]) -> None:
    """One consumer's amounts on one provider, in the body's order, each checked against what the write's
    amounts up to it add (upstream's running sum: the write is refused as by the totals, naming the
    class and provider upstream names first)."""
    for rc, amount in resources.items():
        so_far[rc] = so_far.get(rc, 0) + amount
        inventory = provider.inventories.get(rc)
        if inventory is None:
            raise errors.AllocationInvalid(
                f"Unable to allocate inventory: Inventory for '{rc}' on resource provider "
                f"'{provider.uuid}' invalid.")
        if amount < inventory.min_unit or amount > inventory.max_unit or amount % inventory.step_size:
            raise errors.AllocationInvalid(
                f"Unable to allocate inventory: Unable to create allocation for '{rc}' on resource provider "
                f"'{provider.uuid}'. The requested amount would violate inventory constraints.")
        used = kept.get(rc, 0)
        wanted = used + so_far[rc]
        if inventory.capacity < used + amount or inventory.capacity < wanted:
            if wanted <= provider.used(rc):
                continue  # over capacity, but no worse than before this write
            raise errors.CapacityExceeded(
                f"Unable to allocate inventory: Unable to create allocation for '{rc}' on resource provider "
                f"'{provider.uuid}'. The requested amount would exceed the capacity.")


def release_all(consumer: Consumer) -> UsageDeltas:
    """Usage deltas of deleting every allocation of a consumer (DELETE /allocations/{c})."""
    deltas: UsageDeltas = {}
    count_consumer(deltas, consumer, -1)
    return nonzero(deltas)
