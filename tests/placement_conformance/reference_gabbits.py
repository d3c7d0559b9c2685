"""The gabbit driver and its HTTP-only fixtures against the real Placement 16.0.0 (noauth2,
sqlite, `/placement` prefix, a fresh database per file, one server per policy the files name):
everything but the named skips must pass, which shows that the driver, the fixtures (the tree
fixtures included) and the reset are faithful, so a failure against our service is our service's.
`test_reference.py` runs this per file; `python -m tests.placement_conformance.reference_gabbits`
runs it all and closes with `N passed, N failed, N skipped`.
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


class References:
    """The real Placement of each policy the files name (driver.POLICIES), started on first use under
    `workdir`: noauth2 trusts the gabbits' identity headers, so requests go as the files write them."""

    def __init__(self, workdir: Path, first: ReferencePlacement | None = None) -> None:
        self.workdir = workdir
        self.started: dict[str, ReferencePlacement] = {first.policy: first} if first is not None else {}
        self.owned: list[ReferencePlacement] = []

    def __call__(self, policy: str) -> ReferencePlacement:
        if policy not in self.started:
            reference = ReferencePlacement(self.workdir / policy, policy=policy)
            reference.start()
            self.started[policy] = reference
            self.owned.append(reference)
        return self.started[policy]

    def stop(self) -> None:
        while self.owned:
            self.owned.pop().stop()


def session_for(references: References, expected: expectations.Expected) -> driver.Session:
    def target(policy: str) -> Target:
        reference = references(policy)
        return Target(reference.base, NOAUTH_ADMIN_TOKEN, reference.restart_empty)

    return driver.Session(upstream.gabbits_dir(), target, None, expected)


def run_file(session: driver.Session, gabbits: list[driver.GabbitId]) -> dict[driver.GabbitId, driver.Outcome]:
    return {gabbit: driver.run_one(session, gabbit) for gabbit in gabbits}


def main() -> int:
    expected = expectations.load()
    gabbits = driver.collect(upstream.gabbits_dir(), expected)
    with tempfile.TemporaryDirectory(prefix="placement-reference-") as workdir:
        references = References(Path(workdir))
        try:
            session = session_for(references, expected)
            outcomes = run_file(session, gabbits)
            session.close()
        finally:
            references.stop()
    print(driver.markdown_report(outcomes))
    statuses = [o.status for o in outcomes.values()]
    print(f"{statuses.count('passed')} passed, {statuses.count('failed')} failed, "
          f"{statuses.count('skipped')} skipped")
    return 1 if "failed" in statuses else 0


if __name__ == "__main__":
    sys.exit(main())
