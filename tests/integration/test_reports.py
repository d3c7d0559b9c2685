"""POST /reports: idempotency, ordering, terminal retirement, revision, lifecycle, limits."""

import json

import pytest

from chalicelib.allocations.rules import allocation_id_for
from tests.integration.helpers import allocation, bind, send
from tests.support import factories as f


@pytest.fixture
def bound(api):
    bind(api)
    return api


def test_first_report_creates_the_allocation(bound):
    answer = send(bound, f.report("r1"))
    assert answer.status == 200
    assert answer.body == {"requestId": "r1", "allocationId": allocation_id_for("k8s", "res-1"),
                           "outcome": "accepted", "lifecycle": "ready", "revision": 1}
    got = allocation(bound, answer.body["allocationId"])
    assert got.body == {"allocationId": answer.body["allocationId"], "lifecycle": "ready", "revision": 1,
                        "reasons": [], "observedAt": "2026-03-01T10:00:00Z"}


def test_replay_returns_the_saved_result_even_after_later_changes(bound):
    first = send(bound, f.report("r1"))
    send(bound, f.report("r2", observedAt="2026-03-01T11:00:00Z", paused=True))
    replay = send(bound, f.report("r1"))
    assert (replay.status, replay.body) == (first.status, first.body)


def test_replay_compares_json_as_data(bound):
    body = f.report("r1")
    first = send(bound, body)
    reordered = {"resource": dict(reversed(list(body["resource"].items()))), "requestId": "r1"}
    reordered["resource"]["configured"] = {"memory": 4294967296, "cpu": 2000.0}
    again = bound.request("POST", "/resource-provisioning/k8s/reports", key="k8s",
                          body=json.dumps(reordered, indent=3).encode())
    assert (again.status, again.body) == (first.status, first.body)


def test_request_id_reused_with_other_content(bound):
    first = send(bound, f.report("r1"))
    reused = send(bound, f.report("r1", observedAt="2026-03-01T12:00:00Z", paused=True))
    assert reused.status == 422
    assert reused.body["outcome"] == "rejected"
    assert reused.body["rejection"]["code"] == "request_id_reused"
    # nothing changed, the saved one kept
    assert allocation(bound, first.body["allocationId"]).body["observedAt"] == "2026-03-01T10:00:00Z"
    assert send(bound, f.report("r1")).body == first.body


def test_request_ids_are_scoped_to_the_site(bound):
    bind(bound)
    a = send(bound, f.report("same"), site="k8s")
    b = send(bound, f.report("same"), site="slurm")
    assert a.status == b.status == 200
    assert a.body["allocationId"] != b.body["allocationId"]


def test_older_report_is_stale_and_saved(bound):
    send(bound, f.report("r1", observedAt="2026-03-01T10:00:00Z"))
    stale = send(bound, f.report("r0", observedAt="2026-03-01T09:59:59.999999Z", paused=True))
    assert stale.status == 422 and stale.body["rejection"]["code"] == "stale"
    assert stale.body["lifecycle"] == "ready" and stale.body["revision"] == 1
    # saved with its request: the same request gets the same refusal
    assert send(bound, f.report("r0", observedAt="2026-03-01T09:59:59.999999Z", paused=True)).body == stale.body


def test_offsets_are_honoured(bound):
    send(bound, f.report("r1", observedAt="2026-03-01T10:00:00Z"))
    # 11:30+02:00 is 09:30Z: older although its text sorts later
    older = send(bound, f.report("r2", observedAt="2026-03-01T11:30:00+02:00", paused=True))
    assert older.body["rejection"]["code"] == "stale"
    newer = send(bound, f.report("r3", observedAt="2026-03-01T06:00:01-04:00", paused=True))
    assert newer.status == 200 and newer.body["lifecycle"] == "suspended"


def test_fractions_compared_at_full_precision(bound):
    send(bound, f.report("r1", observedAt="2026-03-01T10:00:00.1234567890123Z"))
    older = send(bound, f.report("r2", observedAt="2026-03-01T10:00:00.1234567890122Z", paused=True))
    assert older.body["rejection"]["code"] == "stale"
    newer = send(bound, f.report("r3", observedAt="2026-03-01T10:00:00.12345678901231Z", paused=True))
    assert newer.status == 200


def test_equal_instant_identical_is_accepted_without_change(bound):
    first = send(bound, f.report("r1", observedAt="2026-03-01T10:00:00Z"))
    same = send(bound, f.report("r2", observedAt="2026-03-01T11:00:00.000+01:00"))
    assert same.status == 200 and same.body["revision"] == first.body["revision"]
    assert allocation(bound, first.body["allocationId"]).body["observedAt"] == "2026-03-01T10:00:00Z"


def test_equal_instant_different_content_is_stale(bound):
    send(bound, f.report("r1"))
    other = send(bound, f.report("r2", used={"cpu": 5}))
    assert other.status == 422 and other.body["rejection"]["code"] == "stale"


def test_retired_is_terminal(bound):
    send(bound, f.report("r1", observedAt="2026-03-01T10:00:00Z"))
    retire = send(bound, f.report("r2", observedAt="2026-03-01T11:00:00Z", providerState="Terminated"))
    assert retire.body["lifecycle"] == "retired" and retire.body["revision"] == 2
    for rid, at in (("r3", "2026-03-01T12:00:00Z"), ("r4", "2026-03-01T09:00:00Z"), ("r5", "2026-03-01T11:00:00Z")):
        refused = send(bound, f.report(rid, observedAt=at))
        assert refused.status == 422 and refused.body["rejection"]["code"] == "retired"
        assert refused.body["lifecycle"] == "retired"
    assert allocation(bound, retire.body["allocationId"]).body["reasons"] == []


def test_revision_renewal_and_changes(bound):
    first = send(bound, f.report("r1", observedAt="2026-03-01T10:00:00Z", used={"cpu": 1}))
    renew = send(bound, f.report("r2", observedAt="2026-03-01T10:05:00Z", used={"cpu": 900}))
    assert renew.body["revision"] == 1
    assert allocation(bound, first.body["allocationId"]).body["observedAt"] == "2026-03-01T10:05:00Z"
    changed = send(bound, f.report("r3", observedAt="2026-03-01T10:06:00Z", applied={"cpu": 1000}))
    assert (changed.body["lifecycle"], changed.body["revision"]) == ("changing", 2)
    got = allocation(bound, first.body["allocationId"]).body
    assert got["reasons"] == ["limits_changing"]


def test_project_unbound_until_exactly_one_binding(api):
    first = send(api, f.report("r1", observedAt="2026-03-01T10:00:00Z"))
    assert first.body["lifecycle"] == "pending"
    assert allocation(api, first.body["allocationId"]).body["reasons"] == ["project_unbound"]
    bind(api)
    ready = send(api, f.report("r2", observedAt="2026-03-01T10:01:00Z"))
    assert (ready.body["lifecycle"], ready.body["revision"]) == ("ready", 2)
    bind(api, binding_id="b-2", project_id=f.OTHER_PROJECT)  # two established bindings: ambiguous
    again = send(api, f.report("r3", observedAt="2026-03-01T10:02:00Z"))
    assert (again.body["lifecycle"], again.body["revision"]) == ("pending", 3)


def test_reports_never_collide_across_sites(bound):
    a = send(bound, f.report("r1"), site="k8s")
    b = send(bound, f.report("r1"), site="slurm")
    assert a.body["allocationId"] != b.body["allocationId"]
    assert allocation(bound, b.body["allocationId"], site="k8s").status == 404


@pytest.mark.parametrize(
    ("mutation", "code"),
    [
        ({"configured": {"GPU": 1}}, "unknown_component"),
        ({"used": {"gpu.A100": 1}}, "unknown_component"),
        ({"applied": {"cpu": 1.5}}, "invalid_request"),
        ({"configured": {"cpu": "1"}}, "invalid_request"),
        ({"configured": {"cpu": True}}, "invalid_request"),
        ({"observedAt": "2026-02-30T25:00:00Z"}, "invalid_request"),
    ],
)
def test_bad_reports_are_400_and_store_nothing(bound, mutation, code):
    bad = send(bound, f.report("r1", **mutation))
    assert bad.status == 400 and bad.body == {"code": code}
    good = send(bound, f.report("r1"))  # the requestId is still free
    assert good.status == 200 and good.body["revision"] == 1


def test_integral_float_limits_are_integers(bound):
    body = json.dumps(f.report("r1")).replace('"cpu": 2000', '"cpu": 2000.0').encode()
    answer = bound.request("POST", "/resource-provisioning/k8s/reports", key="k8s", body=body)
    assert answer.status == 200 and answer.body["lifecycle"] == "ready"
