"""What the commitment sync reads (Keystone, Nova, Limes) and what it keeps (reservations), as plain values.

Wire objects are pydantic models that ignore keys they do not use (Limes and Nova add
keys over time) and are frozen: a fetched snapshot cannot change under the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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


class Commitment(_Wire):
    """One Limes commitment as listed (research §2.4); optional keys may be absent on older Limes."""

    id: int
    uuid: str = Field(min_length=1)
    service_type: str
    resource_name: str
    availability_zone: str
    amount: int = Field(ge=0)
    unit: str | None = None
    duration: str = ""
    created_at: int | None = None
    confirm_by: int | None = None
    confirmed_at: int | None = None
    expires_at: int | None = None
    status: str | None = None
    transfer_status: str | None = None


@dataclass(frozen=True)
class Snapshot:
    """Everything one pass read, fetched before anything is decided (fail closed: all or nothing).

    `commitments` has an entry for every Keystone project (a Limes 404 gives an empty one,
    its id in `limes_not_found`); `servers` has one for every project with a compute
    instance commitment.
    """

    fetched_at: float
    projects: tuple[Project, ...]
    flavors: Mapping[str, Flavor]
    commitments: Mapping[str, tuple[Commitment, ...]]
    servers: Mapping[str, tuple[Server, ...]]
    limes_not_found: frozenset[str] = frozenset()
    malformed: int = 0  # commitments Limes listed that did not parse: skipped, counted


@dataclass(frozen=True)
class Pool:
    """A fleet pool of the commitments tenant as the pool rule sees it: plain data, no Placement types."""

    name: str
    availability_zone: str
    active: bool
    free: Mapping[str, int]  # per resource class: capacity not allocated to anyone (absent = no inventory)


@dataclass(frozen=True)
class Consumer:
    """The Placement consumer whose id is the commitment's UUID, as read before deciding."""

    project_id: str
    user_id: str
    generation: int
    allocations: Mapping[str, Mapping[str, int]]  # pool name -> resource class -> amount


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
    pool: str | None  # the pool an allocation of ours is on; None when nothing is held
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
