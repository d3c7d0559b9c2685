"""Operators manage tenants' principals and Sites; tenants list their Sites (thin: validation, store, answer)."""

from __future__ import annotations

from typing import Any

from chalicelib.auth.keys import generate_key, hash_key
from chalicelib.compute.validation import parse
from chalicelib.tenants.errors import SiteNameTaken, UnknownPrincipal
from chalicelib.tenants.inputs import IssuePrincipal, PrincipalPath, RegisterSite, TenantPath
from chalicelib.tenants.rules import merged_grants
from chalicelib.tenants.store import TenantStore


def issue_principal(tenants: TenantStore, tenant: str, body: dict[str, Any]) -> dict[str, Any]:
    """A new token for the principal (created if missing), its grants replaced; the token is shown only here."""
    parse(TenantPath, {"tenant": tenant})
    request = parse(IssuePrincipal, body)
    token = generate_key()
    record = tenants.issue(tenant, request.principal, merged_grants(request.grants), hash_key(token))
    return {**record.as_body(), "token": token}


def revoke_principal(tenants: TenantStore, tenant: str, principal: str) -> None:
    parse(PrincipalPath, {"tenant": tenant, "principal": principal})
    if not tenants.revoke(tenant, principal):
        raise UnknownPrincipal()


def list_principals(tenants: TenantStore, tenant: str) -> dict[str, Any]:
    parse(TenantPath, {"tenant": tenant})
    return {"items": [p.as_body() for p in tenants.principals(tenant)]}


def register_site(tenants: TenantStore, tenant: str, body: dict[str, Any]) -> dict[str, Any]:
    parse(TenantPath, {"tenant": tenant})
    request = parse(RegisterSite, body)
    site = tenants.register_site(tenant, request.name, request.kind)
    if site is None:
        raise SiteNameTaken()
    return site.as_body()


def list_sites(tenants: TenantStore, tenant: str) -> dict[str, Any]:
    parse(TenantPath, {"tenant": tenant})
    return {"items": [{"id": s.name, "name": s.name, "kind": s.kind} for s in tenants.sites(tenant)]}
