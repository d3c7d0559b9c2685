"""The size DynamoDB counts for an item (pure), to refuse before a write what can never be stored.

Two limits make an item unstorable: its size, and the length of any attribute
name (map keys included, such as a limit component's name).

DynamoDB refuses an item over 400 KB with a ValidationException,
on every repeat: input that would make such an item is a deterministic 400, never
a 503 the caller repeats. The rules are DynamoDB's published ones ("Item sizes
and formats"): attribute names and strings count their UTF-8 bytes, binary its
raw bytes, a number about one byte per two significant digits plus one, null and
booleans one byte, a list or map 3 bytes plus 1 byte and the size of each
element (a map's element includes its name). Numbers are counted generously
(every digit, sign and point) so that the estimate never falls below DynamoDB's.
"""

from __future__ import annotations

import base64
from typing import Any

# DynamoDB documents 400 KB (409,600 bytes), and DynamoDB Local refuses exactly above 409,600 as counted here
# (measured: a string or binary attribute of 409,593 bytes next to pk and sk is the largest it takes); moto
# (the embedded store of `make run`, and a test store) refuses above 405,000. 400,000 is below all three.
MAX_ITEM_BYTES = 400_000
# DynamoDB documents attribute names (map keys included) of up to 64 KB; DynamoDB Local fails on any name over
# 50,000 bytes (measured: 50,000 is stored, 50,001 is an internal error). The smaller bound holds on every store.
MAX_NAME_BYTES = 50_000
_CONTAINER_OVERHEAD = 3
_ELEMENT_OVERHEAD = 1


def _number_size(text: str) -> int:
    digits = sum(ch.isdigit() for ch in text.lstrip("-0"))
    return (digits + 1) // 2 + 1 + (1 if text.startswith("-") else 0)


def _binary_size(value: Any) -> int:
    if isinstance(value, str):  # a low-level binary value given as its base64 text
        return len(base64.b64decode(value))
    return len(bytes(value))


def value_size(value: dict[str, Any]) -> int:
    """Size of one attribute value in DynamoDB's low-level form ({"S": ...}, {"M": {...}}, ...)."""
    (kind, inner), = value.items()
    if kind == "S":
        return len(inner.encode("utf-8"))
    if kind == "N":
        return _number_size(inner)
    if kind == "B":
        return _binary_size(inner)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(s.encode("utf-8")) for s in inner)
    if kind == "NS":
        return sum(_number_size(n) for n in inner)
    if kind == "BS":
        return sum(_binary_size(b) for b in inner)
    if kind == "L":
        return _CONTAINER_OVERHEAD + sum(_ELEMENT_OVERHEAD + value_size(v) for v in inner)
    if kind == "M":
        return _CONTAINER_OVERHEAD + sum(
            _ELEMENT_OVERHEAD + len(name.encode("utf-8")) + value_size(v) for name, v in inner.items()
        )
    raise ValueError(f"unknown attribute type {kind}")


def item_size(item: dict[str, Any]) -> int:
    """Size of a whole item in DynamoDB's low-level form: its names plus its values."""
    return sum(len(name.encode("utf-8")) + value_size(value) for name, value in item.items())


def longest_name(item: dict[str, Any]) -> int:
    """The longest attribute name in an item, map keys at any depth included (UTF-8 bytes)."""
    longest = 0
    pending: list[dict[str, Any]] = [item]
    while pending:
        names = pending.pop()
        for name, value in names.items():
            longest = max(longest, len(name.encode("utf-8")))
            (kind, inner), = value.items()
            if kind == "M":
                pending.append(inner)
            elif kind == "L":
                pending.extend(v["M"] for v in inner if "M" in v)
    return longest


def fits(item: dict[str, Any]) -> bool:
    """Whether DynamoDB (and the emulators we run on) can store the item at all."""
    return item_size(item) <= MAX_ITEM_BYTES and longest_name(item) <= MAX_NAME_BYTES
