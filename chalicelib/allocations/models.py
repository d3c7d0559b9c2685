"""The stored allocation as a domain record (pure): what the rules decide on and the store adapter writes."""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.allocations.rules import Status


@dataclass(frozen=True)
class AllocationRecord:
    allocation_id: str
    site: str
    resource_ref: str
    offering_ref: str
    provider_project_ref: str
    status: Status
    used: dict[str, int] | None
    observed_at: str
    fingerprint: str
    revision: int
    version: int  # rises with every write; conditions every write (optimistic concurrency)

    @property
    def lifecycle(self) -> str:
        return self.status.lifecycle

    @property
    def project_id(self) -> str | None:
        return self.status.observed.project_id
