"""Property: the retained list equals a brute-force evaluation of the view's final state, whatever the
order in which Beto's events arrive and however often they are repeated; and the revision is 0 exactly
while the Site has had no item, and moves whenever the list or an item changes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.retained.service import get_retained_accounts
from chalicelib.runtime import Services
from chalicelib.view.intake import ViewIntake, parse_batch

PROJECTS = ["11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"]
PARTIES = ["33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444"]
SITES = ["k8s", "slurm"]
ITEMS = ["i1", "i2", "i3"]

generation = st.integers(1, 3)


def _versions(fields: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(fields, max_size=3)


project = st.fixed_dictionaries({"state": st.sampled_from(["active", "closed"]),
                                 "managementGeneration": st.integers(1, 2)})
site_binding = st.fixed_dictionaries({"bindingId": st.sampled_from(["b1", "b2"]),
                                      "state": st.sampled_from(["established", "retired"])})
membership = st.fixed_dictionaries({"generation": generation, "state": st.sampled_from(["member", "left"])})
item = st.fixed_dictionaries({"projectId": st.sampled_from(PROJECTS), "partyId": st.sampled_from(PARTIES),
                              "generation": generation, "managementGeneration": st.integers(1, 2),
                              "required": st.booleans()})


@st.composite
def histories(draw: Any, first_revision: int = 1) -> list[dict[str, Any]]:
    """Every version of every entity, as events with rising revisions per entity."""
    events: list[dict[str, Any]] = []

    def add(versions: list[dict[str, Any]], identity: dict[str, Any], kind: str) -> None:
        for offset, fields in enumerate(versions):
            events.append({"type": kind, **identity, **fields, "revision": first_revision + offset})

    for p in PROJECTS:
        add(draw(_versions(project)), {"projectId": p}, "project")
    for q in PARTIES:
        for s in SITES:
            add(draw(_versions(site_binding)), {"partyId": q, "site": s}, "party_site_binding")
    for p in PROJECTS:
        for q in PARTIES:
            add(draw(_versions(membership)), {"projectId": p, "partyId": q}, "membership")
    for s in SITES:
        for i in ITEMS:
            add(draw(_versions(item)), {"site": s, "itemId": i}, "accepted_item")
    return events


@st.composite
def deliveries(draw: Any, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events in a random order, some of them more than once."""
    duplicates = draw(st.lists(st.sampled_from(events), max_size=len(events))) if events else []
    return draw(st.permutations(events + duplicates))


def _identity(event: dict[str, Any]) -> tuple[Any, ...]:
    names = {"project": ("projectId",), "party_site_binding": ("partyId", "site"),
             "membership": ("projectId", "partyId"), "accepted_item": ("site", "itemId")}[event["type"]]
    return (event["type"], *(event[n] for n in names))


def final_state(events: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    state: dict[tuple[Any, ...], dict[str, Any]] = {}
    for event in events:
        key = _identity(event)
        if key not in state or event["revision"] > state[key]["revision"]:
            state[key] = event
    return state


def brute_force(events: list[dict[str, Any]], site: str) -> list[dict[str, Any]]:
    """The contract's rule, evaluated directly on the newest version of every entity."""
    state = final_state(events)
    kept = set()
    for (kind, *ident), it in state.items():
        if kind != "accepted_item" or ident[0] != site or not it["required"]:
            continue
        proj = state.get(("project", it["projectId"]))
        bind = state.get(("party_site_binding", it["partyId"], site))
        memb = state.get(("membership", it["projectId"], it["partyId"]))
        if proj is None or proj["state"] != "active" or proj["managementGeneration"] != it["managementGeneration"]:
            continue
        if bind is None or bind["state"] != "established":
            continue
        if memb is not None and memb["generation"] > it["generation"]:
            continue
        kept.add((it["projectId"], it["partyId"], bind["bindingId"], it["generation"]))
    return [{"projectId": p, "partyId": q, "bindingId": b, "generation": g} for p, q, b, g in sorted(kept)]


@contextlib.contextmanager
def emptied(svc: Services) -> Iterator[Services]:
    """The test's table, emptied after each example (a table per example would cost more than the example)."""
    try:
        yield svc
    finally:
        keys = [{"pk": i["pk"], "sk": i["sk"]} for page in svc.client.get_paginator("scan").paginate(
            TableName=svc.table, ProjectionExpression="pk, sk") for i in page["Items"]]
        for start in range(0, len(keys), 25):
            svc.client.batch_write_item(RequestItems={svc.table: [
                {"DeleteRequest": {"Key": k}} for k in keys[start:start + 25]]})


def deliver(svc: Services, events: list[dict[str, Any]]) -> None:
    intake = ViewIntake(svc.client, svc.table)
    for start in range(0, len(events), 500):
        intake.apply_batch(parse_batch({"events": events[start:start + 500]}))


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_retained_list_equals_brute_force_over_any_delivery(services, data):
    history = data.draw(histories())
    later = data.draw(histories(first_revision=10))  # newer versions of some entities
    with emptied(services) as svc:
        deliver(svc, data.draw(deliveries(history)))
        first = {s: get_retained_accounts(svc, s) for s in SITES}
        for s in SITES:
            had_items = any(e["type"] == "accepted_item" and e["site"] == s for e in history)
            assert first[s]["accounts"] == brute_force(history, s)
            assert (first[s]["revision"] == 0) is (not had_items)
            assert get_retained_accounts(svc, s) == first[s]  # stable while nothing changes

        deliver(svc, data.draw(deliveries(later)))
        everything = history + later
        for s in SITES:
            second = get_retained_accounts(svc, s)
            assert second["accounts"] == brute_force(everything, s)
            item_changed = any(e["type"] == "accepted_item" and e["site"] == s for e in later)
            if second["accounts"] != first[s]["accounts"] or item_changed:
                assert second["revision"] > first[s]["revision"]
            else:
                assert second["revision"] == first[s]["revision"]
