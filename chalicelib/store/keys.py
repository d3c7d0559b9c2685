"""Item keys of the single table (pure: no boto3, so rules and key builders can use them)."""

from __future__ import annotations

from typing import Any

ItemKey = dict[str, Any]
KeyId = tuple[str, str]


def key(pk: str, sk: str = "-") -> ItemKey:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def key_id(item_key: ItemKey) -> KeyId:
    """(pk, sk) of a key, as `ops.batch_get` indexes what it found."""
    return item_key["pk"]["S"], item_key["sk"]["S"]
