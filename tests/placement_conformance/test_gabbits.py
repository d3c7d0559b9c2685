"""Placement 16.0.0's own functional tests (gabbits) against our service, one pytest test each.

The YAML comes from the PyPI wheel at test time (devkit/placement/upstream.py). Every file of the
wheel is collected: the 78 whose fixtures we build over HTTP run (the 27 policy/RBAC files each
against a server with its file's policy, every request with a Keystone token minted for its
headers: tokens.py); cors.yaml is a named skip. What does not pass yet is listed once, strictly, in expected.yaml
(tests/placement_conformance/expectations.py). The counts per file are printed at the end of the
run. RP_GABBITS_REPORT=<path> writes a Markdown list of the failures with their assertions there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devkit.placement import upstream
from devkit.placement.service import PlacementService
from tests.placement_conformance import driver, expectations
from tests.placement_conformance.fixtures import Target, use_target
from tests.placement_conformance.tokens import TokenMinter

DIRECTORY = upstream.gabbits_dir()
EXPECTED = expectations.load()
GABBITS = driver.collect(DIRECTORY, EXPECTED)
for _file in sorted({g.file for g in GABBITS}):
    expectations.OBSERVED.collect("gabbits", _file, [g.name for g in GABBITS if g.file == _file])


@pytest.fixture(scope="module")
def outcomes() -> Iterator[dict[driver.GabbitId, driver.Outcome]]:
    seen: dict[driver.GabbitId, driver.Outcome] = {}
    yield seen
    report = os.environ.get("RP_GABBITS_REPORT")
    if report:
        Path(report).write_text(driver.markdown_report(seen))


@pytest.fixture(scope="module")
def gabbits(placement_targets: Callable[[str], PlacementService], token_minter: TokenMinter
            ) -> Iterator[driver.Session]:
    def target(policy: str) -> Target:
        service = placement_targets(policy)
        return Target(service.base, service.key, service.reset)

    session = driver.Session(DIRECTORY, target, token_minter, EXPECTED)
    yield session
    session.close()
    use_target(None)


@pytest.mark.parametrize("gabbit", GABBITS, ids=str)
def test_gabbit(gabbits: driver.Session, outcomes: dict[driver.GabbitId, driver.Outcome],
                gabbit: driver.GabbitId) -> None:
    outcome = outcomes[gabbit] = driver.run_one(gabbits, gabbit)
    expectations.judge("gabbits", gabbit.file, gabbit.name, outcome.status, outcome.detail,
                       EXPECTED.gabbit_fails(gabbit.file, gabbit.name), driver.summary)
