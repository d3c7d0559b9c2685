"""Our Placement and the real Placement 16.0.0 side by side, in the suite: the fixed requests of
`reference_differences` (over-long names, uuids, headers) answer alike, and the differential fuzzer
(docs/placement-conformance.md) finds no hard difference but the known ones over a few fixed seeds,
each drawing one area five times as often. Both sides are emptied before each test.

A failure prints the fuzzer's summary: each difference once, shrunk, with the requests before it;
`python -m tests.placement_conformance.differential --seed N --steps 300 --runs 1 --focus F --fleet K`
plays the same sequence again.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.placement.reference import ReferencePlacement
from devkit.placement.service import PlacementService, start_placement_service
from tests.placement_conformance import differential, reference_differences
from tests.support.stores import StoreServer

# (seed, operations drawn five times as often, deployment scenarios built first): each is one run of STEPS
# requests. The fleet's run answers candidate queries of up to a dozen candidates, which `limit` cuts.
SEEDS = [
    (13101, "candidates,reshape", 0),
    (13131, "candidates", 0),
    (13202, "post_allocations,put_allocations,delete_allocations", 0),
    (13303, "update_provider,delete_provider,put_aggregates", 0),
    (13404, "", 0),
    (16001, "candidates", 10),
]
STEPS = 300


@pytest.fixture(scope="module")
def sides(store_server: StoreServer) -> Iterator[tuple[ReferencePlacement, PlacementService]]:
    ours = start_placement_service(store_server.endpoint)
    try:
        with tempfile.TemporaryDirectory(prefix="placement-side-by-side-") as workdir:
            # The order of its sets of strings (in some answers and texts) fixed: each run plays the same.
            reference = ReferencePlacement(Path(workdir), hash_seed="0")
            reference.start()
            try:
                yield reference, ours
            finally:
                reference.stop()
    finally:
        ours.stop()


def test_fixed_requests_answer_as_the_reference(sides: tuple[ReferencePlacement, PlacementService]) -> None:
    reference, ours = sides
    reference.restart_empty()
    ours.reset()
    found = reference_differences.differences(reference.base, ours.base, ours.key)
    assert not found, "\n".join(found)


@pytest.mark.parametrize(("seed", "focus", "fleet"), SEEDS)
def test_fuzzed_sequence_has_no_unknown_hard_difference(sides: tuple[ReferencePlacement, PlacementService],
                                                        seed: int, focus: str, fleet: int,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    args = differential.argument_parser().parse_args(
        ["--seed", str(seed), "--steps", str(STEPS), "--runs", "1", "--fleet", str(fleet),
         *(["--focus", focus] if focus else [])])
    status = differential.run_fuzz(args, differential.Harness(sides))
    summary = capsys.readouterr().out
    assert status == 0, summary
    assert "1 runs, " in summary  # the run was played (not ended before its first request)
