"""The scheduled functions' default rates (app.py's; infra/ sets each stage's own). Kept apart so that
`app.py` names them without importing the packages that run them."""

from __future__ import annotations

DRIFT_SCHEDULE = "rate(15 minutes)"  # the fleet drift reconciler
COMMITMENTS_SCHEDULE = "rate(1 hour)"  # the commitment sync
