"""Reports that could never be stored are a deterministic 400 `too_large`, decided before any write.

DynamoDB refuses an item over its size limit, and a transaction over 4 MB, on
every repeat: answered as 503, the agent would repeat such a report forever.
These tests post contract-valid reports just above and just below the bounds
(docs/limits.md) against the real store.
"""

from __future__ import annotations

import json
import random
import string
import uuid

from chalicelib.accounts.models import AccountsRequest
from chalicelib.accounts.repository import SET_WRITE_BYTES, AccountSetRepository, written_bytes
from chalicelib.accounts.service import _set_ops, set_fingerprint
from chalicelib.allocations.rules import allocation_id_for
from chalicelib.errors import BadRequest
from chalicelib.http.bodies import MAX_BODY_BYTES
from chalicelib.reports.models import Resource
from chalicelib.reports.service import check_storable
from chalicelib.store.saved_results import request_key
from chalicelib.store.size import MAX_NAME_BYTES
from tests.integration.helpers import allocation, bind, send
from tests.support import factories as f
from tests.support.view_factories import accounts_report, allocate

ALLOCATION = allocation_id_for("k8s", "res-1")


def huge_limits(name_length: int) -> dict[str, dict[str, int]]:
    name = "gpu." + "a" * (name_length - 4)
    limits = {"cpu": 1000, name: 1}
    return {"configured": limits, "applied": dict(limits)}


def saved(services, operation: str, request_id: str) -> bool:
    return "Item" in services.client.get_item(TableName=services.table, Key=request_key("k8s", operation, request_id),
                                              ConsistentRead=True)


def test_a_report_whose_item_cannot_be_stored_is_400_every_time(api, services):
    bind(api)
    body = f.report("huge", **huge_limits(210_000))
    assert len(json.dumps(body)) > 420_000
    for _ in range(3):
        answer = send(api, body)
        assert (answer.status, answer.body) == (400, {"code": "too_large"})
    assert allocation(api, ALLOCATION).status == 404
    assert not saved(services, "report", "huge")
    # Nothing was half-applied: the same resource reports normally afterwards.
    assert send(api, f.report("small")).status == 200


def many_limits(count: int, name_length: int) -> dict[str, dict[str, int]]:
    """`count` components whose names are `name_length` characters, in `configured` and `applied`."""
    limits = {f"gpu.{i:02d}" + "a" * (name_length - 6): 1 for i in range(count)}
    return {"configured": limits, "applied": dict(limits)}


def storable(resource: dict) -> bool:
    try:
        check_storable("k8s", ALLOCATION, Resource.model_validate(resource))
    except BadRequest:
        return False
    return True


LONGEST_OTHERS = {"nativeScope": "n" * 128, "offeringRef": "o" * 128,
                  "observedAt": "2026-03-01T10:00:00." + "1" * 1000 + "Z"}


def test_the_item_size_bound_is_where_the_store_still_takes_the_item(api, services):
    bind(api)
    # 32 components in `configured` and in `applied`, every other field at its longest: the longest names
    # that still pass are stored, one character more is refused.
    low, high = 6, MAX_NAME_BYTES
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if storable(f.resource(**many_limits(32, middle), **LONGEST_OTHERS)) \
            else (low, middle)
    assert 6000 < low < 6300  # two objects of 32 names of that length, about 400,000 bytes
    answer = send(api, f.report("edge", **many_limits(32, low), **LONGEST_OTHERS))
    assert answer.status == 200, answer.body
    assert allocation(api, answer.body["allocationId"]).status == 200
    over = send(api, f.report("over", **many_limits(32, low + 1), **LONGEST_OTHERS))
    assert (over.status, over.body) == (400, {"code": "too_large"})


def test_a_component_name_longer_than_a_store_takes_is_400_however_small_the_item(api, services):
    bind(api)
    longest = "gpu." + "a" * (MAX_NAME_BYTES - 4)
    answer = send(api, f.report("longest", configured={"cpu": 1, longest: 1}, applied={"cpu": 1, longest: 1}))
    assert answer.status == 200, answer.body
    for _ in range(2):
        refused = send(api, f.report("longer", resourceRef="res-2", used={longest + "a": 1}))
        assert (refused.status, refused.body) == (400, {"code": "too_large"})
    assert allocation(api, allocation_id_for("k8s", "res-2")).status == 404
    assert not saved(services, "report", "longer")


def _high_entropy_accounts(count: int, observed_at: str) -> dict:
    """A contract-valid accounts report that compresses as little as any can: random 4-byte nativeUids."""
    rnd = random.Random(7)
    alphabet = string.ascii_letters + string.digits

    def native_uid() -> str:
        return "".join(chr(rnd.randrange(0x10000, 0x10FFFF)) for _ in range(256))

    accounts = [{
        "partyId": str(uuid.UUID(int=rnd.getrandbits(128), version=4)),
        "accountReference": "member-" + "".join(rnd.choice(string.ascii_lowercase + string.digits) for _ in range(56)),
        "nativeUid": native_uid(),
        "bindingId": rnd.choice(alphabet) + "".join(rnd.choice(alphabet + "._:-") for _ in range(127)),
        "generation": 1,
        "state": "ready",
    } for _ in range(count)]
    return accounts_report(accounts, request_id="big-set", observed_at=observed_at)


def post_accounts(api, body: dict):
    # UTF-8 as the agent sends it (json.dumps' default \u escapes would double the body).
    raw = json.dumps(body, ensure_ascii=False).encode()
    assert len(raw) <= MAX_BODY_BYTES
    return api.request("POST", "/resource-provisioning/k8s/accounts", body=raw, key="k8s")


def test_an_accounts_report_whose_set_cannot_be_written_in_one_transaction_is_400(api, services):
    allocation_id = allocate(api)
    body = _high_entropy_accounts(3850, "2026-03-01T10:00:00Z")
    request = AccountsRequest.model_validate(body)
    size = written_bytes(_set_ops(services, "k8s", allocation_id, None, request, set_fingerprint(request.accounts)))
    assert size > SET_WRITE_BYTES
    for _ in range(2):
        answer = post_accounts(api, body)
        assert (answer.status, answer.body) == (400, {"code": "too_large"})
    assert AccountSetRepository(services.client, services.table).snapshot(allocation_id).header is None
    assert not saved(services, "accounts", "big-set")


def test_an_accounts_report_just_within_the_budget_is_stored(api, services):
    allocation_id = allocate(api)
    body = _high_entropy_accounts(3400, "2026-03-01T10:00:00Z")
    request = AccountsRequest.model_validate(body)
    size = written_bytes(_set_ops(services, "k8s", allocation_id, None, request, set_fingerprint(request.accounts)))
    assert 3_000_000 < size <= SET_WRITE_BYTES
    answer = post_accounts(api, body)
    assert answer.status == 200, answer.body
    assert len(AccountSetRepository(services.client, services.table).snapshot(allocation_id).accounts) == 3400
