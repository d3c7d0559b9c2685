"""Literal values that stored data depends on (copied from the code as it was when data was first stored).

Allocation ids, account-set buckets and request fingerprints are keys and
comparands of items already in the table: if any of these functions changed,
existing allocations, account buckets and saved results would be orphaned
while every other test stayed green. A change here is a data migration, never
a refactoring.
"""

from __future__ import annotations

import pytest

from chalicelib.accounts.models import AccountsRequest
from chalicelib.accounts.service import request_fingerprint
from chalicelib.accounts.sets import bucket_of
from chalicelib.allocations.rules import allocation_id_for
from chalicelib.idempotency import fingerprint
from chalicelib.reports.models import ReportRequest


@pytest.mark.parametrize(
    ("site", "resource_ref", "allocation_id"),
    [
        ("k8s", "res-1", "b3fa5b26-116c-5ade-acdc-680207da6f26"),
        ("slurm", "res-1", "a43a3fbe-f3d8-5e9e-8163-5b43efbf6ee8"),
        ("k8s", "a:b.c-d_e", "396028ae-576c-5c1f-8133-812ac860324e"),
    ],
)
def test_allocation_id_for(site: str, resource_ref: str, allocation_id: str) -> None:
    assert allocation_id_for(site, resource_ref) == allocation_id


@pytest.mark.parametrize(
    ("party_id", "bucket"),
    [
        ("00000000-0000-4000-8000-000000000000", "32"),
        ("11111111-1111-4111-8111-111111111111", "37"),
        ("22222222-2222-4222-9222-222222222222", "11"),
        ("abcdef01-2345-4678-9abc-def012345678", "21"),
        ("ffffffff-ffff-4fff-bfff-ffffffffffff", "17"),
    ],
)
def test_bucket_of(party_id: str, bucket: str) -> None:
    assert bucket_of(party_id) == bucket


@pytest.mark.parametrize(
    ("data", "digest"),
    [
        ({}, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"),
        ({"b": 1, "a": [1, "x", None, True]}, "ecb73d12906ef1ff8df92255f5a2c370ccddf124400ea8f0fa0aa1a82a1fae23"),
        # Key order is not content: the same document with its keys in another order.
        ({"a": [1, "x", None, True], "b": 1}, "ecb73d12906ef1ff8df92255f5a2c370ccddf124400ea8f0fa0aa1a82a1fae23"),
        ({"n": "\u00e9\u2603"}, "56de714a8587b03b572a8be6209b3d227c63ed0b13843687a56a7a36c2521a39"),
    ],
)
def test_fingerprint(data: object, digest: str) -> None:
    assert fingerprint(data) == digest


REPORT = {
    "requestId": "r1",
    "resource": {
        "resourceRef": "res-1", "offeringRef": "off-1", "providerProjectRef": "wproj-1", "providerState": "OK",
        "paused": False, "nativeScope": "ns-1", "configured": {"cpu": 1000, "memory": 2048},
        "applied": {"cpu": 1000, "memory": 2048}, "observedAt": "2026-03-01T10:00:00Z",
    },
}
REPORT_FINGERPRINT = "3fb335f1b72bb97c99ec7b0fdef7a1d457cf9a02c27d2b29b50a2a710047f522"


def test_report_request_fingerprint() -> None:
    assert fingerprint(ReportRequest.model_validate(REPORT).data()) == REPORT_FINGERPRINT


def test_report_request_fingerprint_ignores_key_order() -> None:
    resource = dict(reversed(list(REPORT["resource"].items())))
    resource["configured"] = {"memory": 2048, "cpu": 1000}
    reordered = {"resource": resource, "requestId": "r1"}
    assert fingerprint(ReportRequest.model_validate(reordered).data()) == REPORT_FINGERPRINT


ACCOUNTS = {
    "requestId": "q1", "resourceRef": "res-1", "observedAt": "2026-03-01T10:00:00Z",
    "accounts": [
        {"partyId": "11111111-1111-4111-8111-111111111111", "accountReference": "member-alice", "nativeUid": "1001",
         "bindingId": "bind-1", "generation": 1, "state": "ready"},
        {"partyId": "22222222-2222-4222-9222-222222222222", "accountReference": "member-bob", "nativeUid": "1002",
         "bindingId": "bind-2", "generation": 2, "state": "incomplete"},
    ],
}
ACCOUNTS_FINGERPRINT = "bfd4d1b3595b0be6e7746253d3d5c00ab633f06badf5917ee611c1f21ecb1f8c"


def test_accounts_request_fingerprint() -> None:
    assert request_fingerprint(AccountsRequest.model_validate(ACCOUNTS)) == ACCOUNTS_FINGERPRINT


def test_accounts_request_fingerprint_ignores_list_order() -> None:
    reordered = {**ACCOUNTS, "accounts": list(reversed(ACCOUNTS["accounts"]))}
    assert request_fingerprint(AccountsRequest.model_validate(reordered)) == ACCOUNTS_FINGERPRINT
