"""The pause between attempts of a read-decide-write loop that lost a race (placement and fleet services)."""

from __future__ import annotations

import random
import time

BACKOFF_BASE = 0.002  # seconds before the second attempt, at most
BACKOFF_CAP = 0.05  # the longest pause


def pause_before_retry(attempt: int) -> None:
    """Full jitter over an exponential bound: writers that collided once do not collide again in step."""
    time.sleep(random.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2 ** attempt)))
