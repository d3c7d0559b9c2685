"""Plain Python values <-> DynamoDB attribute values (numbers come back as int)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary, TypeSerializer

from chalicelib.store.keys import key, key_id

__all__ = ["from_item", "key", "key_id", "to_item", "to_value"]

_serializer = TypeSerializer()


def to_value(value: Any) -> dict[str, Any]:
    serialized: dict[str, Any] = _serializer.serialize(value)
    return serialized


def to_item(values: dict[str, Any]) -> dict[str, Any]:
    return {k: to_value(v) for k, v in values.items() if v is not None}


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:  # a fraction or an exponent: exact as a Decimal, then int when integral
        number = Decimal(text)
        return int(number) if number == number.to_integral_value() else float(number)


def _from_value(value: dict[str, Any]) -> Any:
    """One attribute value in one pass: boto3's TypeDeserializer, then a pass to plain numbers, took two
    and a Decimal per number, and on a read of a thousand providers that was most of the request's time."""
    kind = next(iter(value))
    raw = value[kind]
    if kind == "S":
        return raw
    if kind == "N":
        return _number(raw)
    if kind == "M":
        return {k: _from_value(v) for k, v in raw.items()}
    if kind == "L":
        return [_from_value(v) for v in raw]
    if kind == "SS":
        return set(raw)
    if kind == "NS":
        return {_number(n) for n in raw}
    if kind == "B":
        return Binary(raw)
    if kind == "BS":
        return {Binary(b) for b in raw}
    if kind == "BOOL":
        return raw
    if kind == "NULL":
        return None
    raise TypeError(f"{kind} is not a DynamoDB attribute type")


def from_item(item: dict[str, Any] | None) -> dict[str, Any] | None:
    if item is None:
        return None
    return {k: _from_value(v) for k, v in item.items()}
