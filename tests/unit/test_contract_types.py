"""The contract's value types (pure): identifiers, revisions, limits, integers."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from chalicelib.contract.types import (
    MAX_SAFE_INTEGER,
    MAX_TIMESTAMP_LENGTH,
    Limits,
    StoredRevision,
    StrictBoolean,
    Timestamp,
    as_integer,
    is_id,
    is_opaque,
)


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


NOT_AN_INTEGER, OUT_OF_RANGE = ("integer", "not an integer"), ("integer", "out of range")


def refusal(adapter: TypeAdapter[Any], value: Any) -> tuple[str, str]:
    """(type, message) of the one error a contract type gives for `value`."""
    with pytest.raises(ValidationError) as refused:
        adapter.validate_python(value)
    [error] = refused.value.errors()
    return error["type"], error["msg"]


@pytest.mark.parametrize(
    ("value", "error"),
    [(True, NOT_AN_INTEGER), (False, NOT_AN_INTEGER), ("1", NOT_AN_INTEGER), (None, NOT_AN_INTEGER),
     (1.5, NOT_AN_INTEGER), (Decimal("1.5"), NOT_AN_INTEGER), (float("nan"), NOT_AN_INTEGER),
     (float("inf"), NOT_AN_INTEGER), (float("-inf"), NOT_AN_INTEGER), (Decimal("NaN"), NOT_AN_INTEGER),
     (Decimal("Infinity"), NOT_AN_INTEGER), (-1, OUT_OF_RANGE), (MAX_SAFE_INTEGER + 1, OUT_OF_RANGE)],
)
def test_as_integer_refuses(value, error: tuple[str, str]) -> None:
    with pytest.raises(PydanticCustomError) as refused:
        as_integer(value)
    assert (refused.value.type, refused.value.message()) == error


def test_as_integer_bounds() -> None:
    assert as_integer(1, minimum=1, maximum=None) == 1
    assert as_integer(2**70, minimum=1, maximum=None) == 2**70
    for value, minimum, maximum in ((0, 1, None), (11, 0, 10)):
        with pytest.raises(PydanticCustomError) as refused:
            as_integer(value, minimum=minimum, maximum=maximum)
        assert (refused.value.type, refused.value.message()) == OUT_OF_RANGE
    assert as_integer(10, minimum=0, maximum=10) == 10


def test_each_contract_type_names_its_refusal() -> None:
    # Only `unknown_component` changes the HTTP answer (http/bodies.py); the others name what was wrong
    # for whoever reads the validation error (logs, the console, a debugger).
    limits, timestamp, flag = TypeAdapter(Limits), TypeAdapter(Timestamp), TypeAdapter(StrictBoolean)
    assert refusal(limits, [("cpu", 1)]) == refusal(limits, {}) == ("limits", "not a limits object")
    assert refusal(limits, {"cpus": 1}) == ("unknown_component", "unknown limit component")
    assert refusal(limits, {"cpu": 1.5}) == NOT_AN_INTEGER
    assert refusal(limits, {"cpu": -1}) == OUT_OF_RANGE
    for value in (1, "2026-01-01T00:00:00Z" + " " * MAX_TIMESTAMP_LENGTH, "2026-02-30T00:00:00Z", "yesterday"):
        assert refusal(timestamp, value) == ("timestamp", "not a timestamp")
    for value in (1, "true", None):
        assert refusal(flag, value) == ("bool", "not a boolean")


def test_timestamps_are_bounded_at_1024_characters() -> None:
    adapter = TypeAdapter(Timestamp)
    longest = "2026-01-01T00:00:00." + "1" * (MAX_TIMESTAMP_LENGTH - 21) + "Z"
    assert len(longest) == MAX_TIMESTAMP_LENGTH == 1024
    assert adapter.validate_python(longest) == longest
    with pytest.raises(ValidationError):
        adapter.validate_python(longest[:-1] + "1Z")
