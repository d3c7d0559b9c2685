"""Issue 18: the stored retained list is kept up to date by each change, and stays what a computation
from scratch gives.

Property: for random sequences of steps (batches of Beto's events, with stale and repeated revisions;
resource reports; accounts reports), a read after every step answers exactly the list computed from
scratch (the Site's items and the view, `compute_list`) and the contract's rule evaluated on the
newest version of every entity; its revision never falls and never names two lists. Most of those
reads fold the marked scopes into the stored list rather than compute it.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.accounts.service import submit_accounts
from chalicelib.reports.service import submit_report
from chalicelib.retained.materialized import read_state
from chalicelib.retained.service import compute_list, get_retained_accounts
from chalicelib.runtime import Services
from chalicelib.view.intake import ViewIntake, parse_batch
from tests.integration.test_retained_property import PARTIES, PROJECTS, SITES, brute_force, emptied
from tests.support import factories as f
from tests.support.view_factories import account, accounts_report

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
                                                               observedAt=f"2026-03-01T10:{self.reported:02d}:00Z"))
            assert status in (200, 422)
        else:
            _, site, party = drawn
            self.reported += 1
            status, _ = submit_accounts(self.svc, site, accounts_report(
                [account(party_id=party, site=site)], request_id=f"acc-{self.reported}", resource_ref="r1",
                observed_at=f"2026-03-01T11:{self.reported:02d}:00Z"))
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


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=12))
def test_the_kept_list_equals_the_list_computed_from_scratch_after_every_step(services, steps):
    with emptied(services) as svc:
        run = Run(svc)
        for drawn in steps:
            run.apply(drawn)
            run.check()
