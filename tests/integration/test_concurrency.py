"""Real threads against a real store server: no lost update, identical replays."""

import random
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from chalicelib.allocations.rules import allocation_id_for
from tests.integration.helpers import allocation, bind, send
from tests.support import factories as f

THREADS = 8


def stamp(i: int) -> str:
    return (datetime(2026, 3, 1, tzinfo=UTC) + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_interleaved_reports_end_with_the_newest_state(api):
    bind(api)
    rng = random.Random(7)
    reports = []
    for i in range(40):
        reports.append(f.report(f"r{i}", observedAt=stamp(i), paused=rng.random() < 0.5,
                                used={"cpu": i}, applied={"cpu": rng.choice([2000, 1000])}, configured={"cpu": 2000}))
    order = reports[:]
    rng.shuffle(order)
    with ThreadPoolExecutor(THREADS) as pool:
        answers = list(pool.map(lambda body: send(api, body), order))
    assert {a.status for a in answers} <= {200, 422}
    assert all(a.body["rejection"]["code"] == "stale" for a in answers if a.status == 422)
    newest = reports[-1]
    got = allocation(api, allocation_id_for("k8s", "res-1")).body
    assert got["observedAt"] == newest["resource"]["observedAt"]
    # the state equals what the newest report alone would give
    expected = send(api, {**f.report("solo", resourceRef="res-solo"),
                          "resource": {**newest["resource"], "resourceRef": "res-solo"}}).body
    assert got["lifecycle"] == expected["lifecycle"]
    solo = allocation(api, expected["allocationId"]).body
    assert got["reasons"] == solo["reasons"]
    # the newest report was accepted (whatever order), and every replay returns what its first answer was
    by_request = {a.body["requestId"]: a for a in answers}
    assert by_request["r39"].status == 200
    with ThreadPoolExecutor(THREADS) as pool:
        replays = list(pool.map(lambda body: send(api, body), order))
    for replay in replays:
        first = by_request[replay.body["requestId"]]
        assert (replay.status, replay.body) == (first.status, first.body)


def test_identical_concurrent_requests_get_the_identical_result(api):
    bind(api)
    body = f.report("same-request")
    with ThreadPoolExecutor(THREADS) as pool:
        answers = list(pool.map(lambda _: send(api, body), range(THREADS * 2)))
    assert len({(a.status, repr(sorted(a.body.items()))) for a in answers}) == 1
    assert answers[0].status == 200 and answers[0].body["revision"] == 1


def test_concurrent_reuse_of_one_request_id_keeps_exactly_one(api):
    bind(api)
    bodies = [f.report("contested", observedAt=stamp(i), paused=bool(i % 2)) for i in range(THREADS)]
    with ThreadPoolExecutor(THREADS) as pool:
        answers = list(pool.map(lambda b: send(api, b), bodies))
    winners = [a for a in answers if a.status == 200]
    reused = [a for a in answers if a.status == 422]
    assert len(winners) == 1 and len(reused) == THREADS - 1
    assert all(a.body["rejection"]["code"] == "request_id_reused" for a in reused)
    assert allocation(api, winners[0].body["allocationId"]).body["revision"] == 1


def test_concurrent_first_reports_of_many_resources(api):
    bind(api)
    bodies = [f.report(f"r{i}", resourceRef=f"res-{i}") for i in range(32)]
    with ThreadPoolExecutor(THREADS) as pool:
        answers = list(pool.map(lambda b: send(api, b), bodies))
    assert all(a.status == 200 and a.body["revision"] == 1 for a in answers)
    assert len({a.body["allocationId"] for a in answers}) == 32
