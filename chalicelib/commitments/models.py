"""What the commitment sync reads (Keystone, Nova, Limes) and what it keeps (reservations), as plain values.

Wire objects are pydantic models that read only the keys the rules use, tolerantly, and
ignore every other key (Limes and Nova add keys over time, and a key nobody reads must not
make a commitment unreadable); they are frozen: a fetched snapshot cannot change under the rules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from chalicelib.placement.models import Inventory

CREATOR = "commitments syncer"  # the reservation's creator, as Cortex names it
SYNCER_USER = "commitments-syncer"  # the Placement consumer's user id
INSTANCES_PREFIX = "instances_"


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class Project(_Wire):
    id: str
    name: str = ""
    domain_id: str
    parent_id: str | None = None


class Flavor(_Wire):
    id: str
    name: str
    vcpus: int = Field(ge=0)
    ram: int = Field(ge=0)  # MiB
    disk: int = Field(ge=0)  # GB
    is_public: bool = Field(default=True, alias="os-flavor-access:is_public")
    extra_specs: dict[str, str] = Field(default_factory=dict)


class Server(_Wire):
    id: str
    tenant_id: str
    status: str = ""
    availability_zone: str = Field(default="", alias="OS-EXT-AZ:availability_zone")
    flavor_name: str  # flavor.original_name (Nova >= 2.47)


def unix_seconds(value: Any) -> Any:
    """A time as UNIX seconds, read tolerantly: Limes sends integers; a whole float, a numeric string or an
    ISO 8601 timestamp (UTC when it names no offset) mean the same instant. Anything else is left to fail."""
    if isinstance(value, str) and not _numeric(value):  # a number, in a string or not, is pydantic's to read
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return value
        return math.floor((parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp())
    return value


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


Seconds = Annotated[int | None, BeforeValidator(unix_seconds)]


class Commitment(_Wire):
    """One Limes commitment as listed (research §2.4), only the keys the rules use (`created_at`, `duration`,
    `unit`, `transfer_status`, ... are never read); optional ones may be absent on older Limes."""

    id: int
    uuid: str = Field(min_length=1)
    service_type: str
    resource_name: str
    availability_zone: str
    amount: int = Field(ge=0)
    confirm_by: Seconds = None
    confirmed_at: Seconds = None
    expires_at: Seconds = None
    status: str | None = None


@dataclass(frozen=True)
class Snapshot:
    """Everything one pass read, fetched before anything is decided (fail closed: all or nothing).

    `commitments` has an entry for every Keystone project (a Limes 404 gives an empty one,
    its id in `limes_not_found`); `servers` has one for every project with a compute
    instance commitment. `unparsed` holds, per project, the UUID of each listed commitment
    that did not parse (None when not even its UUID could be read): listed all the same, so
    never "missing". Projects, commitments and servers are each listed once (the client
    drops repeated entries and fails on contradicting ones).
    """

    fetched_at: float
    projects: tuple[Project, ...]
    flavors: Mapping[str, Flavor]
    commitments: Mapping[str, tuple[Commitment, ...]]
    servers: Mapping[str, tuple[Server, ...]]
    limes_not_found: frozenset[str] = frozenset()
    unparsed: Mapping[str, tuple[str | None, ...]] = field(default_factory=dict)

    @property
    def malformed(self) -> int:
        """Commitments Limes listed that did not parse: skipped, counted."""
        return sum(len(v) for v in self.unparsed.values())


@dataclass(frozen=True)
class Pool:
    """A fleet pool of the commitments tenant as the pool rule sees it: its provider's inventories (Placement's
    own records, so that "fits" is decided by Placement's own allocation rule) and usage per class."""

    name: str
    availability_zone: str
    active: bool
    inventories: Mapping[str, Inventory]  # per resource class (absent = no inventory)
    used: Mapping[str, int] = field(default_factory=dict)  # per class, everyone's allocations on the provider
    id: str | None = None  # the pool's id = its Placement provider's uuid; None in name-only tables

    @property
    def key(self) -> str:
        """What allocations and records name the pool by: its id (the provider uuid), else its name."""
        return self.id or self.name

    @property
    def free(self) -> dict[str, int]:
        """Per class: floor((total - reserved) x allocation_ratio) - used, never below 0 (for reading only:
        whether an allocation fits is Placement's rule, which also applies min_unit, max_unit and step_size)."""
        return {rc: max(0, math.floor(inv.capacity) - self.used.get(rc, 0)) for rc, inv in self.inventories.items()}


@dataclass(frozen=True)
class Consumer:
    """The Placement consumer whose id is the commitment's UUID, as read before deciding."""

    project_id: str
    user_id: str
    generation: int
    allocations: Mapping[str, Mapping[str, int]]  # pool key (provider uuid) -> resource class -> amount


@dataclass(frozen=True)
class Reservation:
    """The record kept per commitment (keyed by its full UUID). The store adds the revision."""

    commitment_uuid: str
    commitment_id: int
    project_id: str
    domain_id: str
    availability_zone: str
    flavor: str
    amount: int
    matched: int
    remaining: int
    resources: tuple[tuple[str, int], ...]  # per instance, sorted by class, zero amounts left out
    status: str  # held | unplaced | pending | planned | released | conflict
    reason: str
    pool: str | None  # the pool (its key: the provider uuid) an allocation of ours is on; None when nothing is held
    expires_at: int | None
    limes_status: str  # the status this pass derived (confirmed, planned, ..., expired)
    missing_passes: int = 0  # consecutive successful passes without this commitment (two-pass release)
    creator: str = field(default=CREATOR)

    def to_dict(self) -> dict[str, Any]:
        return {
            "commitmentUuid": self.commitment_uuid, "commitmentId": self.commitment_id,
            "projectId": self.project_id, "domainId": self.domain_id,
            "availabilityZone": self.availability_zone, "flavor": self.flavor, "amount": self.amount,
            "matched": self.matched, "remaining": self.remaining, "resources": dict(self.resources),
            "status": self.status, "reason": self.reason, "pool": self.pool, "expiresAt": self.expires_at,
            "limesStatus": self.limes_status, "missingPasses": self.missing_passes, "creator": self.creator,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reservation:
        """The inverse of to_dict (the store keeps that dictionary)."""
        return cls(
            commitment_uuid=data["commitmentUuid"], commitment_id=int(data["commitmentId"]),
            project_id=data["projectId"], domain_id=data["domainId"], availability_zone=data["availabilityZone"],
            flavor=data["flavor"], amount=int(data["amount"]), matched=int(data["matched"]),
            remaining=int(data["remaining"]),
            resources=tuple(sorted((cls_, int(n)) for cls_, n in (data.get("resources") or {}).items())),
            status=data["status"], reason=data["reason"], pool=data.get("pool"),
            expires_at=int(data["expiresAt"]) if data.get("expiresAt") is not None else None,
            limes_status=data["limesStatus"], missing_passes=int(data.get("missingPasses", 0)),
            creator=data.get("creator", CREATOR),
        )
