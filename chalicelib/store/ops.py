"""The two calls every write path is built from: one consistent BatchGetItem, one TransactWriteItems."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from chalicelib.errors import Unavailable
from chalicelib.store.codec import from_item
from chalicelib.store.errors import TRANSACTION_CANCELED, cancellation_codes, error_code, store_errors

_MAX_UNPROCESSED_ROUNDS = 5


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


def batch_get(client: Any, table: str, keys: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Strongly consistent reads of up to 100 distinct keys, by (pk, sk)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    pending = {"Keys": keys, "ConsistentRead": True}
    for _ in range(_MAX_UNPROCESSED_ROUNDS):
        with store_errors():
            response = client.batch_get_item(
                RequestItems={table: pending}, ReturnConsumedCapacity="TOTAL"
            )
        for raw in response.get("Responses", {}).get(table, []):
            item = from_item(raw) or {}
            found[(item["pk"], item["sk"])] = item
        unprocessed = response.get("UnprocessedKeys", {}).get(table)
        if not unprocessed:
            return found
        pending = unprocessed
    raise Unavailable()


def transact(client: Any, items: list[dict[str, Any]]) -> None:
    """All-or-nothing write; raises TransactionCanceled when a condition fails."""
    try:
        with store_errors():
            client.transact_write_items(TransactItems=items, ReturnConsumedCapacity="TOTAL")
    except ClientError as exc:
        if error_code(exc) == TRANSACTION_CANCELED:
            raise TransactionCanceled(cancellation_codes(exc)) from None
        raise Unavailable() from exc
