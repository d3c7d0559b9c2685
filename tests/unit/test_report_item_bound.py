"""The cheap bound that lets ordinary reports skip measuring their item is never below the item's size."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chalicelib.allocations.repository import item_of
from chalicelib.allocations.rules import REASONS, Status
from chalicelib.contract.types import MAX_SAFE_INTEGER
from chalicelib.reports.decision import Accepted, decide
from chalicelib.reports.models import Resource
from chalicelib.reports.service import item_bound
from chalicelib.store.size import item_size
from tests.support import factories as f

LONGEST = {
    "resourceRef": "r" * 128, "offeringRef": "o" * 128, "providerProjectRef": "p" * 128, "nativeScope": "n" * 128,
    "providerState": "Terminating", "observedAt": "2026-03-01T10:00:00." + "9" * 998 + "+23:59",
}


def largest_item(resource: Resource) -> int:
    decision = decide("slurm", "ffffffff-ffff-4fff-bfff-ffffffffffff", None, resource,
                      "ffffffff-ffff-4fff-bfff-ffffffffffff")
    assert isinstance(decision, Accepted)
    record = decision.record
    return item_size(item_of(replace(record, status=Status(record.status.observed, "suspended", REASONS),
                                     revision=MAX_SAFE_INTEGER, version=MAX_SAFE_INTEGER)))


def limits(count: int, name_length: int) -> dict[str, int]:
    return {f"gpu.{i:04d}" + "x" * (name_length - 9): MAX_SAFE_INTEGER for i in range(count)}


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        LONGEST,
        {**LONGEST, "configured": limits(32, 10), "applied": limits(32, 10), "used": limits(32, 10)},
        {**LONGEST, "configured": limits(32, 3000), "applied": limits(32, 3000), "used": limits(32, 3000)},
        {**LONGEST, "configured": {"cpu": 0}, "applied": None},
    ],
)
def test_the_bound_covers_the_item(overrides) -> None:
    resource = Resource.model_validate(f.resource(**overrides))
    assert largest_item(resource) <= item_bound(resource)
