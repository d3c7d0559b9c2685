"""Contract timestamps as exact instants (pure).

The contract's pattern admits any offset and any number of fractional digits.
We compare instants exactly: offsets are honoured and the fraction is compared
digit by digit at whatever precision was given (no float, no rounding). A
string that matches the pattern but names no real calendar instant
(2026-02-30, 25:00, offset +24:00, a leap second) is rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_PATTERN = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", re.ASCII
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


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

    def __lt__(self, other: object) -> bool:  # type: ignore[override]
        return isinstance(other, Instant) and self._cmp(other) < 0

    def __le__(self, other: object) -> bool:  # type: ignore[override]
        return isinstance(other, Instant) and self._cmp(other) <= 0

    def __gt__(self, other: object) -> bool:  # type: ignore[override]
        return isinstance(other, Instant) and self._cmp(other) > 0

    def __ge__(self, other: object) -> bool:  # type: ignore[override]
        return isinstance(other, Instant) and self._cmp(other) >= 0

    def canonical(self) -> str:
        """A UTC text form, equal for equal instants (used in fingerprints)."""
        return f"{self.seconds}.{self.fraction}" if self.fraction else str(self.seconds)


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
    try:
        local = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError as exc:
        raise InvalidInstant("no such calendar instant") from exc
    seconds = (local - _EPOCH) // timedelta(seconds=1) - offset
    return Instant(seconds, fraction)
