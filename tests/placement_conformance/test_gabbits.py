"""Placement 16.0.0's own functional tests (gabbits) against our service, one pytest test each.

The YAML comes from the PyPI wheel at test time (devkit/placement/upstream.py); the
files, the skip list and why are in docs/placement-conformance.md. RP_GABBITS_REPORT=<path>
writes a Markdown list of the failures there at the end of the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.placement import upstream
from devkit.placement.service import PlacementService
from tests.placement_conformance import driver
from tests.placement_conformance.fixtures import Target, use_target

DIRECTORY = upstream.gabbits_dir()
GABBITS = driver.collect(DIRECTORY)


@pytest.fixture(scope="module")
def outcomes() -> Iterator[dict[driver.GabbitId, driver.Outcome]]:
    seen: dict[driver.GabbitId, driver.Outcome] = {}
    yield seen
    report = os.environ.get("RP_GABBITS_REPORT")
    if report:
        Path(report).write_text(driver.markdown_report(seen))


@pytest.fixture(scope="module")
def gabbits(placement_service: PlacementService) -> Iterator[driver.Session]:
    session = driver.Session(DIRECTORY, Target(placement_service.base, placement_service.key,
                                               placement_service.reset))
    yield session
    session.close()
    use_target(None)


@pytest.mark.parametrize("gabbit", GABBITS, ids=str)
def test_gabbit(gabbits: driver.Session, outcomes: dict[driver.GabbitId, driver.Outcome],
                gabbit: driver.GabbitId) -> None:
    run = gabbits.file(gabbit.file)
    if run.failure is not None:
        outcome = driver.Outcome("failed", f"the fixtures of {gabbit.file} failed:\n{run.failure}")
    else:
        outcome = driver.run_case(run.cases[gabbit.index])
    expected_failure = upstream.EXPECTED_TO_FAIL.get(gabbit.file)
    if expected_failure and outcome.status != "skipped":
        if outcome.status == "passed":
            outcome = driver.Outcome("failed", f"passes now: remove {gabbit.file} from upstream.EXPECTED_TO_FAIL")
        else:
            outcome = driver.Outcome("xfailed", outcome.detail)
    outcomes[gabbit] = outcome
    if outcome.status == "xfailed":
        pytest.xfail(f"{expected_failure}: {driver.summary(outcome.detail)}")
    if outcome.status == "skipped":
        pytest.skip(outcome.detail)
    if outcome.status == "failed":
        pytest.fail(outcome.detail, pytrace=False)
