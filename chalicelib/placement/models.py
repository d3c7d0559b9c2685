"""Placement's records as this service holds them (plain values; no store types)."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_INT = 2147483647

# Project and user given to consumers written below 1.8 without them (Placement's
# `incomplete_consumer_project_id` / `incomplete_consumer_user_id` defaults).
INCOMPLETE_ID = "00000000-0000-0000-0000-000000000000"

# The consumer type of a consumer written without one (below 1.38), as GET /allocations and GET /usages
# name it (upstream's NULL_CONSUMER_TYPE_ALIAS). Real types match ^[A-Z0-9_]+$, so it never collides.
UNKNOWN_CONSUMER_TYPE = "unknown"

# The key of a usage counter's consumer count among its per-class amounts (classes are upper case: no
# collision); 1.38's `consumer_count`.
CONSUMER_COUNT = "consumer_count"


@dataclass(frozen=True)
class Inventory:
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = MAX_INT
    step_size: int = 1
    allocation_ratio: float = 1.0

    @property
    def capacity(self) -> float:
        """What allocations may use: (total - reserved) * allocation_ratio, as Placement computes it."""
        return (self.total - self.reserved) * self.allocation_ratio

    def as_dict(self) -> dict[str, int | float]:
        return {
            "total": self.total, "reserved": self.reserved, "min_unit": self.min_unit,
            "max_unit": self.max_unit, "step_size": self.step_size,
            "allocation_ratio": float(self.allocation_ratio),
        }


@dataclass(frozen=True)
class Provider:
    """One resource provider item: inventories and usage per class, generation, internal version."""

    uuid: str
    name: str
    generation: int = 0
    version: int = 0  # bumped by every write of the item: the transactions' concurrency token
    inventory_version: int = 0  # bumped by every inventory write: what allocation writes are checked against
    inventories: dict[str, Inventory] = field(default_factory=dict)
    usages: dict[str, int] = field(default_factory=dict)
    updated_at: int = 0
    # The (pk, sk) of a counter every inventory write or delete of this provider moves in the same transaction:
    # set by the provider's writer of record (fleet: a pool's provider -> its tenant's fleet version), never by
    # Placement's API, so renaming the provider cannot untie it.
    linked_version: tuple[str, str] | None = None
    created_at: int = 0  # microseconds since the epoch at creation: the order providers are listed in
    # Nested providers (1.14): the parent (None for a root) and the tree's root ("" means the provider itself).
    parent_uuid: str | None = None
    root_uuid: str = ""
    children: int = 0  # direct children: a parent with children is not deleted
    # Their uuids, moved with the counter: known when as many as `children` (an item written before they were
    # kept has none), so a tree can be read by key, a level at a time, instead of by a Query of the index.
    child_uuids: frozenset[str] = frozenset()
    traits: frozenset[str] = frozenset()  # 1.6
    aggregates: frozenset[str] = frozenset()  # 1.1
    fence: str | None = None  # the reshape holding the provider (writers meet it; its item is the old state)
    # Created as a child and neither renamed nor moved since: with its generation still 0, Placement's row
    # has never been updated (a root's is, at once, to set its root), so its `updated_at` is NULL.
    fresh_child: bool = False

    @property
    def never_updated(self) -> bool:
        """Placement's `updated_at` is NULL: PUT /resource_providers/{u} answers without last-modified."""
        return self.fresh_child and self.generation == 0

    @property
    def root(self) -> str:
        return self.root_uuid or self.uuid

    @property
    def children_named(self) -> bool:
        """The item names all its children (`child_uuids`; an item written before they were kept names none)."""
        return len(self.child_uuids) == self.children

    def used(self, resource_class: str) -> int:
        return self.usages.get(resource_class, 0)


@dataclass(frozen=True)
class Consumer:
    """One consumer item: its allocations by provider and class, owner and generation. A consumer without
    allocations exists only as an empty first write leaves it (generation 0, `rules.written_generation`)."""

    uuid: str
    project_id: str
    user_id: str
    generation: int
    version: int
    allocations: dict[str, dict[str, int]] = field(default_factory=dict)
    updated_at: int = 0
    consumer_type: str | None = None  # 1.38; None: written without one ("unknown")


@dataclass(frozen=True)
class ConsumerWrite:
    """What one request asks for one consumer: its whole new allocation set."""

    uuid: str
    project_id: str
    user_id: str
    allocations: dict[str, dict[str, int]]  # provider uuid -> class -> amount; {} removes them all
    generation: int | None = None  # the consumer_generation sent (1.28+)
    check_generation: bool = False  # 1.28+: the sent generation must match
    # 1.38+: the consumer's type from now on; None (below 1.38) keeps an existing consumer's type, and a new
    # consumer has none ("unknown"), as upstream.
    consumer_type: str | None = None
