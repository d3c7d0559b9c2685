"""Account-set items (pk=ACCTS#<allocationId>) and the reads a launch and the tests need.

| item          | sk                | holds                                                        |
|---------------|-------------------|--------------------------------------------------------------|
| set header    | `-`               | version, observedAt, set digest, counts, bucket -> (digest, parts) |
| bucket head   | `b<NN>`           | part 0 of bucket NN (compressed rows), its content digest, splits, part digests |
| bucket part   | `b<NN>.<n>`       | part n of bucket NN, its digest                              |

Every write of a set is ONE transaction that puts the new header (conditioned
on the version it was computed from) together with every bucket item that
changed, so a reader sees either the old set or the new one, never a mix, and
a failed write leaves nothing behind.
"""

from __future__ import annotations

import json
from typing import Any

from chalicelib.accounts.sets import (
    AccountSet,
    EncodedBucket,
    SetHeader,
    StoredAccount,
    bucket_of,
    decode_rows,
    part_digest,
    part_index,
    part_sk,
)
from chalicelib.allocations.repository import allocation_key
from chalicelib.errors import Unavailable
from chalicelib.store.codec import to_item
from chalicelib.store.keys import ItemKey, key
from chalicelib.store.ops import Op, get_item, query_all
from chalicelib.store.size import MAX_ITEM_BYTES, item_size

__all__ = [
    "AccountSet", "AccountSetRepository", "allocation_live_op", "bucket_put_ops", "header_check_op",
    "header_from_item", "header_key", "header_put_op", "part_delete_op", "part_key", "rows_of_parts", "set_pk",
    "written_bytes", "SET_WRITE_BYTES",
]

# DynamoDB refuses a transaction whose items add up to more than 4 MB. Besides the set's items, a report's
# transaction holds its saved result (under 1 KB: fixed fields and a requestId of at most 128 characters)
# and a ConditionCheck of the allocation item (at most one item's limit); the set gets the rest.
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
_SAVED_RESULT_ALLOWANCE = 4 * 1024
SET_WRITE_BYTES = MAX_TRANSACTION_BYTES - MAX_ITEM_BYTES - _SAVED_RESULT_ALLOWANCE

HEADER_SK = "-"
_SNAPSHOT_ATTEMPTS = 5


def set_pk(allocation_id: str) -> str:
    return f"ACCTS#{allocation_id}"


def header_key(allocation_id: str) -> ItemKey:
    return key(set_pk(allocation_id), HEADER_SK)


def part_key(allocation_id: str, sk: str) -> ItemKey:
    return key(set_pk(allocation_id), sk)


def header_from_item(item: dict[str, Any] | None) -> SetHeader | None:
    if item is None:
        return None
    buckets = {b: (v[0], int(v[1])) for b, v in json.loads(item["buckets"]).items()}
    return SetHeader(
        version=int(item["version"]), observed_at=item["observedAt"], fingerprint=item["fp"],
        count=int(item["count"]), confirmed=int(item["confirmed"]), buckets=buckets,
    )


def _version_condition(expected_version: int | None) -> dict[str, Any]:
    if expected_version is None:
        return {"ConditionExpression": "attribute_not_exists(pk)"}
    return {"ConditionExpression": "version = :v", "ExpressionAttributeValues": {":v": {"N": str(expected_version)}}}


def header_put_op(table: str, allocation_id: str, site: str, header: SetHeader,
                  expected_version: int | None) -> Op:
    values = {
        "site": site, "allocationId": allocation_id, "version": header.version, "observedAt": header.observed_at,
        "fp": header.fingerprint, "count": header.count, "confirmed": header.confirmed,
        "buckets": json.dumps({b: list(v) for b, v in sorted(header.buckets.items())}, separators=(",", ":")),
    }
    item = {**header_key(allocation_id), **to_item(values)}
    return Op("account_set_header", {"Put": {"TableName": table, "Item": item,
                                             **_version_condition(expected_version)}})


def header_check_op(table: str, allocation_id: str, expected_version: int | None) -> Op:
    return Op("account_set_header", {"ConditionCheck": {"TableName": table, "Key": header_key(allocation_id),
                                                        **_version_condition(expected_version)}})


def allocation_live_op(table: str, allocation_id: str, site: str) -> Op:
    """The allocation still exists at this Site and is not retired when the set is written."""
    return Op("allocation_live", {"ConditionCheck": {
        "TableName": table, "Key": allocation_key(allocation_id),
        "ConditionExpression": "attribute_exists(pk) AND #site = :site AND lifecycle <> :retired",
        "ExpressionAttributeNames": {"#site": "site"},
        "ExpressionAttributeValues": {":site": {"S": site}, ":retired": {"S": "retired"}},
    }})


def bucket_put_ops(table: str, allocation_id: str, encoded: EncodedBucket) -> list[Op]:
    digests = encoded.part_digests
    ops = []
    for index, data in enumerate(encoded.parts):
        values: dict[str, Any] = {"d": data, "f": digests[index]}
        if index == 0:
            values.update(c=encoded.content, n=len(encoded.parts))
            if encoded.splits:
                values.update(sp=list(encoded.splits), pf=list(digests[1:]))
        item = {**part_key(allocation_id, part_sk(encoded.bucket, index)), **to_item(values)}
        ops.append(Op("account_bucket", {"Put": {"TableName": table, "Item": item}}))
    return ops


def part_delete_op(table: str, allocation_id: str, sk: str) -> Op:
    return Op("account_bucket", {"Delete": {"TableName": table, "Key": part_key(allocation_id, sk)}})


def written_bytes(ops: list[Op]) -> int:
    """What DynamoDB counts for the items a list of transaction operations puts (store/size.py)."""
    return sum(item_size(op.request["Put"]["Item"]) for op in ops if "Put" in op.request)


def _binary(value: Any) -> bytes:
    return bytes(value.value) if hasattr(value, "value") else bytes(value)


def rows_of_parts(head: dict[str, Any] | None, parts: list[dict[str, Any] | None]) -> list[StoredAccount] | None:
    """The accounts of one bucket, or None when its items are not one consistent write."""
    if head is None:
        return None
    expected = head.get("pf") or []
    if len(parts) != len(expected) or part_digest(_binary(head["d"])) != head["f"]:
        return None
    rows = decode_rows(_binary(head["d"]))
    for part, digest in zip(parts, expected, strict=True):
        if part is None or part.get("f") != digest or part_digest(_binary(part["d"])) != digest:
            return None
        rows.extend(decode_rows(_binary(part["d"])))
    return rows


class AccountSetRepository:
    """Reads of a stored set: one Party's account for a launch, or the whole set."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def _get(self, item_key: ItemKey) -> dict[str, Any] | None:
        return get_item(self._client, self._table, item_key)

    def find(self, allocation_id: str, party_id: str) -> StoredAccount | None:
        """The account last reported for (allocation, party): one key lookup (two only in a split bucket)."""
        bucket = bucket_of(party_id)
        for _ in range(_SNAPSHOT_ATTEMPTS):
            head = self._get(part_key(allocation_id, part_sk(bucket, 0)))
            if head is None:
                return None
            index = part_index(head.get("sp") or [], party_id)
            if index == 0:
                data = _binary(head["d"])
            else:
                part = self._get(part_key(allocation_id, part_sk(bucket, index)))
                if part is None or part.get("f") != head["pf"][index - 1]:
                    continue  # the bucket was rewritten between the two reads
                data = _binary(part["d"])
            return next((a for a in decode_rows(data) if a.party_id == party_id), None)
        raise Unavailable()  # never "no account" for a read we could not complete

    def snapshot(self, allocation_id: str) -> AccountSet:
        """The whole current set, read consistently (retried while a write slips in between pages)."""
        for _ in range(_SNAPSHOT_ATTEMPTS):
            items = self._query(allocation_id)
            header = header_from_item(items.get(HEADER_SK))
            if header is None:
                if not items:
                    return AccountSet(None, {})
                continue
            accounts: dict[str, StoredAccount] = {}
            consistent = True
            for bucket, (content, parts) in header.buckets.items():
                head = items.get(part_sk(bucket, 0))
                rows = rows_of_parts(head, [items.get(part_sk(bucket, i)) for i in range(1, parts)])
                if rows is None or head is None or head.get("c") != content:
                    consistent = False
                    break
                accounts.update((a.party_id, a) for a in rows)
            if consistent:
                return AccountSet(header, accounts)
        raise Unavailable()

    def _query(self, allocation_id: str) -> dict[str, dict[str, Any]]:
        items = query_all(self._client, self._table, KeyConditionExpression="pk = :p",
                          ExpressionAttributeValues={":p": {"S": set_pk(allocation_id)}})
        return {item["sk"]: item for item in items}
