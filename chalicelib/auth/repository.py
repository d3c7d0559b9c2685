"""Hashed keys in DynamoDB: pk=KEYS, sk=<sha256 of the key>."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from chalicelib.store.codec import from_item, key, to_item
from chalicelib.store.errors import store_errors

PK = "KEYS"


@dataclass(frozen=True)
class KeyRecord:
    key_id: str
    principal: str
    created_at: int
    revoked_at: int | None
    key_hash: str

    @property
    def active(self) -> bool:
        return self.revoked_at is None


def _record(item: dict[str, Any]) -> KeyRecord:
    return KeyRecord(
        key_id=item["keyId"],
        principal=item["principal"],
        created_at=int(item["createdAt"]),
        revoked_at=item.get("revokedAt"),
        key_hash=item["sk"],
    )


class KeyRepository:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def find(self, key_hash: str) -> KeyRecord | None:
        with store_errors():
            item = self._client.get_item(
                TableName=self._table, Key=key(PK, key_hash), ConsistentRead=True
            ).get("Item")
        return _record(from_item(item)) if item else None  # type: ignore[arg-type]

    def add(self, key_hash: str, principal: str) -> KeyRecord:
        record = KeyRecord(
            key_id=secrets.token_hex(6), principal=principal, created_at=int(time.time()),
            revoked_at=None, key_hash=key_hash,
        )
        with store_errors():
            self._client.put_item(
                TableName=self._table,
                Item=to_item({"pk": PK, "sk": key_hash, "keyId": record.key_id,
                              "principal": principal, "createdAt": record.created_at}),
                ConditionExpression="attribute_not_exists(pk)",
            )
        return record

    def list(self) -> list[KeyRecord]:
        records: list[KeyRecord] = []
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": PK}},
        }
        with store_errors():
            while True:
                page = self._client.query(**kwargs)
                records.extend(_record(from_item(i)) for i in page.get("Items", []))  # type: ignore[arg-type]
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return sorted(records, key=lambda r: (r.principal, r.created_at))

    def revoke(self, key_id: str) -> bool:
        """Revoke by key id (never by the key itself). False when no active key has that id."""
        for record in self.list():
            if record.key_id == key_id and record.active:
                with store_errors():
                    self._client.update_item(
                        TableName=self._table, Key=key(PK, record.key_hash),
                        UpdateExpression="SET revokedAt = :now",
                        ExpressionAttributeValues={":now": {"N": str(int(time.time()))}},
                    )
                return True
        return False
