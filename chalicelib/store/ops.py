"""The calls every store adapter is built from: GetItem, paged Query, BatchGetItem, TransactWriteItems,
and single-item conditional writes.

Reads are strongly consistent and return plain items (`codec.from_item`);
every store failure goes through `store_errors` (503), and a read that cannot
be completed (keys still unprocessed after several rounds) is 503 too, never
a partial answer.

Writes say which invariant each condition states: a transaction is a list of
named operations (`Op`), and a cancellation raises `ConditionFailed` naming the
operations whose condition did not hold, never a position. A transaction that
DynamoDB could never accept (over 100 operations or 4 MB) is `TooLarge`,
decided before the call, so a caller answers it as a deterministic 4xx. The
single-item writes (`put_if`, `update_if`, `delete_if`) answer whether their
condition held.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.errors import Unavailable
from chalicelib.store.codec import from_item
from chalicelib.store.errors import (
    CONDITION_FAILED,
    TRANSACTION_CANCELED,
    cancellation_codes,
    error_code,
    store_errors,
)
from chalicelib.store.keys import ItemKey, KeyId, holdable

Item = dict[str, Any]

_MAX_UNPROCESSED_ROUNDS = 5
BATCH_GET_KEYS = 100  # BatchGetItem's limit per call


# DynamoDB's TransactWriteItems limits (published): 100 operations, 4 MB of request in all.
MAX_TRANSACTION_OPS = 100
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024

_NO_FAILURE = ("None", "", None)


@dataclass(frozen=True)
class Op:
    """One operation of a transaction, named after the invariant its condition states ("provider",
    "name_claim", "fleet_version"): a cancellation names the operations that failed by these names."""

    name: str
    request: dict[str, Any]  # {"Put": {...}} | {"Update": {...}} | {"Delete": {...}} | {"ConditionCheck": {...}}


class ConditionFailed(Exception):
    """A write whose condition did not hold. `names`: the operations of the transaction that failed (in
    request order); `conflict`: canceled by a concurrent transaction on one of its items (a lost race, where
    reading again may succeed) rather than by a condition."""

    def __init__(self, names: Sequence[str] = (), *, conflict: bool = False) -> None:
        super().__init__(",".join(names) or ("conflict" if conflict else "condition"))
        self.names = tuple(names)
        self.conflict = conflict

    def __contains__(self, name: object) -> bool:
        return name in self.names



class TooLarge(Exception):
    """A transaction DynamoDB can never accept, whatever the retries: more than MAX_TRANSACTION_OPS operations
    or more than MAX_TRANSACTION_BYTES of request."""

    def __init__(self, ops: int, size: int) -> None:
        super().__init__(f"{ops} operations, {size} bytes")
        self.ops = ops
        self.size = size


def op(name: str, request: dict[str, Any]) -> Op:
    return Op(name, request)


def _json_size_of(value: Any) -> str:
    # Binary values count as their raw length (DynamoDB's rule), everything else as its text.
    return "x" * len(value) if isinstance(value, bytes | bytearray) else str(value)


def transaction_bytes(ops: Sequence[Op]) -> int:
    """An upper bound of the request's size (its JSON text), the measure `MAX_TRANSACTION_BYTES` is held to."""
    return len(json.dumps([o.request for o in ops], default=_json_size_of))


def check_transaction(ops: Sequence[Op]) -> None:
    """Raise TooLarge when DynamoDB could never accept these operations in one transaction."""
    if len(ops) > MAX_TRANSACTION_OPS:
        raise TooLarge(len(ops), transaction_bytes(ops))
    size = transaction_bytes(ops)
    if size > MAX_TRANSACTION_BYTES:
        raise TooLarge(len(ops), size)


def _projected(projection: str | None, names: dict[str, str] | None) -> dict[str, Any]:
    """A read's projection arguments (none: the whole item)."""
    return ({"ProjectionExpression": projection} if projection is not None else {}) | \
        ({"ExpressionAttributeNames": names} if names else {})


def get_item(client: Any, table: str, item_key: ItemKey, *, projection: str | None = None,
             names: dict[str, str] | None = None, consistent: bool = True) -> Item | None:
    """One GetItem, strongly consistent unless `consistent` is False, optionally projected; None when there is
    no such item (none is read under a key DynamoDB cannot hold: `keys.holdable`)."""
    if not holdable(item_key):
        return None
    extra = _projected(projection, names)
    with store_errors():
        raw = client.get_item(
            TableName=table, Key=item_key, ConsistentRead=consistent, ReturnConsumedCapacity="TOTAL", **extra
        ).get("Item")
    return from_item(raw)


def query_pages(client: Any, table: str, **query: Any) -> Iterator[list[Item]]:
    """Every page of one Query (consistent unless `ConsistentRead` says otherwise), in order."""
    request: dict[str, Any] = {"TableName": table, "ConsistentRead": True, "ReturnConsumedCapacity": "TOTAL",
                               **query}
    while True:
        with store_errors():
            page = client.query(**request)
        yield [from_item(raw) or {} for raw in page.get("Items", [])]
        if "LastEvaluatedKey" not in page:
            return
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def query_all(client: Any, table: str, **query: Any) -> list[Item]:
    """Every item one Query finds, all pages read."""
    return [item for page in query_pages(client, table, **query) for item in page]


def _batch_get_chunk(client: Any, table: str, keys: list[ItemKey], extra: dict[str, Any]) -> dict[KeyId, Item]:
    found: dict[KeyId, Item] = {}
    pending: dict[str, Any] = {"Keys": keys, "ConsistentRead": True, **extra}
    for _ in range(_MAX_UNPROCESSED_ROUNDS):
        with store_errors():
            response = client.batch_get_item(RequestItems={table: pending}, ReturnConsumedCapacity="TOTAL")
        for raw in response.get("Responses", {}).get(table, []):
            item = from_item(raw) or {}
            found[(item["pk"], item["sk"])] = item
        unprocessed = response.get("UnprocessedKeys", {}).get(table)
        if not unprocessed:
            return found
        pending = unprocessed
    raise Unavailable()


def batch_get(
    client: Any, table: str, keys: list[ItemKey], *, projection: str | None = None,
    names: dict[str, str] | None = None, workers: int = 1, consistent: bool = True,
) -> dict[KeyId, Item]:
    """Strongly consistent reads of any number of distinct keys, by (pk, sk) (eventually consistent ones,
    at half the read units, when `consistent` is False).

    One BatchGetItem per 100 keys; with `workers` > 1 those calls run in
    parallel (the boto3 client is thread-safe). A projection must name `pk`
    and `sk`, which index the answer.
    """
    keys = [k for k in keys if holdable(k)]  # no item is held under another (`keys.holdable`)
    extra = _projected(projection, names) | ({} if consistent else {"ConsistentRead": False})
    chunks = [keys[i:i + BATCH_GET_KEYS] for i in range(0, len(keys), BATCH_GET_KEYS)]

    def read(chunk: list[ItemKey]) -> dict[KeyId, Item]:
        return _batch_get_chunk(client, table, chunk, extra)

    found: dict[KeyId, Item] = {}
    if workers <= 1 or len(chunks) <= 1:
        for chunk in chunks:
            found.update(read(chunk))
        return found
    with ThreadPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
        for part in pool.map(read, chunks):
            found.update(part)
    return found


def transact(client: Any, ops: Sequence[Op]) -> None:
    """All or nothing. Raises TooLarge before the call, ConditionFailed naming the failed operations."""
    check_transaction(ops)
    try:
        with store_errors():
            client.transact_write_items(TransactItems=[o.request for o in ops], ReturnConsumedCapacity="TOTAL")
    except ClientError as exc:
        if error_code(exc) == TRANSACTION_CANCELED:
            codes = cancellation_codes(exc)
            failed = [o.name for o, code in zip(ops, codes, strict=False) if code not in _NO_FAILURE]
            raise ConditionFailed(failed, conflict="TransactionConflict" in codes) from None
        raise Unavailable() from exc


def _conditional(call: Any, **request: Any) -> bool:
    try:
        with store_errors():
            call(**request, ReturnConsumedCapacity="TOTAL")
    except ClientError as exc:
        if error_code(exc) == CONDITION_FAILED:
            return False
        raise Unavailable() from exc
    return True


def _condition(condition: str | None, names: dict[str, str] | None,
               values: dict[str, Any] | None) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if condition is not None:
        extra["ConditionExpression"] = condition
    if names:
        extra["ExpressionAttributeNames"] = names
    if values:
        extra["ExpressionAttributeValues"] = values
    return extra


def put_if(client: Any, table: str, item: dict[str, Any], condition: str | None = None, *,
           names: dict[str, str] | None = None, values: dict[str, Any] | None = None) -> bool:
    """PutItem of a low-level item; False when the condition did not hold (nothing written)."""
    return _conditional(client.put_item, TableName=table, Item=item, **_condition(condition, names, values))


def update_if(client: Any, table: str, item_key: ItemKey, update: str, condition: str | None = None, *,
              names: dict[str, str] | None = None, values: dict[str, Any] | None = None) -> bool:
    """UpdateItem; False when the condition did not hold (nothing written)."""
    return _conditional(client.update_item, TableName=table, Key=item_key, UpdateExpression=update,
                        **_condition(condition, names, values))


def delete_if(client: Any, table: str, item_key: ItemKey, condition: str | None = None, *,
              names: dict[str, str] | None = None, values: dict[str, Any] | None = None) -> bool:
    """DeleteItem; False when the condition did not hold (nothing deleted: nothing is, under a key DynamoDB
    cannot hold)."""
    if not holdable(item_key):
        return False
    return _conditional(client.delete_item, TableName=table, Key=item_key, **_condition(condition, names, values))
