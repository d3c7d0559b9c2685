"""Tenant principals and Site registrations in DynamoDB.

| item                  | pk              | sk                  |
|-----------------------|-----------------|---------------------|
| tenant principal      | TENANT#<tenant> | PRINCIPAL#<name>    |
| registered Site       | TENANT#<tenant> | SITE#<name>         |
| token of a principal  | KEYS            | <sha256 of token>   |

Issuing writes the token and the principal's grants in one transaction,
conditioned on the principal's epoch being the one read (so a concurrent
revocation can never be undone by an issue that read the principal before it).
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from chalicelib.auth.repository import new_record, put_new
from chalicelib.errors import Unavailable
from chalicelib.store.codec import to_item
from chalicelib.store.keys import key
from chalicelib.store.ops import ConditionFailed, Op, delete_if, get_item, put_if, query_all, transact
from chalicelib.tenants.models import SiteRegistration, TenantPrincipal
from chalicelib.tenants.rules import stored_name

PRINCIPAL = "PRINCIPAL#"
SITE = "SITE#"
_ISSUE_ATTEMPTS = 3


def tenant_pk(tenant: str) -> str:
    return f"TENANT#{tenant}"


def _principal(item: dict[str, Any]) -> TenantPrincipal:
    return TenantPrincipal(tenant=item["tenant"], name=item["principal"], grants=tuple(item.get("grants") or ()),
                           epoch=item["epoch"], created_at=int(item["createdAt"]))


def _site(item: dict[str, Any]) -> SiteRegistration:
    return SiteRegistration(tenant=item["tenant"], name=item["name"], kind=item["kind"],
                            created_at=int(item["createdAt"]))


class TenantStore:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    # --- principals -------------------------------------------------------------------------------

    def principal(self, tenant: str, name: str) -> TenantPrincipal | None:
        item = get_item(self._client, self._table, key(tenant_pk(tenant), PRINCIPAL + name))
        return _principal(item) if item else None

    def issue(self, tenant: str, name: str, grants: tuple[str, ...], token_hash: str) -> TenantPrincipal:
        """Store a new token for the principal (created if missing) and replace its grants."""
        for _ in range(_ISSUE_ATTEMPTS):
            current = self.principal(tenant, name)
            epoch = current.epoch if current else secrets.token_hex(8)
            created = current.created_at if current else int(time.time())
            record = TenantPrincipal(tenant, name, grants, epoch, created)
            condition: dict[str, Any] = (
                {"ConditionExpression": "epoch = :epoch", "ExpressionAttributeValues": {":epoch": {"S": epoch}}}
                if current else {"ConditionExpression": "attribute_not_exists(pk)"})
            put_principal = {"Put": {"TableName": self._table, "Item": to_item({
                "pk": tenant_pk(tenant), "sk": PRINCIPAL + name, "tenant": tenant, "principal": name,
                "grants": list(grants), "epoch": epoch, "createdAt": created}), **condition}}
            token = put_new(self._table, new_record(token_hash, stored_name(tenant, name), epoch))
            try:
                transact(self._client, [Op("principal_epoch", put_principal), token])
                return record
            except ConditionFailed:
                continue  # revoked or issued concurrently: read again
        raise Unavailable()

    def revoke(self, tenant: str, name: str) -> bool:
        """Delete the principal: every token issued for it stops opening it. False when there was none."""
        return delete_if(self._client, self._table, key(tenant_pk(tenant), PRINCIPAL + name), "attribute_exists(pk)")

    def principals(self, tenant: str) -> list[TenantPrincipal]:
        return [_principal(i) for i in self._query(tenant, PRINCIPAL)]

    # --- sites ------------------------------------------------------------------------------------------

    def register_site(self, tenant: str, name: str, kind: str) -> SiteRegistration | None:
        """Register a Site; None when the tenant already has one of that name."""
        site = SiteRegistration(tenant, name, kind, int(time.time()))
        item = to_item({"pk": tenant_pk(tenant), "sk": SITE + name, "tenant": tenant, "name": name, "kind": kind,
                        "createdAt": site.created_at})
        return site if put_if(self._client, self._table, item, "attribute_not_exists(pk)") else None

    def sites(self, tenant: str) -> list[SiteRegistration]:
        return [_site(i) for i in self._query(tenant, SITE)]

    def _query(self, tenant: str, prefix: str) -> list[dict[str, Any]]:
        return query_all(self._client, self._table, KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                         ExpressionAttributeValues={":pk": {"S": tenant_pk(tenant)}, ":p": {"S": prefix}})
