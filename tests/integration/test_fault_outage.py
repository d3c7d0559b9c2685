"""The store fails in the middle of a load run, and comes back.

The service runs as `make run` runs it (its own process, the real handler stack), with
low store timeouts, talking to the integration tier's store through a loopback proxy
(loadtest/proxy.py). The store itself keeps running, so it loses nothing; the proxy
decides what the service sees of it. While concurrent clients send reports, replays,
reused ids, stale reports and reads (loadtest/engine.py):

1. the store is cut off (connections refused and reset): every request that starts
   and ends in that window must be answered 503 `{"code":"unavailable"}`;
2. then the store takes writes but their answers are lost (TransactWriteItems reach it
   and are applied, the service times out): such writes are answered 503 although they
   happened, and some of them must indeed be in the store;
3. the store is back. Every request answered 503 is repeated, as an agent does, until
   it gets an answer; then every check of `make load` must hold: no 5xx but 503, each
   request's answers identical (a write applied during the fault is found, not applied
   twice), per resource revisions 1..n once each, the newest report stored (read
   through the API and from the store directly), lost = 0.
"""

from __future__ import annotations

import threading
import time
import uuid
from urllib.parse import urlsplit

import pytest

from chalicelib.idempotency import request_key
from loadtest.client import Client
from loadtest.engine import GET, REPORT, STALE, WRITE_KINDS, LoadRun, Record, make_plan, verify
from loadtest.harness import allocation_reader, dynamodb, generate_keys, poll, start_service
from loadtest.load import bind_projects
from loadtest.proxy import FaultProxy

pytestmark = pytest.mark.slow

REQUESTS = 1200
RESOURCES = 16
CLIENTS = 8
DOWN_ANSWERS = 60  # requests answered entirely inside the cut-off window
LOST_WRITES = 12  # writes answered entirely while the store's answers to writes were lost
STORE_TIMEOUTS = {
    "RP_STORE_CONNECT_TIMEOUT": "0.5",
    "RP_STORE_READ_TIMEOUT": "1",
    "RP_STORE_MAX_ATTEMPTS": "1",
    "RP_LOG_LEVEL": "WARNING",
}


def _within(records: list[Record], start: float, end: float) -> list[Record]:
    return [r for r in records if r.started >= start and r.finished <= end]


def test_store_outage_in_the_middle_of_a_load_run(store_server, tmp_path):
    table = f"rp-fault-{uuid.uuid4().hex[:10]}"
    upstream = urlsplit(store_server.endpoint)
    assert upstream.hostname in ("127.0.0.1", "localhost")
    proxy = FaultProxy(upstream.port or 80).start()
    keys = generate_keys()
    service = None
    loader: threading.Thread | None = None
    run: LoadRun | None = None
    try:
        service = start_service(
            keys, store_endpoint=proxy.endpoint, extra_env={"RP_TABLE_NAME": table, **STORE_TIMEOUTS},
            log_dir=tmp_path,
        )
        bind_projects(service.base_url, keys["service"])
        plan = make_plan("fault", REQUESTS, RESOURCES, seed=11)
        run = LoadRun(service.base_url, keys["k8s"], plan, CLIENTS, seed=11)
        loader = threading.Thread(target=run.run, args=(time.monotonic() + 240,), daemon=True)
        loader.start()
        assert poll(lambda: run.completed >= REQUESTS // 5, 120), "the load did not get going"

        # 1. The store is cut off.
        proxy.cut()
        cut_at = time.monotonic()
        assert poll(lambda: len(_within(run.records_since(0), cut_at, time.monotonic())) >= DOWN_ANSWERS, 30), (
            "too few requests answered while the store was cut off"
        )
        lost_at = time.monotonic()

        # 2. Writes reach the store, their answers do not come back.
        proxy.lose_replies()
        lost_from = time.monotonic()

        def lost_writes() -> list[Record]:
            return [r for r in _within(run.records_since(0), lost_from, time.monotonic())
                    if r.kind in WRITE_KINDS and r.status == 503]

        assert poll(lambda: len(lost_writes()) >= LOST_WRITES, 60), "too few writes during the lost answers"
        restore_at = time.monotonic()

        # 3. The store is back; the load goes on to its end.
        proxy.restore()
        loader.join(timeout=300)
        assert not loader.is_alive(), "the load run did not end"

        records = run.records_since(0)
        down = _within(records, cut_at, lost_at)
        wrong = [r for r in down if (r.status, r.raw) != (503, b'{"code":"unavailable"}')]
        assert not wrong, f"{len(wrong)} of {len(down)} requests during the outage were not 503: {wrong[:3]}"
        assert len(down) >= DOWN_ANSWERS
        assert {r.kind for r in down} >= {REPORT, GET}, "the outage saw reports and reads"

        # Writes answered 503 while their answers were lost: some were applied all the same.
        during_loss = [r for r in _within(records, lost_from, restore_at) if r.kind in WRITE_KINDS]
        unavailable = [r for r in during_loss if r.status == 503]
        store = dynamodb(store_server.endpoint)
        applied = [
            r for r in unavailable
            if store.get_item(TableName=table, Key=request_key("k8s", "report", r.request_id),
                              ConsistentRead=True).get("Item")
        ]
        assert len(unavailable) >= LOST_WRITES
        assert applied, "no write was applied while its answer was lost: the fault did not bite"
        # A replay (or a duplicate's twin, or a reused id) finds a saved result without writing, so
        # it may be answered while writes are lost; a first report or a stale one needs a write.
        answered = [r for r in during_loss if r.status != 503 and r.kind in (REPORT, STALE)]
        assert not answered, f"reports answered while no write could be: {answered[:3]}"

        # Repeat every 503 until answered; then everything converges with nothing lost or doubled.
        remaining = run.converge(attempts=20, seconds=120)
        assert remaining == 0, f"{remaining} requests still unanswered after the store came back"
        reader = Client(service.base_url, keys["k8s"])
        try:
            verdict = verify(run, allocation_reader(store_server.endpoint, table),
                             lambda a: reader.get(run.allocation_path(a)))
        finally:
            reader.close()
        repeated = sum(1 for r in run.records_since(0) if r.phase == "converge")
        print(
            f"\nfault: {len(records)} requests, {len(down)} during the cut-off (all 503),"
            f" {len(unavailable)} writes answered 503 while answers were lost ({len(applied)} of them applied),"
            f" {repeated} repeats to converge, {verdict.figures.get('resources')} resources checked,"
            f" lost = {verdict.lost}"
        )
        assert verdict.ok, "\n".join(verdict.problems[:30])
        assert service.child.alive(), service.child.log_tail()
    finally:
        if run is not None:
            run.stop()
        if loader is not None:
            loader.join(timeout=60)
        if service is not None:
            service.stop()
        proxy.close()
