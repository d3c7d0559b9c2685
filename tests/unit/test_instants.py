"""Timestamps compared as exact instants."""

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.contract.instants import InvalidInstant, days_from_epoch, parse_instant


@pytest.mark.parametrize(
    ("a", "b", "order"),
    [
        ("2026-01-01T00:00:00Z", "2026-01-01T01:00:00+01:00", 0),
        ("2026-01-01T00:00:00Z", "2025-12-31T23:00:00-01:00", 0),
        ("2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00.50000Z", 0),
        ("2026-01-01T00:00:00.1Z", "2026-01-01T00:00:00.09999999999999999999999Z", 1),
        ("2026-01-01T00:00:00.000000000000000000000000001Z", "2026-01-01T00:00:00Z", 1),
        ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000Z", 0),
        ("2026-01-01T00:00:01Z", "2026-01-01T00:00:00.999999999Z", 1),
        ("2026-01-01T00:30:00+00:31", "2026-01-01T00:00:00Z", -1),
    ],
)
def test_ordering(a, b, order):
    x, y = parse_instant(a), parse_instant(b)
    assert ((x > y) - (x < y)) == order
    assert (x == y) == (order == 0)


NOT_A_TIMESTAMP, NO_OFFSET, NO_DATE, NO_TIME = (
    "not a contract timestamp", "no such offset", "no such calendar date", "no such time of day")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2026-02-30T00:00:00Z", NO_DATE), ("2026-02-30T25:00:00Z", NO_DATE), ("2026-13-01T00:00:00Z", NO_DATE),
        ("2026-01-01T24:00:00Z", NO_TIME), ("2026-01-01T00:60:00Z", NO_TIME), ("2026-01-01T00:00:60Z", NO_TIME),
        ("2026-01-01T00:00:00+24:00", NO_OFFSET), ("2026-01-01T00:00:00+01:60", NO_OFFSET),
        ("2026-01-01T00:00:00", NOT_A_TIMESTAMP), ("2026-01-01 00:00:00Z", NOT_A_TIMESTAMP),
        ("2026-01-01T00:00:00Z\n", NOT_A_TIMESTAMP),
        ("\uff12\uff10\uff12\uff16-01-01T00:00:00Z", NOT_A_TIMESTAMP), ("2026-01-01T00:00:00.Z", NOT_A_TIMESTAMP),
        (20260101, NOT_A_TIMESTAMP),
    ],
)
def test_rejects_what_is_no_instant_and_says_why(text, reason):
    # The checks run in this order (shape, offset, date, time): a text wrong twice names the first.
    with pytest.raises(InvalidInstant) as refused:
        parse_instant(text)
    assert str(refused.value) == reason


def test_leap_year_day_is_real():
    parse_instant("2024-02-29T12:00:00Z")


@given(
    st.datetimes(min_value=datetime(1000, 1, 2), max_value=datetime(9998, 12, 30), timezones=st.just(UTC)),
    st.integers(-23 * 60, 23 * 60),
)
def test_offsets_name_the_same_instant(moment, offset_minutes):
    utc_text = moment.strftime("%Y-%m-%dT%H:%M:%S") + "Z"
    local = moment.astimezone(timezone(timedelta(minutes=offset_minutes)))
    sign = "+" if offset_minutes >= 0 else "-"
    hh, mm = divmod(abs(offset_minutes), 60)
    local_text = local.strftime("%Y-%m-%dT%H:%M:%S") + f"{sign}{hh:02d}:{mm:02d}"
    assert parse_instant(utc_text) == parse_instant(local_text)


@pytest.mark.parametrize("year", [0, 1, 399, 400, 401, 800, 1000, 1600, 1900, 1970, 2000, 2024, 2100, 2400, 9999])
@pytest.mark.parametrize(("month", "day"), [(1, 1), (2, 28), (3, 1), (12, 31)])
def test_days_from_epoch_counts_proleptic_gregorian_days(year, month, day):
    if year == 0:  # datetime starts at year 1; year 0 is a leap year 366 days before it
        assert days_from_epoch(0, month, day) == days_from_epoch(1, month, day) - (365 if month > 2 else 366)
        return
    assert days_from_epoch(year, month, day) == date(year, month, day).toordinal() - date(1970, 1, 1).toordinal()
