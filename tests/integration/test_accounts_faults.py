"""Store faults on an accounts report: 503, nothing stored, nothing half-applied, a repeat converges."""

from __future__ import annotations

import pytest

from chalicelib.accounts.repository import AccountSetRepository
from chalicelib.runtime import use_services
from chalicelib.store.saved_results import request_key
from tests.support.faults import failing, unreachable
from tests.support.view_factories import account, accounts_report, allocate

PATH = "/resource-provisioning/k8s/accounts"


def _saved(services, request_id):
    return "Item" in services.client.get_item(TableName=services.table, Key=request_key("k8s", "accounts", request_id),
                                              ConsistentRead=True)


def test_unreachable_store_is_503_and_nothing_is_stored(api, services):
    allocation_id = allocate(api)  # also puts the k8s key into the key cache
    body = accounts_report([account()], request_id="down-1")
    use_services(unreachable(services))
    try:
        answer = api.post(PATH, body, key="k8s")
    finally:
        use_services(services)
    assert answer.status == 503 and answer.body == {"code": "unavailable"}
    assert not _saved(services, "down-1")
    assert AccountSetRepository(services.client, services.table).snapshot(allocation_id).header is None
    assert api.post(PATH, body, key="k8s").status == 200


@pytest.mark.parametrize(
    ("operation", "skip"),
    [
        ("TransactWriteItems", 0),  # the write itself fails
        ("BatchGetItem", 1),  # the read of the previous buckets fails, after the first read succeeded
    ],
)
def test_a_failure_midway_leaves_the_previous_set_and_a_repeat_converges(api, services, operation, skip):
    allocation_id = allocate(api)
    repo = AccountSetRepository(services.client, services.table)
    before = [account() for _ in range(200)]
    assert api.post(PATH, accounts_report(before, observed_at="2026-03-01T10:00:00Z"), key="k8s").status == 200
    previous = repo.snapshot(allocation_id)

    after = [*before[50:], *(account() for _ in range(100))]
    after[0] = {**after[0], "nativeUid": "re-made"}
    body = accounts_report(after, request_id="mid-1", observed_at="2026-03-01T10:05:00Z")
    with failing(services.client, operation, skip=skip):
        answer = api.post(PATH, body, key="k8s")
    assert answer.status == 503 and answer.body == {"code": "unavailable"}
    assert repo.snapshot(allocation_id) == previous
    assert not _saved(services, "mid-1")

    repeated = api.post(PATH, body, key="k8s")
    assert repeated.status == 200 and repeated.body["confirmed"] == len(after)
    current = repo.snapshot(allocation_id)
    assert set(current.accounts) == {a["partyId"] for a in after}
    assert current.accounts[after[0]["partyId"]].incarnation == 2
    assert api.post(PATH, body, key="k8s").body == repeated.body
