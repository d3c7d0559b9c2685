"""Instants: every comparison operator, fractions digit by digit, offsets, canonical text."""

from __future__ import annotations

import operator

import pytest

from chalicelib.contract.instants import InvalidInstant, parse_instant

EARLIER_LATER = [
    ("2026-01-01T00:00:00.1Z", "2026-01-01T00:00:00.2Z"),  # a smaller fraction is earlier
    ("2026-01-01T00:00:00.09Z", "2026-01-01T00:00:00.1Z"),  # fewer digits, larger value
    ("2026-01-01T00:00:00.1Z", "2026-01-01T00:00:00.11Z"),  # a prefix is earlier
    ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000001Z"),  # no fraction is earlier than any
    ("2026-01-01T00:00:00.999Z", "2026-01-01T00:00:01Z"),  # the seconds decide first
    ("2026-01-01T00:00:00.9Z", "2026-01-01T00:00:01.1Z"),
    ("2026-01-01T00:00:00+00:01", "2026-01-01T00:00:00Z"),  # east of UTC is earlier
    ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00-00:01"),  # west of UTC is later
    ("2026-01-01T01:00:00+02:00", "2026-01-01T00:00:00Z"),
    ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.5Z"),
    ("1969-12-31T23:59:59.5Z", "1970-01-01T00:00:00Z"),  # before the epoch
    ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"),
]


@pytest.mark.parametrize(("earlier", "later"), EARLIER_LATER)
def test_every_operator_orders_earlier_before_later(earlier: str, later: str) -> None:
    a, b = parse_instant(earlier), parse_instant(later)
    assert (a < b, a <= b, a > b, a >= b, a == b, a != b) == (True, True, False, False, False, True)
    assert (b < a, b <= a, b > a, b >= a) == (False, False, True, True)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00.500Z"),
        ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00.0Z"),
        ("2026-01-01T00:00:00Z", "2026-01-01T05:30:00+05:30"),
        ("2026-01-01T00:00:00Z", "2025-12-31T14:01:00-09:59"),
        ("2026-01-01T00:00:00Z", "2026-01-01T23:59:00+23:59"),
    ],
)
def test_equal_instants(a: str, b: str) -> None:
    x, y = parse_instant(a), parse_instant(b)
    assert (x < y, x <= y, x > y, x >= y, x == y) == (False, True, False, True, True)
    assert x.canonical() == y.canonical()


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge])
def test_an_instant_is_not_ordered_against_other_types(op) -> None:
    instant = parse_instant("2026-01-01T00:00:00Z")
    assert op(instant, "2026-01-01T00:00:00Z") is False


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1970-01-01T00:00:00Z", "0"),
        ("1970-01-01T00:00:01.250Z", "1.25"),
        ("1970-01-01T01:00:00+01:00", "0"),
        ("1970-01-01T00:00:00-00:01", "60"),
        ("1969-12-31T23:59:59Z", "-1"),
        ("2026-03-01T10:00:00.000000001Z", "1772359200.000000001"),
        ("2026-03-01T10:00:00.10Z", "1772359200.1"),
    ],
)
def test_canonical_text(text: str, canonical: str) -> None:
    assert parse_instant(text).canonical() == canonical


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00-24:00", "2026-01-01T00:00:00+00:60",
        "2026-01-01T00:00:00-23:60", "2026-04-31T00:00:00Z", "2025-02-29T00:00:00Z", None, 20260101,
    ],
)
def test_no_such_instant(text) -> None:
    with pytest.raises(InvalidInstant):
        parse_instant(text)


@pytest.mark.parametrize("text", ["2026-01-01T00:00:00+23:59", "2026-01-01T00:00:00-23:59", "2024-02-29T23:59:59Z"])
def test_extreme_but_real(text: str) -> None:
    parse_instant(text)
