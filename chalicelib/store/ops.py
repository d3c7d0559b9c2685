"""The calls every store adapter is built from: GetItem, paged Query, BatchGetItem, TransactWriteItems.

Reads are strongly consistent and return plain items (`codec.from_item`);
every store failure goes through `store_errors` (503), and a read that cannot
be completed (keys still unprocessed after several rounds) is 503 too, never
a partial answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.errors import Unavailable
from chalicelib.store.codec import from_item
from chalicelib.store.errors import TRANSACTION_CANCELED, cancellation_codes, error_code, store_errors
from chalicelib.store.keys import ItemKey, KeyId

Item = dict[str, Any]

_MAX_UNPROCESSED_ROUNDS = 5
BATCH_GET_KEYS = 100  # BatchGetItem's limit per call


class TransactionCanceled(Exception):
    """A condition in the transaction failed; `codes` has one reason per item, in order."""

    def __init__(self, codes: list[str]) -> None:
        super().__init__(",".join(codes))
        self.codes = codes

    def failed(self, index: int) -> bool:
        return index < len(self.codes) and self.codes[index] not in ("None", "", None)

    @property
    def conflict(self) -> bool:
        """Canceled by a concurrent transaction on the same item rather than by a condition."""
        return any(c == "TransactionConflict" for c in self.codes)


def get_item(client: Any, table: str, item_key: ItemKey) -> Item | None:
    """One strongly consistent GetItem; None when there is no such item."""
    with store_errors():
        raw = client.get_item(
            TableName=table, Key=item_key, ConsistentRead=True, ReturnConsumedCapacity="TOTAL"
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
    names: dict[str, str] | None = None, workers: int = 1,
) -> dict[KeyId, Item]:
    """Strongly consistent reads of any number of distinct keys, by (pk, sk).

    One BatchGetItem per 100 keys; with `workers` > 1 those calls run in
    parallel (the boto3 client is thread-safe). A projection must name `pk`
    and `sk`, which index the answer.
    """
    extra: dict[str, Any] = {}
    if projection is not None:
        extra["ProjectionExpression"] = projection
    if names:
        extra["ExpressionAttributeNames"] = names
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


def transact(client: Any, items: list[dict[str, Any]]) -> None:
    """All-or-nothing write; raises TransactionCanceled when a condition fails."""
    try:
        with store_errors():
            client.transact_write_items(TransactItems=items, ReturnConsumedCapacity="TOTAL")
    except ClientError as exc:
        if error_code(exc) == TRANSACTION_CANCELED:
            raise TransactionCanceled(cancellation_codes(exc)) from None
        raise Unavailable() from exc
