"""Saved request results (pure parts): the content identity, the key, what is saved and read back,
and the answer owed to a repeated requestId."""

from __future__ import annotations

import hashlib
import time

import pytest

from chalicelib.idempotency import SavedResult, fingerprint, replay_answer
from chalicelib.store.codec import from_item
from chalicelib.store.saved_results import request_key, save_result_op, saved_result
from chalicelib.store.schema import TTL_ATTRIBUTE

DAY = 86400


def test_fingerprint_is_pinned_to_the_sha256_of_canonical_json() -> None:
    # Sorted keys, no spaces, UTF-8 as is: a saved fingerprint must keep its meaning forever.
    canonical = '{"a":null,"b":[1,"é",{"x":true,"y":2.5}]}'
    assert fingerprint({"b": [1, "é", {"y": 2.5, "x": True}], "a": None}) == hashlib.sha256(
        canonical.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"cpu": 1, "memory": 2}, {"memory": 2, "cpu": 1}),
        ({"o": {"b": 1, "a": 2}}, {"o": {"a": 2, "b": 1}}),
    ],
)
def test_key_order_is_not_content(a, b) -> None:
    assert fingerprint(a) == fingerprint(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"cpu": 1}, {"cpu": 2}),
        ([1, 2], [2, 1]),  # list order is content
        ({"a": "1"}, {"a": 1}),
        ({"a": None}, {}),
    ],
)
def test_other_content_has_another_fingerprint(a, b) -> None:
    assert fingerprint(a) != fingerprint(b)


def test_request_key_is_scoped_to_site_operation_and_request() -> None:
    assert request_key("k8s", "report", "r-1") == {"pk": {"S": "REQ#k8s#report#r-1"}, "sk": {"S": "-"}}
    keys = {str(request_key(s, o, r)) for s in ("k8s", "slurm") for o in ("report", "accounts") for r in ("1", "2")}
    assert len(keys) == 8


def test_a_saved_result_reads_back_as_saved() -> None:
    result = SavedResult("fp-1", 422, {"requestId": "r-1", "rejection": {"code": "stale", "message": "é"}})
    before = int(time.time())
    op = save_result_op("rp-table", "k8s", "report", "r-1", result, ttl_days=7).request
    after = int(time.time())
    put = op["Put"]
    assert put["TableName"] == "rp-table"
    assert put["ConditionExpression"] == "attribute_not_exists(pk)"  # saved only while the id is free
    item = from_item(put["Item"])
    assert (item["pk"], item["sk"]) == ("REQ#k8s#report#r-1", "-")
    assert before <= item["createdAt"] <= after
    assert item[TTL_ATTRIBUTE] == item["createdAt"] + 7 * DAY
    assert ", " not in item["body"] and ": " not in item["body"]  # compact: the item stays small
    assert saved_result(item) == result


def test_the_expiry_follows_the_configured_days() -> None:
    op = save_result_op("t", "k8s", "report", "r", SavedResult("f", 200, {}), ttl_days=30)
    item = from_item(op.request["Put"]["Item"])
    assert item[TTL_ATTRIBUTE] - item["createdAt"] == 30 * DAY


def test_nothing_saved_reads_as_none() -> None:
    assert saved_result(None) is None


def test_a_saved_status_read_as_text_or_decimal_is_an_int() -> None:
    from decimal import Decimal

    assert saved_result({"fp": "f", "status": Decimal(200), "body": "{}"}) == SavedResult("f", 200, {})


def test_replay_answers() -> None:
    saved = SavedResult("content-a", 200, {"requestId": "r-1", "outcome": "accepted"})
    assert replay_answer(None, "content-a", "r-1", "alloc-1") is None  # free: go on and apply
    assert replay_answer(saved, "content-a", "r-1", "alloc-1") == (200, {"requestId": "r-1", "outcome": "accepted"})
    status, body = replay_answer(saved, "content-b", "r-1", "alloc-1")
    assert status == 422
    assert body == {
        "requestId": "r-1",
        "allocationId": "alloc-1",
        "outcome": "rejected",
        "rejection": {"code": "request_id_reused", "message": "This requestId was already used for different content."},
    }
