"""Every timestamp the contract's pattern admits, years 0000 to 9999, as one proleptic Gregorian calendar.

Python's `datetime` stops at year 1; the contract does not. These tables pin
that year 0000 is a year like any other (a leap year: 1 BC), that an instant
is the same however it is written, and that every message taking a
timestamp accepts it.
"""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.accounts.models import AccountsRequest
from chalicelib.contract.instants import InvalidInstant, days_from_epoch, parse_instant
from chalicelib.contract.validation import validate_model
from chalicelib.errors import BadRequest
from chalicelib.reports.models import ReportRequest
from tests.support import factories as f


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("0000-12-31T00:01:00Z", "0001-01-01T00:00:00+23:59"),
        ("0000-01-01T00:00:00Z", "0000-01-01T05:30:00+05:30"),
        ("0000-01-01T00:00:00-23:59", "0000-01-01T23:59:00Z"),
        ("0000-03-01T00:00:00Z", "0000-02-29T23:00:00-01:00"),
        ("0000-12-31T23:59:59.5Z", "0001-01-01T00:59:59.50+01:00"),
        ("9999-12-31T23:59:59-23:59", "9999-12-31T23:59:59-23:59"),
    ],
)
def test_same_instant_however_written(a: str, b: str) -> None:
    assert parse_instant(a) == parse_instant(b)


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00.000001Z"),
        ("0000-01-01T00:00:00+23:59", "0000-01-01T00:00:00Z"),
        ("0000-12-31T23:59:59Z", "0001-01-01T00:00:00Z"),
        ("0000-02-28T12:00:00Z", "0000-02-29T00:00:00Z"),
        ("0001-01-01T00:00:00+23:59", "0000-12-31T00:01:00.1Z"),
        ("0000-01-01T00:00:00Z", "1970-01-01T00:00:00Z"),
    ],
)
def test_order_across_year_one(earlier: str, later: str) -> None:
    assert parse_instant(earlier) < parse_instant(later)
    assert parse_instant(later) > parse_instant(earlier)


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("0000-02-29T00:00:00Z", True),   # divisible by 400: leap
        ("0004-02-29T00:00:00Z", True),
        ("0100-02-29T00:00:00Z", False),  # divisible by 100 only: not leap
        ("0400-02-29T00:00:00Z", True),
        ("1900-02-29T00:00:00Z", False),
        ("2000-02-29T00:00:00Z", True),
        ("2023-02-29T00:00:00Z", False),
        ("0000-00-01T00:00:00Z", False),
        ("0000-01-00T00:00:00Z", False),
        ("0000-04-31T00:00:00Z", False),
        ("0000-12-32T00:00:00Z", False),
        ("0000-01-01T24:00:00Z", False),
        ("0000-01-01T23:60:00Z", False),
        ("0000-01-01T23:59:60Z", False),
        ("0000-01-01T00:00:00+24:00", False),
        ("0000-01-01T00:00:00-00:60", False),
        ("0000-01-01T00:00:00Z", True),
        ("9999-12-31T23:59:59.999Z", True),
    ],
)
def test_calendar(text: str, valid: bool) -> None:
    if valid:
        parse_instant(text)
    else:
        with pytest.raises(InvalidInstant):
            parse_instant(text)


@given(st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31)))
def test_days_match_pythons_calendar_where_it_has_one(day: date) -> None:
    assert days_from_epoch(day.year, day.month, day.day) == (day - date(1970, 1, 1)).days


def test_year_zero_continues_the_calendar() -> None:
    assert days_from_epoch(0, 12, 31) == days_from_epoch(1, 1, 1) - 1
    assert days_from_epoch(0, 3, 1) - days_from_epoch(0, 2, 28) == 2  # 0000-02-29 exists
    assert days_from_epoch(1, 1, 1) - days_from_epoch(0, 1, 1) == 366


@pytest.mark.parametrize("observed_at", ["0000-12-31T00:01:00Z", "0000-01-01T00:00:00-23:59",
                                         "0001-01-01T00:00:00+23:59"])
def test_every_message_takes_every_year(observed_at: str) -> None:
    report = validate_model(ReportRequest, f.report("r1", observedAt=observed_at))
    assert report.resource.observed_at == observed_at
    accounts = validate_model(AccountsRequest, {"requestId": "q1", "resourceRef": "res-1",
                                                "observedAt": observed_at, "accounts": []})
    assert accounts.observed_at == observed_at


def test_messages_still_refuse_what_is_no_instant() -> None:
    with pytest.raises(BadRequest):
        validate_model(ReportRequest, f.report("r1", observedAt="0000-02-30T00:00:00Z"))
