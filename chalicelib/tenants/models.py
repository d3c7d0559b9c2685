"""Tenant principals and Site registrations, and the operator's inputs for them (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from chalicelib.compute.validation import NAME_PATTERN, StrictModel

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
# `permission@scope`: e.g. compute:fleet:admin@compute-fleet
Grant = Annotated[str, StringConstraints(pattern=r"^[a-z][a-zA-Z0-9:._-]{0,127}@[a-z0-9][a-z0-9._-]{0,127}$")]
SiteKind = Literal["kubernetes", "slurm", "openstack"]


class IssuePrincipal(StrictModel):
    principal: Name
    grants: list[Grant] = Field(max_length=64)


class RegisterSite(StrictModel):
    name: Name
    kind: SiteKind


class TenantPath(StrictModel):
    tenant: Name


class PrincipalPath(StrictModel):
    tenant: Name
    principal: Name


@dataclass(frozen=True)
class TenantPrincipal:
    tenant: str
    name: str
    grants: tuple[str, ...]
    epoch: str  # tokens issued under another epoch (before a revocation) never open this principal
    created_at: int

    def as_body(self) -> dict[str, object]:
        return {"tenant": self.tenant, "principal": self.name, "grants": list(self.grants)}


@dataclass(frozen=True)
class SiteRegistration:
    tenant: str
    name: str
    kind: str
    created_at: int

    def as_body(self) -> dict[str, object]:
        return {"tenant": self.tenant, "name": self.name, "kind": self.kind}
