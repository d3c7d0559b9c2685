"""Store failures: 503 in Placement's format, nothing half-applied, and the repeat converges."""

from __future__ import annotations

import pytest

from tests.integration.placement.helpers import PROJECT, claim, new_uuid, provider
from tests.support.faults import failing


@pytest.mark.parametrize("operation", ["BatchGetItem", "TransactWriteItems"])
def test_a_store_failure_during_a_claim_is_503_and_changes_nothing(placement, services, operation):
    rp = provider(placement, VCPU={"total": 4})
    consumer = new_uuid()
    with failing(services.client, operation):
        answer = claim(placement, consumer, {rp: {"VCPU": 1}})
    assert answer.status == 503
    error = answer.body["errors"][0]
    assert (error["status"], error["title"]) == (503, "Service Unavailable")
    assert placement.get(f"/placement/resource_providers/{rp}/usages").body["usages"] == {"VCPU": 0}
    assert placement.get(f"/placement/allocations/{consumer}").body == {"allocations": {}}
    # the same request again succeeds (a new consumer: consumer_generation null still holds)
    assert claim(placement, consumer, {rp: {"VCPU": 1}}).status == 204
    assert placement.get(f"/placement/usages?project_id={PROJECT}", version="1.9").body == {"usages": {"VCPU": 1}}


def test_a_store_failure_on_read_is_503(placement, services):
    rp = provider(placement, VCPU={"total": 4})
    with failing(services.client, "GetItem"):
        answer = placement.get(f"/placement/resource_providers/{rp}", version="1.23")
    assert answer.status == 503 and answer.body["errors"][0]["code"] == "placement.undefined_code"
