"""What one report does to its allocation (pure decide): the record it builds, refusals, counters.

The record is read through its attributes only (never constructed here), so these tests hold
wherever the record type lives.
"""

from __future__ import annotations

import hashlib

import pytest

from chalicelib.reports.decision import Accepted, Rejected, decide, resource_fingerprint
from chalicelib.reports.models import Resource
from tests.support import factories as f

P = "11111111-1111-4111-8111-111111111111"
ALLOC = "6f1b2a52-4c8e-5d0a-9b7e-3a1c2d4e5f60"
T0 = "2026-03-01T10:00:00Z"
T1 = "2026-03-01T10:00:01Z"
T2 = "2026-03-01T10:00:02Z"


def res(**overrides) -> Resource:
    return Resource.model_validate(f.resource(**overrides))


def accept(current, resource, project_id=P, site="k8s", allocation_id=ALLOC):
    decision = decide(site, allocation_id, current, resource, project_id)
    assert isinstance(decision, Accepted), decision
    return decision


def test_first_report_maps_every_input_to_the_record() -> None:
    resource = res(resourceRef="r-9", offeringRef="o-9", providerProjectRef="wp-9", providerState="Updating",
                   paused=False, nativeScope="ns-9", configured={"cpu": 3000, "gpu.a100": 2},
                   applied={"cpu": 1000}, used={"cpu": 500}, observedAt=T0)
    decision = accept(None, resource, project_id=P, site="slurm", allocation_id=ALLOC)
    record = decision.record
    assert decision.changed is True
    assert (record.allocation_id, record.site) == (ALLOC, "slurm")
    assert (record.resource_ref, record.offering_ref, record.provider_project_ref) == ("r-9", "o-9", "wp-9")
    assert record.used == {"cpu": 500}
    assert record.observed_at == T0
    assert record.fingerprint == resource_fingerprint(resource)
    assert (record.revision, record.version) == (1, 1)
    assert record.lifecycle == "changing"
    assert record.status.reasons == ("limits_changing",)
    observed = record.status.observed
    assert observed.project_id == P
    assert (observed.provider_state, observed.paused, observed.native_scope) == ("Updating", False, "ns-9")
    assert dict(observed.configured) == {"cpu": 3000, "gpu.a100": 2}
    assert dict(observed.applied) == {"cpu": 1000}


def test_absent_optional_parts_stay_absent() -> None:
    resource = res(nativeScope=None, applied=None, used=None)
    record = accept(None, resource, project_id=None).record
    assert record.used is None
    observed = record.status.observed
    assert (observed.project_id, observed.native_scope, observed.applied) == (None, None, None)
    assert record.lifecycle == "pending"
    assert record.status.reasons == ("project_unbound", "provisioning", "limits_not_applied")


def test_version_counts_every_accepted_write_and_revision_only_material_changes() -> None:
    first = accept(None, res(observedAt=T0)).record
    same = accept(first, res(observedAt=T1, used={"cpu": 1})).record  # newer, nothing material
    paused = accept(same, res(observedAt=T2, paused=True)).record  # newer, material
    assert [(r.revision, r.version) for r in (first, same, paused)] == [(1, 1), (1, 2), (2, 3)]
    assert paused.lifecycle == "suspended" and paused.status.reasons == ("provider_paused",)


@pytest.mark.parametrize(
    "change",
    [
        {"paused": True},
        {"providerState": "Erred"},
        {"nativeScope": "ns-2"},
        {"configured": {"cpu": 1}, "applied": {"cpu": 1}},
        {"applied": {"cpu": 1}},
    ],
)
def test_a_material_change_bumps_the_revision_by_one(change) -> None:
    first = accept(None, res(observedAt=T0)).record
    second = accept(first, res(observedAt=T1, **change)).record
    assert (second.revision, second.version) == (2, 2)


def test_a_new_project_binding_is_a_material_change() -> None:
    first = accept(None, res(observedAt=T0), project_id=None).record
    second = accept(first, res(observedAt=T1), project_id=P).record
    assert (first.revision, second.revision) == (1, 2)
    assert second.status.observed.project_id == P


def test_the_revision_continues_from_the_current_one() -> None:
    record = accept(None, res(observedAt=T0)).record
    for i in range(1, 5):
        record = accept(record, res(observedAt=f"2026-03-01T10:00:0{i}Z", paused=i % 2 == 1)).record
    assert (record.revision, record.version) == (5, 5)


def test_an_older_report_is_refused_as_stale() -> None:
    current = accept(None, res(observedAt=T1)).record
    assert decide("k8s", ALLOC, current, res(observedAt=T0, paused=True), P) == Rejected("stale")
    # A smaller fraction of the same second is older too.
    assert decide("k8s", ALLOC, current, res(observedAt="2026-03-01T10:00:00.9Z"), P) == Rejected("stale")


@pytest.mark.parametrize("observed_at", [T0, T1, "2099-01-01T00:00:00Z"])
def test_a_retired_allocation_refuses_every_report(observed_at) -> None:
    retired = accept(None, res(observedAt=T0, providerState="Terminated")).record
    assert retired.lifecycle == "retired"
    assert decide("k8s", ALLOC, retired, res(observedAt=observed_at), P) == Rejected("retired")
    # Even the identical report again: retired wins over "unchanged".
    assert decide("k8s", ALLOC, retired, res(observedAt=T0, providerState="Terminated"), P) == Rejected("retired")


def test_equal_instant_with_reordered_limits_is_the_same_report() -> None:
    # A resend whose `configured` keys come in another order is the same content: accepted, unchanged.
    first = accept(None, res(observedAt=T0, configured={"cpu": 2000, "memory": 1}, applied={"cpu": 2000, "memory": 1}))
    again = decide("k8s", ALLOC, first.record,
                   res(observedAt=T0, configured={"memory": 1, "cpu": 2000}, applied={"memory": 1, "cpu": 2000}), P)
    assert again == Accepted(first.record, changed=False)


def test_equal_instant_in_another_notation_is_the_same_report() -> None:
    first = accept(None, res(observedAt="2026-03-01T10:00:00.5Z")).record
    again = decide("k8s", ALLOC, first, res(observedAt="2026-03-01T11:00:00.500+01:00"), P)
    assert again == Accepted(first, changed=False)


def test_resource_fingerprint_ignores_key_order_and_instant_notation_only() -> None:
    a = res(configured={"cpu": 1, "memory": 2}, observedAt="2026-03-01T10:00:00Z")
    b = res(configured={"memory": 2, "cpu": 1}, observedAt="2026-03-01T09:00:00.000-01:00")
    assert resource_fingerprint(a) == resource_fingerprint(b)
    assert resource_fingerprint(a) != resource_fingerprint(res(configured={"cpu": 1, "memory": 3}))
    assert resource_fingerprint(a) != resource_fingerprint(res(configured={"cpu": 1, "memory": 2},
                                                               observedAt="2026-03-01T10:00:00.1Z"))


def test_the_message_data_is_what_was_sent_without_absent_fields() -> None:
    from chalicelib.reports.models import ReportRequest

    sent = f.report("r-1", nativeScope=None, applied=None)  # optional parts absent, not null
    assert "nativeScope" not in sent["resource"] and "used" not in sent["resource"]
    assert ReportRequest.model_validate(sent).data() == sent


def test_resource_fingerprint_is_pinned() -> None:
    # Saved allocations carry this fingerprint: an equal-instant resend is compared with it.
    resource = res(nativeScope=None, applied=None, configured={"cpu": 1}, observedAt="1970-01-01T00:00:01.50Z")
    canonical = ('{"configured":{"cpu":1},"observedAt":"1.5","offeringRef":"off-1","paused":false,'
                 '"providerProjectRef":"wproj-1","providerState":"OK","resourceRef":"res-1"}')
    assert resource_fingerprint(resource) == hashlib.sha256(canonical.encode()).hexdigest()
