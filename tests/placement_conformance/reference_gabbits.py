"""The gabbit driver and its HTTP-only fixtures against the real Placement 16.0.0 (noauth2,
sqlite, `/placement` prefix, a fresh database per file): everything but the named skips must pass,
which shows that the driver, the fixtures (the tree fixtures included) and the reset are faithful,
so a failure against our service is our service's. `test_reference.py` runs this per file;
`python -m tests.placement_conformance.reference_gabbits` runs it all and closes with
`N passed, N failed, N skipped`.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from devkit.placement import upstream
from devkit.placement.reference import ReferencePlacement
from tests.placement_conformance import driver, expectations
from tests.placement_conformance.fixtures import Target

NOAUTH_ADMIN_TOKEN = "admin"  # noauth2: the admin token, no secret


def session_for(reference: ReferencePlacement, expected: expectations.Expected) -> driver.Session:
    return driver.Session(upstream.gabbits_dir(), Target(reference.base, NOAUTH_ADMIN_TOKEN, reference.restart_empty),
                          expected)


def run_file(session: driver.Session, gabbits: list[driver.GabbitId]) -> dict[driver.GabbitId, driver.Outcome]:
    return {gabbit: driver.run_one(session, gabbit) for gabbit in gabbits}


def main() -> int:
    expected = expectations.load()
    gabbits = driver.collect(upstream.gabbits_dir(), expected)
    with tempfile.TemporaryDirectory(prefix="placement-reference-") as workdir:
        reference = ReferencePlacement(Path(workdir))
        reference.start()
        try:
            session = session_for(reference, expected)
            outcomes = run_file(session, gabbits)
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
