"""Principals and grants (pure).

Every caller is one `Principal`: a Site key, the service key, a Placement key or
a tenant principal. What it may open is its set of grants, each written
`permission@scope`; an operation declares the one grant it needs (see each
family's route table) and `Principal.allows` is the single check.

Key principals are stored by name (`site:<site>`, `service`, `placement`) with
their key hash; their grants follow from the kind, so a stored key never
carries grants that could drift from the code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from chalicelib.contract.types import SITES

PrincipalKind = Literal["site", "service", "placement", "tenant"]

SITE_PREFIX = "site:"
SERVICE = "service"
PLACEMENT = "placement"

# The grants each kind of key holds. A site key opens only its own Site's paths.
SITE_GRANT = "resource-provisioning:site@{site}"
SERVICE_GRANT = "resource-provisioning:operator@service"
PLACEMENT_GRANT = "placement:admin@placement"

KEY_TARGETS = (*SITES, SERVICE, PLACEMENT)


class PolicyCredential(Protocol):
    """What a policy reads of a caller (oslo.context's `to_policy_values()`): chalicelib.auth.keystone's
    Credential for Placement's callers."""

    def policy_values(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Principal:
    kind: PrincipalKind
    name: str
    tenant: str | None = None
    site: str | None = None
    grants: frozenset[str] = field(default_factory=frozenset)
    # Placement's callers only: what its policy reads of the caller (a Placement key's fixed roles, or a
    # validated Keystone token's user, project, roles and scope); None for every other family's principal.
    credential: PolicyCredential | None = None

    def allows(self, grant: str) -> bool:
        return grant in self.grants


def key_principal(stored_name: str) -> Principal | None:
    """The principal a stored key speaks for; None for a name this code does not know."""
    if stored_name == SERVICE:
        return Principal("service", SERVICE, grants=frozenset({SERVICE_GRANT}))
    if stored_name == PLACEMENT:
        return Principal("placement", PLACEMENT, grants=frozenset({PLACEMENT_GRANT}))
    if stored_name.startswith(SITE_PREFIX):
        site = stored_name[len(SITE_PREFIX):]
        if site in SITES:
            return Principal("site", stored_name, site=site, grants=frozenset({SITE_GRANT.format(site=site)}))
    return None


def key_principal_name(target: str) -> str:
    """The stored principal name for `k8s`, `slurm`, `service` or `placement` as an operator names it."""
    if target in (SERVICE, PLACEMENT):
        return target
    if target in SITES:
        return SITE_PREFIX + target
    raise ValueError(f"unknown principal {target!r}; expected one of {', '.join(KEY_TARGETS)}")


def principal_for(target: str) -> Principal:
    """The key principal an operator names: `k8s`, `slurm`, `service` or `placement`."""
    principal = key_principal(key_principal_name(target))
    assert principal is not None
    return principal
