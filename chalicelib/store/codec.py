"""Plain Python values <-> DynamoDB attribute values (numbers come back as int)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from chalicelib.store.keys import key, key_id

__all__ = ["from_item", "key", "key_id", "to_item", "to_value"]

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def to_value(value: Any) -> dict[str, Any]:
    serialized: dict[str, Any] = _serializer.serialize(value)
    return serialized


def to_item(values: dict[str, Any]) -> dict[str, Any]:
    return {k: to_value(v) for k, v in values.items() if v is not None}


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, set):
        return {_plain(v) for v in value}
    return value


def from_item(item: dict[str, Any] | None) -> dict[str, Any] | None:
    if item is None:
        return None
    return {k: _plain(_deserializer.deserialize(v)) for k, v in item.items()}
