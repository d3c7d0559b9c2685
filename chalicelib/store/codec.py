"""Plain Python values <-> DynamoDB attribute values (numbers come back as int)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary, TypeSerializer

from chalicelib.store.keys import key, key_id

__all__ = ["from_item", "key", "key_id", "to_item", "to_value"]

_serializer = TypeSerializer()
# DynamoDB numbers hold 38 digits: a larger int goes to boto3's serializer, which refuses it.
_EXACT_INT_BOUND = 10**38


def to_value(value: Any) -> dict[str, Any]:
    """boto3's TypeSerializer, answer for answer; the types every write is made of (str, int, dict, list,
    bool, None) without its chain of isinstance checks, a tenth of an allocation write's CPU."""
    kind = type(value)
    if kind is str:
        return {"S": value}
    if kind is int and -_EXACT_INT_BOUND < value < _EXACT_INT_BOUND:
        return {"N": str(value)}
    if kind is dict:
        return {"M": {k: to_value(v) for k, v in value.items()}}
    if kind is list:
        return {"L": [to_value(v) for v in value]}
    if kind is bool:
        return {"BOOL": value}
    if value is None:
        return {"NULL": True}
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
