"""The gabbit driver against the real Placement 16.0.0 (noauth2, sqlite, `/placement` prefix):
`python -m tests.placement_conformance.reference_gabbits`. Everything but the skip list must
pass: that shows the driver, its fixtures and the reset are faithful, so a failure against our
service is our service's. Closes with `N passed, N failed, N skipped`.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from devkit.placement import upstream
from devkit.placement.reference import ReferencePlacement
from tests.placement_conformance import driver
from tests.placement_conformance.fixtures import Target

NOAUTH_ADMIN_TOKEN = "admin"  # noauth2: the admin token, no secret


def main() -> int:
    directory = upstream.gabbits_dir()
    with tempfile.TemporaryDirectory(prefix="placement-reference-") as workdir:
        reference = ReferencePlacement(Path(workdir))
        reference.start()
        try:
            session = driver.Session(directory, Target(reference.base, NOAUTH_ADMIN_TOKEN, reference.restart_empty))
            outcomes = {}
            for gabbit in driver.collect(directory):
                run = session.file(gabbit.file)
                outcome = (driver.Outcome("failed", run.failure) if run.failure is not None
                           else driver.run_case(run.cases[gabbit.index]))
                outcomes[gabbit] = outcome
            session.close()
        finally:
            reference.stop()
    print(driver.markdown_report(outcomes))
    statuses = [o.status for o in outcomes.values()]
    print(f"{statuses.count('passed')} passed, {statuses.count('failed')} failed, "
          f"{statuses.count('skipped')} skipped")
    return 1 if "failed" in statuses else 0


if __name__ == "__main__":
    sys.exit(main())
