"""The stored retained list: reused while no input changed, recomputed after any input change, read
whole or not at all, and never half-written (docs/decisions/0002-retained-accounts-materialized.md)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest

from chalicelib.errors import Unavailable
from chalicelib.retained import materialized
from chalicelib.retained.materialized import read_list, read_state
from chalicelib.retained.service import compute_list, get_retained_accounts
from chalicelib.runtime import Services, build_services, use_services
from tests.support import factories as f
from tests.support.faults import failing
from tests.support.view_factories import (
    OTHER_PARTY,
    item_event,
    membership_event,
    post_events,
    site_binding_event,
    username_event,
)

PATH = "/resource-provisioning/k8s/retained-accounts"
PARTIES = [f"55555555-5555-4555-8555-{i:012d}" for i in range(12)]


def retained(api: Any) -> dict[str, Any]:
    answer = api.get(PATH, key="k8s")
    assert answer.status == 200, answer.body
    return answer.body


def calls_of(services: Services, fn: Any) -> tuple[Any, dict[str, int]]:
    services.round_trips.reset()
    result = fn()
    return result, dict(services.round_trips.calls)


def many_accounts(api: Any) -> None:
    """One kept account per Party of PARTIES (an active Project, established bindings, members)."""
    post_events(api, f.project_event(), *[site_binding_event(party_id=q, binding_id=f"sb-{i}")
                                          for i, q in enumerate(PARTIES)],
                *[membership_event(party_id=q) for q in PARTIES],
                *[item_event(item_id=f"it-{i}", party_id=q) for i, q in enumerate(PARTIES)])


def chunk_sort_keys(services: Services, site: str = "k8s") -> list[str]:
    page = services.client.query(TableName=services.table, KeyConditionExpression="pk = :p", ConsistentRead=True,
                                 ExpressionAttributeValues={":p": {"S": f"RETAINEDLIST#{site}"}})
    return [item["sk"]["S"] for item in page["Items"]]


def test_a_steady_read_takes_the_stored_list_in_two_round_trips(api, services):
    many_accounts(api)
    first = retained(api)
    assert len(first["accounts"]) == len(PARTIES)
    steady, calls = calls_of(services, lambda: retained(api))
    assert steady == first
    assert calls == {"Query": 1, "BatchGetItem": 1}


INPUTS = [
    ("project", [f.project_event(project_id=f.OTHER_PROJECT)]),
    ("membership", [membership_event(party_id=OTHER_PARTY)]),
    ("party_site_binding_here", [site_binding_event(party_id=OTHER_PARTY)]),
    ("accepted_item", [item_event(item_id="other", party_id=OTHER_PARTY, required=False)]),
]
NOT_INPUTS = [
    ("username", [username_event()]),
    ("project_binding", [f.binding_event("b-9", "wp-9")]),
    ("party_site_binding_elsewhere", [site_binding_event(party_id=OTHER_PARTY, site="slurm")]),
    ("item_elsewhere", [item_event(item_id="other", site="slurm")]),
]


@pytest.mark.parametrize(("kind", "events"), INPUTS, ids=[x[0] for x in INPUTS])
def test_any_input_change_makes_the_next_read_compute_the_list_again(api, services, kind, events):
    many_accounts(api)
    retained(api)
    post_events(api, *events)
    _, calls = calls_of(services, lambda: retained(api))
    assert calls.get("Query", 0) >= 2, calls  # the Site's state, then its items
    _, calls = calls_of(services, lambda: retained(api))
    assert calls == {"Query": 1, "BatchGetItem": 1}  # and stored it again


@pytest.mark.parametrize(("kind", "events"), NOT_INPUTS, ids=[x[0] for x in NOT_INPUTS])
def test_what_the_list_is_not_computed_from_keeps_the_stored_list(api, services, kind, events):
    many_accounts(api)
    first = retained(api)
    post_events(api, *events)
    again, calls = calls_of(services, lambda: retained(api))
    assert calls == {"Query": 1, "BatchGetItem": 1}
    assert again == first


def test_a_list_over_several_chunks_reads_back_whole(api, services, monkeypatch):
    monkeypatch.setattr(materialized, "CHUNK_BYTES", 32)  # DynamoDB's 400 KB item, scaled down
    many_accounts(api)
    first = retained(api)
    state = read_state(services.client, services.table, "k8s")
    assert state.header is not None and state.header.chunks > 3
    assert retained(api) == first
    assert sorted(chunk_sort_keys(services)) == sorted(f"{state.header.generation}#{n}"
                                                       for n in range(state.header.chunks))


def test_a_list_too_big_to_store_is_computed_on_every_read(api, services, monkeypatch):
    monkeypatch.setattr(materialized, "MAX_CHUNKS", 0)
    many_accounts(api)
    first = retained(api)
    again, calls = calls_of(services, lambda: retained(api))
    assert again == first and calls.get("Query", 0) >= 2
    assert read_state(services.client, services.table, "k8s").header is None


def test_a_reader_holding_a_replaced_header_finds_its_chunks_gone(api, services, monkeypatch):
    monkeypatch.setattr(materialized, "CHUNK_BYTES", 64)
    many_accounts(api)
    retained(api)
    old = read_state(services.client, services.table, "k8s").header
    assert old is not None
    post_events(api, site_binding_event(party_id=PARTIES[0], binding_id="sb-0", state="retired", revision=2))
    retained(api)  # computes and stores the new list, deleting the old generation's chunks with the flip
    new = read_state(services.client, services.table, "k8s").header
    assert new is not None and new.generation == old.generation + 1
    assert read_list(services.client, services.table, "k8s", old) is None
    assert len(read_list(services.client, services.table, "k8s", new) or []) == len(PARTIES) - 1


def test_a_read_whose_chunks_are_replaced_under_it_reads_again(api, services):
    """Between the reader's state Query and its chunk BatchGet, another client changes the list and
    stores it: the reader finds its generation gone, reads again, and answers the new list."""
    many_accounts(api)
    retained(api)
    other = build_services(replace(services.settings))
    fired = []

    def replace_list(**_: Any) -> None:
        if fired:
            return
        fired.append(True)
        use_services(other)
        try:
            post_events(api, site_binding_event(party_id=PARTIES[0], binding_id="sb-0", state="retired", revision=2))
            get_retained_accounts(other, "k8s")
        finally:
            use_services(services)

    services.client.meta.events.register("before-send.dynamodb.BatchGetItem", replace_list)
    try:
        answer = get_retained_accounts(services, "k8s")
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.BatchGetItem", replace_list)
    assert fired
    assert len(answer["accounts"]) == len(PARTIES) - 1
    assert answer == retained(api)


def test_a_read_whose_chunks_are_replaced_under_every_attempt_is_unavailable(api, services):
    """Bounded: when every attempt finds its generation gone, the read gives up with a named cause."""
    many_accounts(api)
    retained(api)
    other = build_services(replace(services.settings))
    revisions = iter(range(2, 100))

    def replace_list(**_: Any) -> None:
        revision = next(revisions)
        use_services(other)
        try:
            post_events(api, site_binding_event(party_id=PARTIES[0], binding_id="sb-0", revision=revision,
                                                state="retired" if revision % 2 == 0 else "established"))
            get_retained_accounts(other, "k8s")
        finally:
            use_services(services)

    services.client.meta.events.register("before-send.dynamodb.BatchGetItem", replace_list)
    try:
        with pytest.raises(Unavailable) as refused:
            get_retained_accounts(services, "k8s")
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.BatchGetItem", replace_list)
    assert type(refused.value.__cause__).__name__ == "StoredListKeptChanging"
    assert next(revisions) == 2 + 5  # one replacement per attempt, five attempts
    assert len(retained(api)["accounts"]) == len(PARTIES) - 1  # the last replacement (revision 6) retired sb-0


def test_a_store_fault_while_storing_leaves_the_old_list_whole(api, services):
    many_accounts(api)
    before = retained(api)
    old = read_state(services.client, services.table, "k8s").header
    post_events(api, site_binding_event(party_id=PARTIES[0], binding_id="sb-0", state="retired", revision=2))
    with failing(services.client, "TransactWriteItems") as seen:
        answer = api.get(PATH, key="k8s")
    assert seen[0] >= 1 and answer.status == 503 and answer.body == {"code": "unavailable"}
    assert read_state(services.client, services.table, "k8s").header == old
    assert read_list(services.client, services.table, "k8s", old) == [
        (a["projectId"], a["partyId"], a["bindingId"], a["generation"]) for a in before["accounts"]]
    assert old is not None and chunk_sort_keys(services) == [f"{old.generation}#0"]
    after = retained(api)
    assert len(after["accounts"]) == len(PARTIES) - 1 and after["revision"] > before["revision"]


@pytest.mark.parametrize("event", [f.project_event(state="closed", revision=2), item_event(required=False, revision=2),
                                   membership_event(generation=9, revision=2)],
                         ids=["project", "accepted_item", "membership"])
def test_an_intake_fault_applies_neither_the_entity_nor_its_counter(api, services, event):
    baseline = [f.project_event(), site_binding_event(), membership_event(), item_event()]
    post_events(api, *baseline)
    before = retained(api)
    state = read_state(services.client, services.table, "k8s")
    with failing(services.client, "TransactWriteItems") as seen:
        answer = api.post("/api/resource-provisioning/events", {"events": [event]}, key="service")
    assert seen[0] >= 1 and answer.status == 503
    after = read_state(services.client, services.table, "k8s")
    assert after.counters == state.counters and after.revision == state.revision
    assert retained(api) == before  # the entity was not written either
    post_events(api, event)
    assert retained(api)["accounts"] == []


def test_concurrent_readers_leave_one_current_list_and_no_stray_chunks(api, services, monkeypatch):
    monkeypatch.setattr(materialized, "CHUNK_BYTES", 128)
    many_accounts(api)
    retained(api)
    post_events(api, site_binding_event(party_id=PARTIES[0], binding_id="sb-0", state="retired", revision=2))
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: get_retained_accounts(services, "k8s"), range(12)))
    assert all(a == answers[0] for a in answers)
    state = read_state(services.client, services.table, "k8s")
    assert state.header is not None and state.header.stamp == state.counters
    assert sorted(chunk_sort_keys(services)) == sorted(f"{state.header.generation}#{n}"
                                                       for n in range(state.header.chunks))
    assert [tuple(a.values()) for a in answers[0]["accounts"]] == compute_list(services, "k8s")


def test_the_caps_unavailable_names_its_cause(api, services):
    many_accounts(api)
    with pytest.raises(Unavailable) as refused:
        get_retained_accounts(services, "k8s", limit=len(PARTIES) - 1)
    # What the HTTP layer logs as the 503's cause: the exception's class name, never "NoneType".
    assert type(refused.value.__cause__).__name__ == "RetainedListTooLong"


def test_a_full_batch_of_inputs_counts_every_applied_event_at_every_site_it_feeds(api, services):
    """500 events applied by the intake's parallel workers, each in a transaction with its counter:
    none refused for contention, none counted twice or lost, an ignored repeat counts nothing."""
    parties = [f"66666666-6666-4666-8666-{i:012d}" for i in range(250)]
    batch = [membership_event(party_id=q) for q in parties] + [
        site_binding_event(party_id=q, binding_id=f"sb-{i}") for i, q in enumerate(parties)]
    assert post_events(api, *batch) == {"applied": 500, "ignored": 0}
    assert post_events(api, *batch) == {"applied": 0, "ignored": 500}
    k8s = read_state(services.client, services.table, "k8s").counters
    slurm = read_state(services.client, services.table, "slurm").counters
    assert sum(k8s.values()) == 500 and sum(slurm.values()) == 250  # bindings are k8s's only
    assert len(k8s) > 16  # spread over the shards
