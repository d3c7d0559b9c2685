"""Tenant principals and Site registrations as stored (pure).

The operator's inputs for them are chalicelib/tenants/inputs.py (pydantic, loaded with the operator and
compute routes, not by the authenticator that reads these records on every tenant request).
"""

from __future__ import annotations

from dataclasses import dataclass


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
