"""Item keys of the single table (pure: no boto3, so rules and key builders can use them)."""

from __future__ import annotations

from typing import Any

ItemKey = dict[str, Any]
KeyId = tuple[str, str]

# DynamoDB's published key limits (UTF-8 bytes): a partition key value of 1 to 2,048, a sort key value of
# 1 to 1,024.
MAX_PARTITION_KEY_BYTES = 2048
MAX_SORT_KEY_BYTES = 1024


def key(pk: str, sk: str = "-") -> ItemKey:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def key_id(item_key: ItemKey) -> KeyId:
    """(pk, sk) of a key, as `ops.batch_get` indexes what it found."""
    return item_key["pk"]["S"], item_key["sk"]["S"]


def holdable(item_key: ItemKey) -> bool:
    """Whether DynamoDB can hold an item under this key. None is held under a key it cannot hold, so a read
    of one finds nothing; sent, it would be a ValidationException: a 503 for input no retry can serve (a
    2,000-character class or trait name in a path or a query)."""
    pk, sk = key_id(item_key)
    return 0 < len(pk.encode()) <= MAX_PARTITION_KEY_BYTES and 0 < len(sk.encode()) <= MAX_SORT_KEY_BYTES
