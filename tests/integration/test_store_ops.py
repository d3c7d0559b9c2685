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
from chalicelib.store.ops import batch_get, get_item, query_all, transact
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
        return Outcome(200, {"ok": 1}, [{"Put": {"TableName": services.table, "Item": {**key("STATE"),
                                                                                      **to_item({"v": 1})}}}])

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
        return Outcome(200, {}, [{"ConditionCheck": {"TableName": services.table, "Key": key("ABSENT"),
                                                     "ConditionExpression": "attribute_exists(pk)"}}])

    with pytest.raises(Unavailable):
        run(services, plan)
    assert len(attempts) == MAX_ATTEMPTS
    assert stored_result(services) is None
