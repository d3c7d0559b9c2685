"""Reads of the retained list while item and binding events keep arriving (real threads)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from chalicelib.retained.service import compute_list
from tests.support import factories as f
from tests.support.view_factories import item_event, membership_event, site_binding_event

PARTIES = [f"55555555-5555-4555-8555-{i:012d}" for i in range(4)]
READERS, READS, WRITES = 4, 15, 60


def events(api, *batch):
    answer = api.post("/api/resource-provisioning/events", {"events": list(batch)}, key="service")
    assert answer.status == 200, answer.body


def test_reads_never_fail_and_no_revision_names_two_lists_while_events_arrive(api, services):
    events(api, f.project_event(), *[membership_event(party_id=p) for p in PARTIES],
           *[site_binding_event(party_id=p, binding_id=f"sb-{i}") for i, p in enumerate(PARTIES)],
           *[item_event(item_id=f"it-{i}", party_id=p) for i, p in enumerate(PARTIES)])

    def write_items(_: int) -> None:
        for rev in range(2, WRITES + 2):
            events(api, item_event(item_id="it-0", party_id=PARTIES[0], required=rev % 2 == 1, revision=rev))

    def write_bindings(_: int) -> None:
        for rev in range(2, WRITES + 2):
            state = "retired" if rev % 2 == 0 else "established"
            events(api, site_binding_event(party_id=PARTIES[1], binding_id="sb-1", state=state, revision=rev))

    def read(_: int) -> list[tuple[int, str]]:
        seen = []
        for _ in range(READS):
            answer = api.get("/resource-provisioning/k8s/retained-accounts", key="k8s")
            assert answer.status == 200, answer.body
            seen.append((answer.body["revision"], json.dumps(sorted(map(json.dumps, answer.body["accounts"])))))
        return seen

    with ThreadPoolExecutor(READERS + 2) as pool:
        writers = [pool.submit(write_items, 0), pool.submit(write_bindings, 0)]
        readers = [pool.submit(read, i) for i in range(READERS)]
        observations = [r.result() for r in readers]
        for w in writers:
            w.result()

    named: dict[int, str] = {}
    for seen in observations:
        revisions = [rev for rev, _ in seen]
        assert revisions == sorted(revisions)  # never falls for one reader
        for rev, listing in seen:
            assert named.setdefault(rev, listing) == listing, f"revision {rev} named two lists"

    # Readers stored lists while inputs kept changing: the one left stored must be today's list.
    final = api.get("/resource-provisioning/k8s/retained-accounts", key="k8s").body["accounts"]
    assert [tuple(a.values()) for a in final] == compute_list(services, "k8s")
    assert len(final) == len(PARTIES)  # the last writes re-required it-0 and re-established sb-1
