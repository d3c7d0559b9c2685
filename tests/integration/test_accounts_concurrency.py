"""Accounts reports from real threads: identical requests agree, racing reports never mix."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from chalicelib.accounts.repository import AccountSetRepository
from tests.support.view_factories import account, accounts_report, allocate

PATH = "/resource-provisioning/k8s/accounts"
THREADS = 8


def test_the_same_request_sent_concurrently_gets_one_identical_result(api, services):
    allocation_id = allocate(api)
    body = accounts_report([account() for _ in range(50)], request_id="same-1")
    barrier = threading.Barrier(THREADS)

    def send(_: int):
        barrier.wait()
        return api.post(PATH, body, key="k8s")

    with ThreadPoolExecutor(THREADS) as pool:
        answers = list(pool.map(send, range(THREADS)))
    assert {a.status for a in answers} == {200}
    assert all(a.body == answers[0].body for a in answers)
    current = AccountSetRepository(services.client, services.table).snapshot(allocation_id)
    assert current.header.version == 1  # applied once
    assert set(current.accounts) == {a["partyId"] for a in body["accounts"]}


def test_racing_reports_end_in_the_newest_and_readers_never_see_a_mix(api, services):
    allocation_id = allocate(api)
    repo = AccountSetRepository(services.client, services.table)
    reports = [
        accounts_report([account() for _ in range(40 + i)], request_id=f"race-{i}",
                        observed_at=f"2026-03-01T10:{i:02d}:00Z")
        for i in range(THREADS)
    ]
    sets = {frozenset(a["partyId"] for a in r["accounts"]) for r in reports}
    barrier = threading.Barrier(THREADS + 1)
    done = threading.Event()
    seen: list[frozenset[str]] = []

    def read() -> None:
        barrier.wait()
        while not done.is_set():
            seen.append(frozenset(repo.snapshot(allocation_id).accounts))

    def send(report):
        barrier.wait()
        return api.post(PATH, report, key="k8s")

    reader = threading.Thread(target=read)
    reader.start()
    try:
        with ThreadPoolExecutor(THREADS) as pool:
            answers = list(pool.map(send, reports))
    finally:
        done.set()
        reader.join()
    assert {a.status for a in answers} <= {200, 422}
    assert all(a.body["rejection"]["code"] == "stale" for a in answers if a.status == 422)
    final = repo.snapshot(allocation_id)
    assert final.header.observed_at == reports[-1]["observedAt"]
    assert frozenset(final.accounts) == frozenset(a["partyId"] for a in reports[-1]["accounts"])
    assert seen and all(s in sets or not s for s in seen), "a reader saw a mix of two reports"
