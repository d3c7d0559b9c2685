"""The contract's value types (pure): identifiers, revisions, limits, integers."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import TypeAdapter, ValidationError

from chalicelib.contract.types import MAX_SAFE_INTEGER, Limits, StoredRevision, as_integer, is_id, is_opaque


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("11111111-1111-4111-8111-111111111111", True),
        ("6f1b2a52-4c8e-5d0a-9b7e-3a1c2d4e5f60", True),
        ("6F1B2A52-4C8E-5D0A-9B7E-3A1C2D4E5F60", False),
        ("6f1b2a52-4c8e-0d0a-9b7e-3a1c2d4e5f60", False),
        ("11111111-1111-4111-8111-111111111111\n", False),
        ("nope", False),
    ],
)
def test_is_id(value: str, expected: bool) -> None:
    assert is_id(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("wp-1", True), ("a" * 128, True), ("a:b.c_d-e", True), ("-x", False), ("a" * 129, False), ("a b", False),
     ("wp\n", False)],
)
def test_is_opaque(value: str, expected: bool) -> None:
    assert is_opaque(value) is expected


@pytest.mark.parametrize(("value", "ok"), [(1, True), (MAX_SAFE_INTEGER, True), (0, False),
                                           (MAX_SAFE_INTEGER + 1, False), (True, False), ("1", False)])
def test_stored_revision(value, ok: bool) -> None:
    adapter = TypeAdapter(StoredRevision)
    if ok:
        assert adapter.validate_python(value) == value
    else:
        with pytest.raises(ValidationError):
            adapter.validate_python(value)


def test_limits_take_one_to_thirty_two_components() -> None:
    adapter = TypeAdapter(Limits)
    thirty_two = {f"gpu.m{i}": i for i in range(32)}
    assert adapter.validate_python(thirty_two) == thirty_two
    for bad in ({}, {**thirty_two, "cpu": 1}, [("cpu", 1)]):
        with pytest.raises(ValidationError):
            adapter.validate_python(bad)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, 0), (5, 5), (Decimal("5.0"), 5), (5.0, 5), (MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)],
)
def test_as_integer_accepts(value, expected: int) -> None:
    result = as_integer(value)
    assert result == expected and type(result) is int


@pytest.mark.parametrize(
    "value",
    [True, False, "1", None, 1.5, Decimal("1.5"), float("nan"), float("inf"), float("-inf"), Decimal("NaN"),
     Decimal("Infinity"), -1, MAX_SAFE_INTEGER + 1],
)
def test_as_integer_refuses(value) -> None:
    with pytest.raises(ValueError):  # PydanticCustomError is a ValueError
        as_integer(value)


def test_as_integer_bounds() -> None:
    assert as_integer(1, minimum=1, maximum=None) == 1
    assert as_integer(2**70, minimum=1, maximum=None) == 2**70
    for value, minimum, maximum in ((0, 1, None), (11, 0, 10)):
        with pytest.raises(ValueError):
            as_integer(value, minimum=minimum, maximum=maximum)
    assert as_integer(10, minimum=0, maximum=10) == 10


def test_timestamps_are_bounded_at_1024_characters() -> None:
    from chalicelib.contract.types import MAX_TIMESTAMP_LENGTH, Timestamp

    adapter = TypeAdapter(Timestamp)
    longest = "2026-01-01T00:00:00." + "1" * (MAX_TIMESTAMP_LENGTH - 21) + "Z"
    assert len(longest) == MAX_TIMESTAMP_LENGTH == 1024
    assert adapter.validate_python(longest) == longest
    with pytest.raises(ValidationError):
        adapter.validate_python(longest[:-1] + "1Z")
