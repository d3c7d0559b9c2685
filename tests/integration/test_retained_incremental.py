"""Issue 18: the stored retained list is kept up to date by each change, and stays what a computation
from scratch gives.

Property: for random sequences of steps (batches of Beto's events, with stale and repeated revisions;
resource reports; accounts reports), a read after every step answers exactly the list computed from
scratch (the Site's items and the view, `compute_list`) and the contract's rule evaluated on the
newest version of every entity; its revision never falls and never names two lists. Most of those
reads fold the marked scopes into the stored list rather than compute it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.accounts.service import submit_accounts
from chalicelib.reports.service import submit_report
from chalicelib.retained import materialized
from chalicelib.retained import service as retained_service
from chalicelib.retained.materialized import read_list, read_state
from chalicelib.retained.service import compute_list, get_retained_accounts
from chalicelib.runtime import Services, build_services, use_services
from chalicelib.view.intake import ViewIntake, parse_batch
from chalicelib.view.keys import pair_scope
from tests.integration.test_retained_property import PARTIES, PROJECTS, SITES, brute_force, emptied
from tests.support import factories as f
from tests.support.view_factories import (
    account,
    accounts_report,
    item_event,
    membership_event,
    post_events,
    site_binding_event,
)

ITEMS = ["i1", "i2", "i3", "i4"]
revision = st.integers(1, 6)

project = st.builds(lambda p, s, m, r: {"type": "project", "projectId": p, "state": s, "managementGeneration": m,
                                        "revision": r},
                    st.sampled_from(PROJECTS), st.sampled_from(["active", "closed"]), st.integers(1, 2), revision)
site_binding = st.builds(lambda q, s, b, st_, r: {"type": "party_site_binding", "partyId": q, "site": s,
                                                   "bindingId": b, "state": st_, "revision": r},
                         st.sampled_from(PARTIES), st.sampled_from(SITES), st.sampled_from(["b1", "b2"]),
                         st.sampled_from(["established", "retired"]), revision)
membership = st.builds(lambda p, q, g, s, r: {"type": "membership", "projectId": p, "partyId": q, "generation": g,
                                              "state": s, "revision": r},
                       st.sampled_from(PROJECTS), st.sampled_from(PARTIES), st.integers(1, 3),
                       st.sampled_from(["member", "left"]), revision)
item = st.builds(lambda s, i, p, q, g, m, req, r: {"type": "accepted_item", "site": s, "itemId": i, "projectId": p,
                                                   "partyId": q, "generation": g, "managementGeneration": m,
                                                   "required": req, "revision": r},
                 st.sampled_from(SITES), st.sampled_from(ITEMS), st.sampled_from(PROJECTS), st.sampled_from(PARTIES),
                 st.integers(1, 3), st.integers(1, 2), st.booleans(), revision)
event = st.one_of(project, site_binding, membership, item, item)

step = st.one_of(
    st.tuples(st.just("events"), st.lists(event, min_size=1, max_size=4)),
    st.tuples(st.just("report"), st.sampled_from(SITES), st.sampled_from(["r1", "r2"]), st.booleans()),
    st.tuples(st.just("accounts"), st.sampled_from(SITES), st.sampled_from(PARTIES)),
)


def _identity(e: dict[str, Any]) -> tuple[Any, ...]:
    names = {"project": ("projectId",), "party_site_binding": ("partyId", "site"),
             "membership": ("projectId", "partyId"), "accepted_item": ("site", "itemId")}[e["type"]]
    return (e["type"], *(e[n] for n in names))


def _one_per_entity(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A batch with one event per entity (the intake applies an entity's events in order, entities in parallel)."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for e in events:
        seen.setdefault(_identity(e), e)
    return list(seen.values())


class Run:
    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self.intake = ViewIntake(svc.client, svc.table)
        self.events: list[dict[str, Any]] = []
        self.named: dict[tuple[str, int], str] = {}
        self.last = {s: 0 for s in SITES}
        self.reported = 0
        self.intake.apply_batch(parse_batch({"events": [f.binding_event("pb-1", "wp-1")]}))

    def apply(self, drawn: tuple[Any, ...]) -> None:
        kind = drawn[0]
        if kind == "events":
            batch = _one_per_entity(drawn[1])
            self.intake.apply_batch(parse_batch({"events": batch}))
            self.events += batch
        elif kind == "report":
            _, site, resource, paused = drawn
            self.reported += 1
            status, _ = submit_report(self.svc, site, f.report(f"rep-{self.reported}", resourceRef=resource,
                                                               providerProjectRef="wp-1", paused=paused,
                                                               observedAt=f"2026-03-01T10:{self.reported:02d}:00Z"),
                                      self.svc.settings.idempotency_ttl_days)
            assert status in (200, 422)
        else:
            _, site, party = drawn
            self.reported += 1
            status, _ = submit_accounts(self.svc, site, accounts_report(
                [account(party_id=party, site=site)], request_id=f"acc-{self.reported}", resource_ref="r1",
                observed_at=f"2026-03-01T11:{self.reported:02d}:00Z"), self.svc.settings.idempotency_ttl_days)
            assert status in (200, 422)

    def check(self) -> None:
        for site in SITES:
            answer = get_retained_accounts(self.svc, site)
            scratch = compute_list(self.svc, site)
            assert [tuple(a.values()) for a in answer["accounts"]] == scratch
            assert answer["accounts"] == brute_force(self.events, site)
            assert answer["revision"] >= self.last[site]
            listing = json.dumps(answer["accounts"])
            assert self.named.setdefault((site, answer["revision"]), listing) == listing
            self.last[site] = answer["revision"]
            state = read_state(self.svc.client, self.svc.table, site)
            assert state.revision == 0 or not state.pending  # the read folded every marked scope


@pytest.fixture(params=["written_whole", "patched"])
def list_writes(request: Any, monkeypatch: Any) -> str:
    """Lists as small as these are written whole at each change; `patched` stores them as a base and a
    patch, as a list of thousands of accounts is (materialized.py)."""
    if request.param == "patched":
        monkeypatch.setattr(materialized, "PATCH_FROM_BYTES", 0)
        monkeypatch.setattr(materialized, "PATCH_SHARE", 1)
    return str(request.param)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=14))
def test_the_kept_list_equals_the_list_computed_from_scratch_after_every_step(services, list_writes, steps):
    with emptied(services) as svc:
        run = Run(svc)
        for drawn in steps:
            run.apply(drawn)
            run.check()


# --- the fold, its races and its fallbacks ---------------------------------------------------------

MANY = [f"55555555-5555-4555-8555-{i:012d}" for i in range(12)]
PATH = "/resource-provisioning/k8s/retained-accounts"


def _many_accounts(api: Any) -> None:
    post_events(api, f.project_event(), *[site_binding_event(party_id=q, binding_id=f"sb-{i}")
                                          for i, q in enumerate(MANY)],
                *[membership_event(party_id=q) for q in MANY],
                *[item_event(item_id=f"it-{i}", party_id=q) for i, q in enumerate(MANY)])


def _read(api: Any) -> dict[str, Any]:
    answer = api.get(PATH, key="k8s")
    assert answer.status == 200, answer.body
    return answer.body


@contextlib.contextmanager
def queried(services: Services) -> Iterator[list[str]]:
    """The partitions the client's Queries read, in order."""
    seen: list[str] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        seen.append(params["ExpressionAttributeValues"][":p"]["S"])

    services.client.meta.events.register("provide-client-params.dynamodb.Query", record)
    try:
        yield seen
    finally:
        services.client.meta.events.unregister("provide-client-params.dynamodb.Query", record)


@pytest.mark.parametrize("change", [
    membership_event(party_id=MANY[0], generation=9, revision=2),
    site_binding_event(party_id=MANY[0], binding_id="sb-0", state="retired", revision=2),
    item_event(item_id="it-0", party_id=MANY[0], required=False, revision=2),
], ids=["membership", "party_site_binding", "accepted_item"])
def test_a_read_after_one_change_reads_the_changed_scope_never_the_sites_items(api, services, list_writes,
                                                                               change):
    _many_accounts(api)
    before = _read(api)
    post_events(api, change)
    with queried(services) as partitions:
        after = _read(api)
    assert "ITEMS#k8s" not in partitions and any(p.startswith("RETAINEDIDX#k8s#") for p in partitions)
    assert [a["partyId"] for a in after["accounts"]] == MANY[1:]
    assert after["revision"] > before["revision"]
    assert [tuple(a.values()) for a in after["accounts"]] == compute_list(services, "k8s")
    services.round_trips.reset()
    assert _read(api) == after
    assert dict(services.round_trips.calls) == {"Query": 1, "BatchGetItem": 1}


def test_a_project_closing_and_reopening_folds_every_row_of_the_project(api, services, list_writes):
    _many_accounts(api)
    first = _read(api)
    post_events(api, f.project_event(state="closed", revision=2))
    with queried(services) as partitions:
        assert _read(api)["accounts"] == []
    assert "ITEMS#k8s" not in partitions
    post_events(api, f.project_event(state="active", revision=3))
    again = _read(api)
    assert again["accounts"] == first["accounts"] and again["revision"] > first["revision"]


def test_a_change_that_leaves_the_list_as_it_was_moves_neither_list_nor_revision(api, services):
    _many_accounts(api)
    first = _read(api)
    header = read_state(services.client, services.table, "k8s").header
    post_events(api, membership_event(party_id=MANY[0], generation=1, state="left", revision=2))  # merely left
    assert _read(api) == first
    state = read_state(services.client, services.table, "k8s")
    assert state.header is not None and header is not None
    assert state.header.generation == header.generation and state.header.version == header.version + 1
    assert not state.pending


def test_a_site_with_items_from_before_the_index_is_computed_whole(api, services):
    """Items the intake wrote before it kept the index counted `changes` on the revision item."""
    _many_accounts(api)
    _read(api)
    services.client.update_item(TableName=services.table, Key={"pk": {"S": "RETAINED#k8s"}, "sk": {"S": "-"}},
                                UpdateExpression="ADD changes :one", ExpressionAttributeValues={":one": {"N": "1"}})
    with queried(services) as partitions:
        _read(api)
    assert "ITEMS#k8s" in partitions  # the counters moved: computed as in decision 0002
    post_events(api, membership_event(party_id=MANY[0], generation=9, revision=2))
    with queried(services) as partitions:
        after = _read(api)
    assert "ITEMS#k8s" in partitions and [a["partyId"] for a in after["accounts"]] == MANY[1:]
    services.round_trips.reset()
    assert _read(api) == after and dict(services.round_trips.calls) == {"Query": 1, "BatchGetItem": 1}


def test_more_pending_scopes_than_a_fold_takes_compute_the_list_whole(api, services, monkeypatch):
    monkeypatch.setattr(retained_service, "MAX_FOLDED_SCOPES", 1)
    _many_accounts(api)
    _read(api)
    post_events(api, membership_event(party_id=MANY[0], generation=9, revision=2),
                membership_event(party_id=MANY[1], generation=9, revision=2))
    with queried(services) as partitions:
        after = _read(api)
    assert "ITEMS#k8s" in partitions and [a["partyId"] for a in after["accounts"]] == MANY[2:]
    assert not read_state(services.client, services.table, "k8s").pending


def test_a_counter_that_moves_between_the_read_and_its_commit_keeps_its_scope(api, services, list_writes):
    """Another change of the same pair lands while the read folds: the read stores its list without
    taking the scope off, and the next read folds the pair again."""
    _many_accounts(api)
    _read(api)
    post_events(api, membership_event(party_id=MANY[0], generation=9, revision=2))
    header = read_state(services.client, services.table, "k8s").header
    other = build_services(replace(services.settings))
    fired: list[bool] = []

    def change_again(**_: Any) -> None:
        if fired:
            return
        fired.append(True)
        use_services(other)
        try:
            post_events(api, membership_event(party_id=MANY[0], generation=1, revision=3))  # un-fences
        finally:
            use_services(services)

    services.client.meta.events.register("before-send.dynamodb.TransactWriteItems", change_again)
    try:
        answer = get_retained_accounts(services, "k8s")
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", change_again)
    assert fired and [a["partyId"] for a in answer["accounts"]] == MANY[1:]  # as of the counters it read
    state = read_state(services.client, services.table, "k8s")
    assert state.pending == {pair_scope(f.PROJECT, MANY[0])}
    assert header is not None and state.header is not None and state.header.generation == header.generation + 1
    again = _read(api)
    assert [a["partyId"] for a in again["accounts"]] == MANY and again["revision"] > answer["revision"]
    assert not read_state(services.client, services.table, "k8s").pending


def test_concurrent_versions_of_one_item_leave_its_index_as_its_newest_version(api, services):
    """Real threads: every version of one item at once, each moving it to another pair; the index
    holds exactly the newest version's entries, and the list is the one computed from scratch."""
    _many_accounts(api)
    _read(api)
    versions = [item_event(item_id="moving", party_id=MANY[r % len(MANY)], generation=r, required=r % 3 != 0,
                           revision=r) for r in range(1, 25)]
    intake = ViewIntake(services.client, services.table)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda e: intake.apply(parse_batch({"events": [e]}).events[0]), versions))
    newest = versions[-1]
    entries = [i for page in services.client.get_paginator("scan").paginate(TableName=services.table)
               for i in page["Items"] if i["pk"]["S"].startswith("RETAINEDIDX#") and i["sk"]["S"].endswith("#moving")]
    expected = [] if not newest["required"] else [
        f"RETAINEDIDX#k8s#project#{f.PROJECT}|{newest['partyId']}#moving",
        f"RETAINEDIDX#k8s#party#{newest['partyId']}|{f.PROJECT}#moving"]
    assert sorted(f"{e['pk']['S']}|{e['sk']['S']}" for e in entries) == sorted(expected)
    answer = _read(api)
    assert [tuple(a.values()) for a in answer["accounts"]] == compute_list(services, "k8s")


def test_folds_racing_events_and_each_other_lose_no_change(api, services, list_writes):
    """Real threads: writers change memberships, bindings and items of a few Parties while readers
    fold; once the writers are done, a read answers the list computed from scratch."""
    _many_accounts(api)
    _read(api)
    rounds = 12

    def write(party: int) -> None:
        q = MANY[party]
        for rev in range(2, rounds + 2):
            post_events(api, membership_event(party_id=q, generation=rev if rev % 3 == 0 else 1, revision=rev),
                        site_binding_event(party_id=q, binding_id=f"sb-{party}",
                                           state="retired" if rev % 4 == 0 else "established", revision=rev),
                        item_event(item_id=f"it-{party}", party_id=q, generation=rev, required=rev % 5 != 0,
                                   revision=rev))

    def read(_: int) -> None:
        for _ in range(rounds):
            assert get_retained_accounts(services, "k8s")["revision"] > 0

    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(write, p) for p in range(3)] + [pool.submit(read, r) for r in range(3)]
        for future in futures:
            future.result()
    final = _read(api)
    assert [tuple(a.values()) for a in final["accounts"]] == compute_list(services, "k8s")
    assert not read_state(services.client, services.table, "k8s").pending


def test_a_patched_list_reads_whole_and_is_written_whole_again_once_its_patch_grows(api, services, monkeypatch):
    monkeypatch.setattr(materialized, "PATCH_FROM_BYTES", 0)
    monkeypatch.setattr(materialized, "PATCH_SHARE", 1)
    _many_accounts(api)
    _read(api)
    base = read_state(services.client, services.table, "k8s").header
    assert base is not None and not base.patch
    post_events(api, membership_event(party_id=MANY[0], generation=9, revision=2))
    first = _read(api)
    patched = read_state(services.client, services.table, "k8s").header
    assert patched is not None and patched.patch and patched.base_generation == base.generation
    # The base stays, so a reader still holding the old header reads the old list whole (as of its header).
    assert len(read_list(services.client, services.table, "k8s", base) or []) == len(MANY)
    assert len(read_list(services.client, services.table, "k8s", patched) or []) == len(MANY) - 1
    services.round_trips.reset()
    assert _read(api) == first and dict(services.round_trips.calls) == {"Query": 1, "BatchGetItem": 1}
    monkeypatch.setattr(materialized, "PATCH_SHARE", 10**6)  # any patch is now too big: written whole
    post_events(api, membership_event(party_id=MANY[1], generation=9, revision=2))
    second = _read(api)
    whole = read_state(services.client, services.table, "k8s").header
    assert whole is not None and not whole.patch and whole.base_generation == whole.generation
    assert [a["partyId"] for a in second["accounts"]] == MANY[2:]
    assert [tuple(a.values()) for a in second["accounts"]] == compute_list(services, "k8s")
    page = services.client.query(TableName=services.table, KeyConditionExpression="pk = :p", ConsistentRead=True,
                                 ExpressionAttributeValues={":p": {"S": "RETAINEDLIST#k8s"}})
    assert [i["sk"]["S"] for i in page["Items"]] == [f"{whole.generation}#0"]  # no stray chunk or patch


def test_a_site_without_items_takes_the_scopes_off_its_counters(api, services):
    """Project and membership events mark every Site; a Site without items answers the empty list at
    revision 0 and still takes the scopes off, so they never gather there."""
    post_events(api, f.project_event(), membership_event(), item_event(site="k8s"))
    assert read_state(services.client, services.table, "slurm").pending
    answer = api.get("/resource-provisioning/slurm/retained-accounts", key="slurm")
    assert (answer.status, answer.body) == (200, {"revision": 0, "accounts": []})
    state = read_state(services.client, services.table, "slurm")
    assert not state.pending and sum(state.counters.values()) == 2  # the counts stay
