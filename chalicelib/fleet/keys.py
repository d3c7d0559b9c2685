"""The fleet's item keys (no Placement import here: Placement's item builders know only the link a
pool's provider carries, `Provider.linked_version`, which fleet/placement_writes.py sets to
`fleet_version_key(tenant)`)."""

from __future__ import annotations

VERSION_SK = "OBJ!VERSION"
OBJECT = "OBJ#"


def fleet_pk(tenant: str) -> str:
    return f"FLEET#{tenant}"


def object_sk(kind: str, ident: str) -> str:
    return f"{OBJECT}{kind}#{ident}"


def fleet_version_key(tenant: str) -> tuple[str, str]:
    """(pk, sk) of the tenant's fleet version: what every inventory write of one of its pools' providers moves."""
    return fleet_pk(tenant), VERSION_SK
