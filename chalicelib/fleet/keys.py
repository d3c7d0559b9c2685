"""The fleet's item keys, and what Placement's inventory writes add for a pool's provider.

Kept apart from the store adapter (no Placement import here), so Placement's store can import it.
"""

from __future__ import annotations

from typing import Any

from chalicelib.fleet.catalog import POOLS
from chalicelib.store.keys import key
from chalicelib.store.ops import get_item

VERSION_SK = "OBJ!VERSION"
OBJECT = "OBJ#"


def fleet_pk(tenant: str) -> str:
    return f"FLEET#{tenant}"


def object_sk(kind: str, ident: str) -> str:
    return f"{OBJECT}{kind}#{ident}"


# --- for Placement's inventory writes ---------------------------------------------------------------


def fleet_version_bump_item(table: str, tenant: str) -> dict[str, Any]:
    """Moves the tenant's fleet version: any apply planned before this write then fails as CONFIG_DRIFT."""
    return {"Update": {"TableName": table, "Key": key(fleet_pk(tenant), VERSION_SK),
                       "UpdateExpression": "ADD version :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}}


def pool_tenant(client: Any, table: str, provider_uuid: str, provider_name: str) -> str | None:
    """The tenant whose pool this provider is: its name is `<tenant>/...` and that tenant has a pool of its uuid."""
    tenant, sep, _ = provider_name.partition("/")
    if not sep or not tenant:
        return None
    found = get_item(client, table, key(fleet_pk(tenant), object_sk(POOLS, provider_uuid)))
    return tenant if found else None


def provider_write_items(client: Any, table: str, provider_uuid: str, provider_name: str) -> list[dict[str, Any]]:
    """What a Placement inventory write on this provider adds to its own transaction: [] unless it is a pool's."""
    tenant = pool_tenant(client, table, provider_uuid, provider_name)
    return [fleet_version_bump_item(table, tenant)] if tenant else []
