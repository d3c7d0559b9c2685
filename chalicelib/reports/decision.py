"""What one report does to its allocation (pure): the ordering and terminal rules.

- A retired allocation refuses every later report (`retired`).
- An older observation is `stale`; an equal instant is accepted without change
  when the resource object is identical (observedAt compared as an instant),
  and `stale` otherwise.
- A newer one is applied; the revision moves only when the material status does.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.allocations.models import AllocationRecord
from chalicelib.allocations.rules import Observed, next_revision, status_for
from chalicelib.contract.instants import parse_instant
from chalicelib.idempotency import fingerprint
from chalicelib.reports.models import Resource

STALE = "stale"
RETIRED = "retired"

MESSAGES = {
    STALE: "This report is not newer than the observation already applied to this resource.",
    RETIRED: "The allocation is retired and accepts no further reports.",
}


@dataclass(frozen=True)
class Accepted:
    record: AllocationRecord
    changed: bool  # False: equal instant, identical resource: nothing to write


@dataclass(frozen=True)
class Rejected:
    code: str


def resource_fingerprint(resource: Resource) -> str:
    data = resource.data()
    data["observedAt"] = parse_instant(resource.observed_at).canonical()
    return fingerprint(data)


def decide(
    site: str,
    allocation_id: str,
    current: AllocationRecord | None,
    resource: Resource,
    project_id: str | None,
) -> Accepted | Rejected:
    fp = resource_fingerprint(resource)
    if current is not None:
        if current.lifecycle == "retired":
            return Rejected(RETIRED)
        new_at, old_at = parse_instant(resource.observed_at), parse_instant(current.observed_at)
        if new_at < old_at:
            return Rejected(STALE)
        if new_at == old_at:
            return Accepted(current, changed=False) if fp == current.fingerprint else Rejected(STALE)
    status = status_for(
        Observed(
            project_id=project_id,
            provider_state=resource.provider_state,
            paused=resource.paused,
            native_scope=resource.native_scope,
            configured=dict(resource.configured),
            applied=dict(resource.applied) if resource.applied is not None else None,
        )
    )
    record = AllocationRecord(
        allocation_id=allocation_id,
        site=site,
        resource_ref=resource.resource_ref,
        offering_ref=resource.offering_ref,
        provider_project_ref=resource.provider_project_ref,
        status=status,
        used=dict(resource.used) if resource.used is not None else None,
        observed_at=resource.observed_at,
        fingerprint=fp,
        revision=next_revision(
            current.status if current else None, current.revision if current else 0, status
        ),
        version=(current.version + 1) if current else 1,
    )
    return Accepted(record, changed=True)
