"""How tenant principals are named and opened (pure)."""

from __future__ import annotations

from collections.abc import Callable

from chalicelib.auth.principals import Principal, key_principal
from chalicelib.tenants.models import TenantPrincipal

TenantLookup = Callable[[str, str], TenantPrincipal | None]  # (tenant, principal) -> its record

TENANT_PREFIX = "tenant:"


def stored_name(tenant: str, principal: str) -> str:
    """The principal name a token item stores: `tenant:<tenant>/<principal>`."""
    return f"{TENANT_PREFIX}{tenant}/{principal}"


def parse_stored_name(name: str) -> tuple[str, str] | None:
    if not name.startswith(TENANT_PREFIX):
        return None
    tenant, sep, principal = name[len(TENANT_PREFIX):].partition("/")
    return (tenant, principal) if sep and tenant and principal else None


def principal_of(record: TenantPrincipal | None, token_epoch: str | None) -> Principal | None:
    """A token opens its principal only while the principal exists in the epoch the token was issued in."""
    if record is None or token_epoch is None or record.epoch != token_epoch:
        return None
    return Principal("tenant", record.name, tenant=record.tenant, grants=frozenset(record.grants))


def merged_grants(grants: list[str]) -> tuple[str, ...]:
    """Grants as stored: each once, sorted (so the answer does not depend on the order given)."""
    return tuple(sorted(set(grants)))


def principal_resolver(lookup: TenantLookup) -> Callable[[str, str | None], Principal | None]:
    """What the authenticator resolves a key record's principal name with: a tenant principal's through
    `lookup` (a second read, so a revocation or re-grant applies to every token), any other as a key principal."""

    def resolve(stored: str, epoch: str | None) -> Principal | None:
        tenant_name = parse_stored_name(stored)
        if tenant_name is None:
            return key_principal(stored)
        return principal_of(lookup(*tenant_name), epoch)

    return resolve
