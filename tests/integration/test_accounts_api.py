"""POST /resource-provisioning/{site}/accounts through the handler stack, against the store over HTTP."""

from __future__ import annotations

import json
import secrets
import uuid

import pytest

from chalicelib.accounts.repository import AccountSetRepository
from chalicelib.accounts.sets import bucket_of
from chalicelib.allocations.rules import allocation_id_for
from chalicelib.store.saved_results import request_key
from tests.support.view_factories import account, accounts_report, allocate

PATH = "/resource-provisioning/{site}/accounts"
T0, T1, T2 = "2026-03-01T10:00:00Z", "2026-03-01T10:05:00Z", "2026-03-01T10:10:00Z"


def post(api, body, site="k8s", key=None):
    return api.post(PATH.format(site=site), body, key=key or site)


def stored(services, allocation_id):
    return AccountSetRepository(services.client, services.table).snapshot(allocation_id)


def saved(services, site, request_id):
    item = services.client.get_item(TableName=services.table, Key=request_key(site, "accounts", request_id),
                                    ConsistentRead=True).get("Item")
    return item is not None


def test_accepted_report_counts_ready_accounts_and_is_stored(api, services):
    allocation_id = allocate(api)
    accounts = [account(), account(state="incomplete"), account()]
    answer = post(api, accounts_report(accounts, request_id="a-1"))
    assert answer.status == 200
    assert answer.body == {"requestId": "a-1", "allocationId": allocation_id, "outcome": "accepted", "confirmed": 2}
    current = stored(services, allocation_id)
    assert set(current.accounts) == {a["partyId"] for a in accounts}
    assert current.header.confirmed == 2 and current.header.count == 3
    one = AccountSetRepository(services.client, services.table).find(allocation_id, accounts[1]["partyId"])
    assert (one.account_reference, one.native_uid, one.binding_id, one.generation, one.ready) == (
        accounts[1]["accountReference"], accounts[1]["nativeUid"], "sb-1", 1, False)


def test_replay_returns_the_saved_result_and_other_content_is_request_id_reused(api, services):
    allocation_id = allocate(api)
    body = accounts_report([account(), account()], request_id="a-1")
    first = post(api, body)
    again = post(api, {**body, "accounts": list(reversed(body["accounts"]))})  # the list is a set
    assert again.status == 200 and again.body == first.body

    changed = accounts_report([account()], request_id="a-1", observed_at=T1)
    reused = post(api, changed)
    assert reused.status == 422 and reused.body["rejection"]["code"] == "request_id_reused"
    assert set(stored(services, allocation_id).accounts) == {a["partyId"] for a in body["accounts"]}
    assert post(api, body).body == first.body  # the saved one is kept


def test_request_ids_are_scoped_to_site_and_operation(api, services):
    allocate(api)
    allocate(api, site="slurm")
    assert post(api, accounts_report(request_id="shared")).status == 200
    slurm = accounts_report([account(site="slurm")], request_id="shared")
    assert post(api, slurm, site="slurm").status == 200  # another Site's namespace
    report = {"requestId": "shared2", "resource": {
        "resourceRef": "res-1", "offeringRef": "off-1", "providerProjectRef": "wproj-1", "providerState": "OK",
        "paused": False, "nativeScope": "ns-1", "configured": {"cpu": 1}, "applied": {"cpu": 1},
        "observedAt": "2026-03-01T09:30:00Z"}}
    assert api.post("/resource-provisioning/k8s/reports", report, key="k8s").status == 200
    # The reports namespace does not hold accounts requestIds, nor the other way round.
    assert post(api, accounts_report(request_id="shared2", observed_at=T1)).status == 200


@pytest.mark.parametrize("case", ["no_allocation", "other_site_only", "retired"])
def test_refusals_store_nothing_and_leave_the_request_id_free(api, services, case):
    if case == "other_site_only":
        allocate(api, site="slurm")
    elif case == "retired":
        allocate(api)
        allocate(api, providerState="Terminated", observedAt="2026-03-01T09:10:00Z")
    code = "retired" if case == "retired" else "unknown_resource"
    answer = post(api, accounts_report(request_id="r-1"))
    assert answer.status == 422
    assert answer.body["rejection"]["code"] == code
    assert answer.body["allocationId"] == allocation_id_for("k8s", "res-1")
    assert "confirmed" not in answer.body
    assert not saved(services, "k8s", "r-1")
    assert stored(services, allocation_id_for("k8s", "res-1")).header is None
    if case != "retired":
        allocate(api)
        assert post(api, accounts_report(request_id="r-1", observed_at=T1)).status == 200


def test_ordering_stale_equal_and_newer(api, services):
    allocation_id = allocate(api)
    a, b = account(), account()
    assert post(api, accounts_report([a, b], observed_at=T1)).status == 200
    version = stored(services, allocation_id).header.version

    older = post(api, accounts_report([a], request_id="old", observed_at=T0))
    assert older.status == 422 and older.body["rejection"]["code"] == "stale"
    assert not saved(services, "k8s", "old")

    same = post(api, accounts_report([b, a], request_id="same", observed_at="2026-03-01T11:05:00.000+01:00"))
    assert same.status == 200 and same.body["confirmed"] == 2
    assert stored(services, allocation_id).header.version == version  # accepted, no change

    different = post(api, accounts_report([a], request_id="diff", observed_at=T1))
    assert different.status == 422 and different.body["rejection"]["code"] == "stale"
    assert post(api, accounts_report([a], request_id="old", observed_at=T2)).status == 200  # old was never saved
    assert set(stored(services, allocation_id).accounts) == {a["partyId"]}


def test_report_replaces_the_set_completely(api, services):
    allocation_id = allocate(api)
    a, b, c = account(), account(), account()
    post(api, accounts_report([a, b], observed_at=T0))
    b2 = {**b, "generation": 2, "state": "incomplete"}
    answer = post(api, accounts_report([b2, c], observed_at=T1))
    assert answer.body["confirmed"] == 1
    current = stored(services, allocation_id)
    assert set(current.accounts) == {b["partyId"], c["partyId"]}
    assert current.accounts[b["partyId"]].generation == 2
    repo = AccountSetRepository(services.client, services.table)
    assert repo.find(allocation_id, a["partyId"]) is None
    assert post(api, accounts_report([], observed_at=T2)).body["confirmed"] == 0
    assert stored(services, allocation_id).accounts == {}
    assert repo.find(allocation_id, b["partyId"]) is None


def test_a_new_native_uid_is_recorded_as_a_remade_account(api, services):
    allocation_id = allocate(api)
    party = str(uuid.uuid4())
    repo = AccountSetRepository(services.client, services.table)
    post(api, accounts_report([account(party, native_uid="uid-1")], observed_at=T0))
    post(api, accounts_report([account(party, native_uid="uid-1", generation=2)], observed_at=T1))
    kept = repo.find(allocation_id, party)
    assert (kept.native_uid, kept.incarnation, kept.since, kept.generation) == ("uid-1", 1, T0, 2)
    post(api, accounts_report([account(party, native_uid="uid-2", generation=2)], observed_at=T2))
    remade = repo.find(allocation_id, party)
    assert (remade.native_uid, remade.incarnation, remade.since) == ("uid-2", 2, T2)


@pytest.mark.parametrize(
    ("site", "accounts", "code"),
    [
        ("k8s", [{"accountReference": "alice"}], "invalid_account_reference"),
        ("k8s", [{"accountReference": "member-Alice"}], "invalid_account_reference"),
        ("k8s", [{"accountReference": "member-" + "a" * 57}], "invalid_account_reference"),
        ("slurm", [{"accountReference": "1alice"}], "invalid_account_reference"),
        ("slurm", [{"accountReference": "a" * 33}], "invalid_account_reference"),
        ("k8s", [{"partyId": "33333333-3333-4333-8333-333333333333"},
                 {"partyId": "33333333-3333-4333-8333-333333333333"}], "duplicate_party"),
        ("k8s", [{"accountReference": "member-x"}, {"accountReference": "member-x"}],
         "duplicate_account_reference"),
        ("k8s", [{"nativeUid": "has space"}], "invalid_request"),
        ("k8s", [{"generation": 0}], "invalid_request"),
    ],
)
def test_invalid_reports_are_400_without_echo_and_store_nothing(api, services, site, accounts, code):
    allocate(api, site=site)
    body = accounts_report([{**account(site=site), **a} for a in accounts], request_id="bad-1")
    answer = post(api, body, site=site)
    assert answer.status == 400 and answer.body == {"code": code}
    assert not saved(services, site, "bad-1")
    assert stored(services, allocation_id_for(site, "res-1")).header is None


def _largest_account(index: int) -> dict:
    return {
        "partyId": str(uuid.UUID(int=index, version=4)),
        "accountReference": f"member-{index:056d}",
        "nativeUid": secrets.token_hex(128),
        "bindingId": f"b{index:0127d}",
        "generation": 9007199254740991,
        "state": "incomplete" if index % 2 else "ready",
    }


def test_largest_report_is_one_read_and_one_transaction(api, services):
    allocation_id = allocate(api)
    accounts = [_largest_account(i) for i in range(4096)]
    body = accounts_report(accounts, request_id="big-" + "x" * 124, observed_at="2026-03-01T10:00:00.123456789+05:30")
    assert len(json.dumps(body)) > 2_300_000
    services.round_trips.reset()
    answer = post(api, body)
    assert answer.status == 200 and answer.body["confirmed"] == 2048
    assert dict(services.round_trips.calls) == {"BatchGetItem": 1, "TransactWriteItems": 1}

    repo = AccountSetRepository(services.client, services.table)
    current = repo.snapshot(allocation_id)
    assert len(current.accounts) == 4096
    for a in accounts[::409]:
        found = repo.find(allocation_id, a["partyId"])
        assert (found.account_reference, found.native_uid, found.binding_id, found.generation) == (
            a["accountReference"], a["nativeUid"], a["bindingId"], a["generation"])

    services.round_trips.reset()  # the same set, observed later: the header and the result only
    assert post(api, {**body, "requestId": "big-2", "observedAt": T2}).status == 200
    assert dict(services.round_trips.calls) == {"BatchGetItem": 1, "TransactWriteItems": 1}

    services.round_trips.reset()  # one account re-made: its bucket is read, then rewritten
    remade = [*accounts[:7], {**accounts[7], "nativeUid": "re-made"}, *accounts[8:]]
    assert post(api, {**body, "accounts": remade, "requestId": "big-3",
                      "observedAt": "2026-03-01T10:11:00Z"}).status == 200
    assert dict(services.round_trips.calls) == {"BatchGetItem": 2, "TransactWriteItems": 1}
    assert repo.find(allocation_id, accounts[7]["partyId"]).incarnation == 2

    services.round_trips.reset()
    assert post(api, {**body, "requestId": "big-2", "observedAt": T2}).status == 200  # replay
    assert dict(services.round_trips.calls) == {"BatchGetItem": 1}


def _colliding_parties(count: int, bucket: str = "00") -> list[str]:
    found: list[str] = []
    while len(found) < count:
        candidate = str(uuid.uuid4())
        if bucket_of(candidate) == bucket:
            found.append(candidate)
    return found


def test_a_bucket_of_colliding_parties_is_split_and_still_found(api, services):
    allocation_id = allocate(api)
    parties = _colliding_parties(2500)
    accounts = [{**_largest_account(i), "partyId": p} for i, p in enumerate(parties)]
    assert post(api, accounts_report(accounts, observed_at=T0)).status == 200
    repo = AccountSetRepository(services.client, services.table)
    header = repo.snapshot(allocation_id).header
    assert header.buckets["00"][1] > 1  # several parts
    for a in accounts[::97]:
        assert repo.find(allocation_id, a["partyId"]).native_uid == a["nativeUid"]

    fewer = accounts[:100]  # shrinks back to one part: the surplus parts are deleted
    assert post(api, accounts_report(fewer, observed_at=T1)).status == 200
    current = repo.snapshot(allocation_id)
    assert current.header.buckets["00"][1] == 1 and set(current.accounts) == {a["partyId"] for a in fewer}
    left = services.client.query(TableName=services.table, KeyConditionExpression="pk = :p",
                                 ExpressionAttributeValues={":p": {"S": f"ACCTS#{allocation_id}"}},
                                 ProjectionExpression="sk")["Items"]
    assert sorted(i["sk"]["S"] for i in left) == ["-", "b00"]


def test_a_site_key_never_reports_for_another_site(api, services):
    allocate(api, site="slurm")
    answer = api.post(PATH.format(site="slurm"), accounts_report([account(site="slurm")]), key="k8s")
    assert answer.status == 401
    assert stored(services, allocation_id_for("slurm", "res-1")).header is None


def test_generations_beyond_2_53_are_accepted_and_kept_exactly(api, services):
    allocation_id = allocate(api)
    big = account(generation=2**70)
    answer = post(api, accounts_report([big], request_id="a-big"))
    assert answer.status == 200 and answer.body["confirmed"] == 1
    found = AccountSetRepository(services.client, services.table).find(allocation_id, big["partyId"])
    assert found.generation == 2**70
