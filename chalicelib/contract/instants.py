"""Contract timestamps as exact instants (pure).

The contract's pattern admits any offset and any number of fractional digits.
We compare instants exactly: offsets are honoured and the fraction is compared
digit by digit at whatever precision was given (no float, no rounding). A
string that matches the pattern but names no real calendar instant
(2026-02-30, 25:00, offset +24:00, a leap second) is rejected.

Every year the pattern admits (0000 to 9999) is a year of the proleptic
Gregorian calendar, as RFC 3339 and ISO 8601 count them (0000 is 1 BC, a leap
year), so the arithmetic is done on integers, not within Python's `datetime`
range (years 1 to 9999): `0000-12-31T00:01:00Z` and
`0001-01-01T00:00:00+23:59` are the same instant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PATTERN = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", re.ASCII
)
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DAYS_PER_ERA = 146_097  # the Gregorian calendar repeats every 400 years
_EPOCH_DAYS = 719_468  # days from 0000-03-01 to 1970-01-01


class InvalidInstant(ValueError):
    pass


@dataclass(frozen=True)
class Instant:
    """Whole seconds since the epoch (UTC) and the fraction's digits, trailing zeros dropped.

    Equal instants have equal fields; ordering pads the fractions to a common
    length so that they compare digit by digit.
    """

    seconds: int
    fraction: str

    def _cmp(self, other: Instant) -> int:
        if self.seconds != other.seconds:
            return -1 if self.seconds < other.seconds else 1
        width = max(len(self.fraction), len(other.fraction))
        a, b = self.fraction.ljust(width, "0"), other.fraction.ljust(width, "0")
        return (a > b) - (a < b)

    def __lt__(self, other: object) -> bool:
        return isinstance(other, Instant) and self._cmp(other) < 0

    def __le__(self, other: object) -> bool:
        return isinstance(other, Instant) and self._cmp(other) <= 0

    def __gt__(self, other: object) -> bool:
        return isinstance(other, Instant) and self._cmp(other) > 0

    def __ge__(self, other: object) -> bool:
        return isinstance(other, Instant) and self._cmp(other) >= 0

    def canonical(self) -> str:
        """A UTC text form, equal for equal instants (used in fingerprints)."""
        return f"{self.seconds}.{self.fraction}" if self.fraction else str(self.seconds)


def is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    return 29 if month == 2 and is_leap_year(year) else _DAYS_IN_MONTH[month - 1]


def days_from_epoch(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date (any year; H. Hinnant's days_from_civil)."""
    year -= month <= 2  # count years from March, so that the leap day ends the year
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * _DAYS_PER_ERA + day_of_era - _EPOCH_DAYS


def parse_instant(text: str) -> Instant:
    match = _PATTERN.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidInstant("not a contract timestamp")
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction = (match.group(7) or "").rstrip("0")
    zone = match.group(8)
    if zone == "Z":
        offset = 0
    else:
        off_h, off_m = int(zone[1:3]), int(zone[4:6])
        if off_h > 23 or off_m > 59:
            raise InvalidInstant("no such offset")
        offset = (off_h * 3600 + off_m * 60) * (1 if zone[0] == "+" else -1)
    if not (1 <= month <= 12 and 1 <= day <= days_in_month(year, month)):
        raise InvalidInstant("no such calendar date")
    if hour > 23 or minute > 59 or second > 59:
        raise InvalidInstant("no such time of day")
    seconds = days_from_epoch(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
    return Instant(seconds, fraction)
