"""The operator's inputs for tenant principals and Sites: strict models (pure)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from chalicelib.compute.validation import NAME_PATTERN, StrictModel

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
# `permission@scope`: e.g. compute:fleet:admin@compute-fleet
Grant = Annotated[str, StringConstraints(pattern=r"^[a-z][a-zA-Z0-9:._-]{0,127}@[a-z0-9][a-zA-Z0-9._-]{0,127}$")]
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
