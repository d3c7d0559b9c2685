"""Lifecycle, reasons and revision rules (pure, table-tested in tests/unit).

Reasons are each evaluated on their own and listed in the contract's enum
order; the lifecycle is the first matching rule.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass

REASONS = (
    "project_unbound",
    "provisioning",
    "provider_erred",
    "limits_not_applied",
    "limits_changing",
    "provider_paused",
)
_PENDING_REASONS = frozenset({"project_unbound", "provisioning", "limits_not_applied"})

# Fixed namespace: allocation ids are uuid5(namespace, "<site>/<resourceRef>"), so the
# same resource at the same Site always maps to the same allocation, never across Sites.
ALLOCATION_NAMESPACE = uuid.UUID("6f1b2a52-4c8e-5d0a-9b7e-3a1c2d4e5f60")


def allocation_id_for(site: str, resource_ref: str) -> str:
    return str(uuid.uuid5(ALLOCATION_NAMESPACE, f"{site}/{resource_ref}"))


@dataclass(frozen=True)
class Observed:
    """What a report says about a resource, plus the Project it resolved to."""

    project_id: str | None
    provider_state: str
    paused: bool
    native_scope: str | None
    configured: Mapping[str, int]
    applied: Mapping[str, int] | None


def reasons_for(o: Observed) -> tuple[str, ...]:
    found = {
        "project_unbound": o.project_id is None,
        "provisioning": o.provider_state == "Creating" or o.native_scope is None,
        "provider_erred": o.provider_state == "Erred",
        "limits_not_applied": o.applied is None,
        "limits_changing": (o.applied is not None and dict(o.applied) != dict(o.configured))
        or o.provider_state == "Updating",
        "provider_paused": o.paused,
    }
    return tuple(r for r in REASONS if found[r])


def lifecycle_for(o: Observed, reasons: tuple[str, ...]) -> str:
    if o.provider_state == "Terminated":
        return "retired"
    if o.paused or o.provider_state == "Terminating":
        return "suspended"
    if not reasons:
        return "ready"
    if _PENDING_REASONS.intersection(reasons):
        return "pending"
    return "changing"


@dataclass(frozen=True)
class Status:
    """The part of an allocation whose change bumps the revision."""

    observed: Observed
    lifecycle: str
    reasons: tuple[str, ...]


def status_for(o: Observed) -> Status:
    if o.provider_state == "Terminated":
        return Status(o, "retired", ())
    reasons = reasons_for(o)
    return Status(o, lifecycle_for(o, reasons), reasons)


def next_revision(previous: Status | None, previous_revision: int, current: Status) -> int:
    """1 at the first accepted report; +1 exactly when the material status changes."""
    if previous is None:
        return 1
    return previous_revision + (0 if previous == current else 1)
