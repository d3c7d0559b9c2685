"""The store helpers every adapter uses (store/ops.py, store/commands.py), against the real store.

Round trips are counted on the wire (RoundTripCounter); UnprocessedKeys, which
DynamoDB returns under load, are produced by rewriting the parsed response in
botocore's after-call event, so the helpers themselves run unchanged.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.errors import Unavailable
from chalicelib.idempotency import SavedResult
from chalicelib.store.codec import to_item
from chalicelib.store.commands import MAX_ATTEMPTS, Command, Outcome, Reread, run_command
from chalicelib.store.keys import key, key_id
from chalicelib.store.ops import Op, batch_get, delete_if, get_item, query_all, transact
from chalicelib.store.saved_results import request_key, save_result_op, saved_result


def put(services, pk: str, sk: str = "-", **values: Any) -> None:
    services.client.put_item(TableName=services.table, Item={**key(pk, sk), **to_item(values)})


def calls(services, operation: str) -> int:
    return services.round_trips.calls[operation]


@contextlib.contextmanager
def unprocessed(client: Any, rounds: int) -> Iterator[None]:
    """The next `rounds` BatchGetItem answers keep only their first item and return the rest as unprocessed."""
    left = [rounds]

    def hold_back(parsed: dict[str, Any], model: Any, **_: Any) -> None:
        if left[0] <= 0:
            return
        left[0] -= 1
        for table, items in parsed.get("Responses", {}).items():
            held = [{"pk": i["pk"], "sk": i["sk"]} for i in items[1:]]
            parsed["Responses"][table] = items[:1]
            if held:
                parsed.setdefault("UnprocessedKeys", {})[table] = {"Keys": held, "ConsistentRead": True}

    client.meta.events.register("after-call.dynamodb.BatchGetItem", hold_back)
    try:
        yield
    finally:
        client.meta.events.unregister("after-call.dynamodb.BatchGetItem", hold_back)


def test_get_item_is_none_or_the_plain_item(services):
    assert get_item(services.client, services.table, key("NOPE")) is None
    put(services, "X", count=3, name="n")
    assert get_item(services.client, services.table, key("X")) == {"pk": "X", "sk": "-", "count": 3, "name": "n"}


def test_query_all_reads_every_page(services):
    for i in range(7):
        put(services, "P", f"s{i}", n=i)
    put(services, "OTHER", "s0")
    services.round_trips.reset()
    items = query_all(services.client, services.table, KeyConditionExpression="pk = :p",
                      ExpressionAttributeValues={":p": {"S": "P"}}, Limit=2)
    assert [i["n"] for i in items] == list(range(7))
    assert calls(services, "Query") == 4  # pages of 2, 2, 2, 1


@pytest.mark.parametrize("workers", [1, 4])
def test_batch_get_takes_any_number_of_keys(services, workers):
    for i in range(250):
        put(services, f"K{i:03d}", n=i)
    keys = [key(f"K{i:03d}") for i in range(250)] + [key(f"MISSING{i}") for i in range(5)]
    services.round_trips.reset()
    found = batch_get(services.client, services.table, keys, workers=workers)
    assert sorted(found) == sorted(key_id(key(f"K{i:03d}")) for i in range(250))
    assert found[("K042", "-")]["n"] == 42
    assert calls(services, "BatchGetItem") == 3


def test_batch_get_projects_and_reads_no_keys_without_a_call(services):
    put(services, "A", n=1, big="x" * 100)
    services.round_trips.reset()
    assert batch_get(services.client, services.table, []) == {}
    assert services.round_trips.total == 0
    found = batch_get(services.client, services.table, [key("A")], projection="pk, sk, #n", names={"#n": "n"})
    assert found == {("A", "-"): {"pk": "A", "sk": "-", "n": 1}}


def test_a_key_dynamodb_cannot_hold_finds_nothing_without_a_call(services):
    """Sent, such a key is a ValidationException (503); no item is held under it, so reads find none."""
    put(services, "HELD", n=1)
    too_long = [key("P" * 2049), key("HELD", "s" * 1025), key("HELD", "\u00e9" * 513), key("", "x")]
    services.round_trips.reset()
    assert [get_item(services.client, services.table, k) for k in too_long] == [None] * 4
    assert [delete_if(services.client, services.table, k, "attribute_exists(pk)") for k in too_long] == [False] * 4
    assert services.round_trips.total == 0
    found = batch_get(services.client, services.table, [*too_long, key("HELD")])
    assert list(found) == [("HELD", "-")] and dict(services.round_trips.calls) == {"BatchGetItem": 1}
    # the longest keys DynamoDB holds are read as any other
    put(services, "P" * 2048, "s" * 1024, n=2)
    assert get_item(services.client, services.table, key("P" * 2048, "s" * 1024))["n"] == 2


def test_batch_get_reads_unprocessed_keys_again(services):
    for i in range(5):
        put(services, f"U{i}")
    services.round_trips.reset()
    with unprocessed(services.client, rounds=2):
        found = batch_get(services.client, services.table, [key(f"U{i}") for i in range(5)])
    assert len(found) == 5
    assert calls(services, "BatchGetItem") == 3


def test_batch_get_that_never_completes_is_unavailable_not_partial(services):
    # One key per round: ten keys need more rounds than the helper allows.
    for i in range(10):
        put(services, f"V{i}")
    with unprocessed(services.client, rounds=100), pytest.raises(Unavailable):
        batch_get(services.client, services.table, [key(f"V{i}") for i in range(10)])


COMMAND = Command("k8s", "test", "req-1", "alloc-1", "fp-1")


def run(services, plan, keys=None):
    return run_command(services.client, services.table, 8, COMMAND, keys or [key("STATE")], plan)


def stored_result(services):
    return saved_result(get_item(services.client, services.table, request_key("k8s", "test", "req-1")))


def test_a_command_saves_its_result_and_replays_it(services):
    seen = []

    def plan(found):
        seen.append(found.get(("STATE", "-")))
        return Outcome(200, {"ok": 1}, [Op("state", {"Put": {"TableName": services.table,
                                                             "Item": {**key("STATE"), **to_item({"v": 1})}}})])

    assert run(services, plan) == (200, {"ok": 1})
    assert stored_result(services) == SavedResult("fp-1", 200, {"ok": 1})
    services.round_trips.reset()
    assert run(services, plan) == (200, {"ok": 1})  # replayed: the plan is not asked again
    assert len(seen) == 1 and services.round_trips.total == 1


def test_other_content_under_the_same_request_id_is_request_id_reused(services):
    run(services, lambda found: Outcome(200, {"ok": 1}))
    other = Command("k8s", "test", "req-1", "alloc-1", "fp-2")
    status, body = run_command(services.client, services.table, 8, other, [key("STATE")],
                               lambda found: Outcome(200, {"ok": 2}))
    assert status == 422 and body["rejection"]["code"] == "request_id_reused"
    assert stored_result(services) == SavedResult("fp-1", 200, {"ok": 1})


def test_an_unsaved_outcome_writes_nothing(services):
    assert run(services, lambda found: Outcome(422, {"no": 1}, save=False)) == (422, {"no": 1})
    assert stored_result(services) is None


def test_reread_reads_again_and_decides_again(services):
    attempts = []

    def plan(found):
        attempts.append(1)
        if len(attempts) == 1:
            raise Reread()
        return Outcome(200, {"attempt": len(attempts)})

    services.round_trips.reset()
    assert run(services, plan) == (200, {"attempt": 2})
    assert calls(services, "BatchGetItem") == 2


def test_a_lost_race_for_the_request_id_answers_the_winners_result(services):
    def plan(found):
        # A concurrent request with the same content saves its result between our read and our write.
        transact(services.client, [save_result_op(services.table, "k8s", "test", "req-1",
                                                  SavedResult("fp-1", 200, {"winner": True}), 8)])
        return Outcome(200, {"winner": False})

    assert run(services, plan) == (200, {"winner": True})
    assert stored_result(services) == SavedResult("fp-1", 200, {"winner": True})


def test_a_condition_that_never_holds_is_unavailable_with_nothing_saved(services):
    attempts = []

    def plan(found):
        attempts.append(1)
        return Outcome(200, {}, [Op("absent", {"ConditionCheck": {"TableName": services.table, "Key": key("ABSENT"),
                                                                  "ConditionExpression": "attribute_exists(pk)"}})])

    with pytest.raises(Unavailable):
        run(services, plan)
    assert len(attempts) == MAX_ATTEMPTS
    assert stored_result(services) is None


# --- conditional single-item writes and the lease ----------------------------------------------------

def test_put_update_delete_if_answer_whether_the_condition_held(services):
    from chalicelib.store.ops import delete_if, put_if, update_if

    client, table = services.client, services.table
    item = {**key("C"), **to_item({"n": 1})}
    assert put_if(client, table, item, "attribute_not_exists(pk)") is True
    assert put_if(client, table, item, "attribute_not_exists(pk)") is False
    assert update_if(client, table, key("C"), "SET n = :two", "n = :one",
                     values={":one": {"N": "1"}, ":two": {"N": "2"}}) is True
    assert update_if(client, table, key("C"), "SET n = :two", "n = :one",
                     values={":one": {"N": "1"}, ":two": {"N": "3"}}) is False
    assert get_item(client, table, key("C"))["n"] == 2
    assert delete_if(client, table, key("C"), "n = :one", values={":one": {"N": "1"}}) is False
    assert delete_if(client, table, key("C"), "n = :two", values={":two": {"N": "2"}}) is True
    assert get_item(client, table, key("C")) is None


def test_a_lease_has_one_holder_until_it_expires(services):
    from chalicelib.store.lease import Lease

    client, table = services.client, services.table
    lease = Lease(key("LEASE"))
    assert lease.take(client, table, "a", now_ms=1_000, duration_ms=500) is True
    assert lease.take(client, table, "b", now_ms=1_400, duration_ms=500) is False  # a holds it until 1,500
    assert lease.renew(client, table, "b", now_ms=1_400, duration_ms=500) is False
    assert lease.renew(client, table, "a", now_ms=1_400, duration_ms=500) is True  # now until 1,900
    assert lease.take(client, table, "b", now_ms=1_600, duration_ms=500) is False
    assert lease.take(client, table, "b", now_ms=1_901, duration_ms=500) is True  # expired: b takes it
    assert lease.release(client, table, "a") is False  # a's lease passed to b: a cannot give it back
    assert lease.release(client, table, "b") is True
    assert get_item(client, table, key("LEASE")) is None


def test_a_lease_on_an_item_that_must_exist_is_never_taken_once_it_is_gone(services):
    from chalicelib.store.lease import Lease

    client, table = services.client, services.table
    claim = Lease(key("OUTBOX", "e1"), owner_attribute="claimBy", until_attribute="claimUntil", item_must_exist=True)
    assert claim.take(client, table, "a", now_ms=1, duration_ms=10) is False  # no such item
    put(services, "OUTBOX", "e1", event="x")
    assert claim.take(client, table, "a", now_ms=1, duration_ms=10) is True
    assert get_item(client, table, key("OUTBOX", "e1"))["claimBy"] == "a"


def test_threads_racing_for_one_lease_give_it_to_exactly_one(services):
    from concurrent.futures import ThreadPoolExecutor

    from chalicelib.store.lease import Lease

    lease = Lease(key("RACE"))
    with ThreadPoolExecutor(max_workers=8) as pool:
        won = list(pool.map(lambda n: lease.take(services.client, services.table, f"o{n}", 1_000, 60_000),
                            range(16)))
    assert won.count(True) == 1


def test_a_transaction_names_the_operations_whose_condition_failed(services):
    from chalicelib.store.ops import ConditionFailed, Op

    put(services, "TAKEN")
    ops = [
        Op("free_one", {"Put": {"TableName": services.table, "Item": {**key("FREE"), **to_item({})},
                                "ConditionExpression": "attribute_not_exists(pk)"}}),
        Op("name_claim", {"Put": {"TableName": services.table, "Item": {**key("TAKEN"), **to_item({})},
                                  "ConditionExpression": "attribute_not_exists(pk)"}}),
    ]
    with pytest.raises(ConditionFailed) as failed:
        transact(services.client, ops)
    assert failed.value.names == ("name_claim",)
    assert "name_claim" in failed.value and "free_one" not in failed.value
    assert get_item(services.client, services.table, key("FREE")) is None  # nothing half-applied


def test_a_transaction_dynamodb_could_never_accept_is_too_large_before_any_call(services):
    from chalicelib.store.ops import MAX_TRANSACTION_OPS, Op, TooLarge

    ops = [Op(f"o{i}", {"Put": {"TableName": services.table, "Item": {**key(f"T{i}"), **to_item({})}}})
           for i in range(MAX_TRANSACTION_OPS + 1)]
    services.round_trips.reset()
    with pytest.raises(TooLarge) as raised:
        transact(services.client, ops)
    assert raised.value.ops == MAX_TRANSACTION_OPS + 1
    assert calls(services, "TransactWriteItems") == 0
    big = [Op("big", {"Put": {"TableName": services.table, "Item": {**key("B"), "v": {"S": "x" * 4_200_000}}}})]
    with pytest.raises(TooLarge):
        transact(services.client, big)
    assert calls(services, "TransactWriteItems") == 0
