"""Hashed keys and tokens in DynamoDB: pk=KEYS, sk=<sha256 of the key>."""

from __future__ import annotations

import secrets
import time
from typing import Any

from chalicelib.auth.models import KeyRecord
from chalicelib.store.codec import to_item
from chalicelib.store.keys import key
from chalicelib.store.ops import Op, get_item, put_if, query_all, update_if

PK = "KEYS"

__all__ = ["PK", "KeyRecord", "KeyRepository"]


def _record(item: dict[str, Any]) -> KeyRecord:
    return KeyRecord(
        key_id=item["keyId"],
        principal=item["principal"],
        created_at=int(item["createdAt"]),
        revoked_at=item.get("revokedAt"),
        key_hash=item["sk"],
        epoch=item.get("epoch"),
    )


def new_record(key_hash: str, principal: str, epoch: str | None = None) -> KeyRecord:
    return KeyRecord(key_id=secrets.token_hex(6), principal=principal, created_at=int(time.time()),
                     revoked_at=None, key_hash=key_hash, epoch=epoch)


def put_new(table: str, record: KeyRecord) -> Op:
    """The transaction operation that stores a new key (never over another one)."""
    return Op("key", {"Put": {
        "TableName": table,
        "Item": to_item({"pk": PK, "sk": record.key_hash, "keyId": record.key_id, "principal": record.principal,
                         "createdAt": record.created_at, "epoch": record.epoch}),
        "ConditionExpression": "attribute_not_exists(pk)",
    }})


class KeyCollision(Exception):
    """A new key's hash is already stored (a 256-bit collision: in practice a reused key)."""


class KeyRepository:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def find(self, key_hash: str) -> KeyRecord | None:
        item = get_item(self._client, self._table, key(PK, key_hash))
        return _record(item) if item else None

    def add(self, key_hash: str, principal: str) -> KeyRecord:
        record = new_record(key_hash, principal)
        put = put_new(self._table, record).request["Put"]
        if not put_if(self._client, self._table, put["Item"], put["ConditionExpression"]):
            raise KeyCollision()  # a 256-bit key's hash already stored: never overwrite another key
        return record

    def list(self) -> list[KeyRecord]:
        items = query_all(self._client, self._table, KeyConditionExpression="pk = :pk",
                          ExpressionAttributeValues={":pk": {"S": PK}})
        return sorted((_record(i) for i in items), key=lambda r: (r.principal, r.created_at))

    def revoke(self, key_id: str) -> bool:
        """Revoke by key id (never by the key itself). False when no active key has that id."""
        for record in self.list():
            if record.key_id == key_id and record.active:
                update_if(self._client, self._table, key(PK, record.key_hash), "SET revokedAt = :now",
                          values={":now": {"N": str(int(time.time()))}})
                return True
        return False
