"""The store fails in the middle of a load run, and comes back.

The service runs as `make run` runs it (its own process, the real handler stack), with
low store timeouts, talking to its store through a loopback proxy (loadtest/proxy.py).
While concurrent clients send reports, replays, reused ids, stale reports and reads
(loadtest/engine.py), two variants, chosen by the integration tier's store (RP_TEST_STORE),
and the test prints which one ran:

`restart` (DynamoDB Local): a dedicated DynamoDB Local for this test, its database on disk
(`-dbPath`, SQLite) in the test's tmp dir, `-sharedDb`.

1. the store process is killed and started again. The proxy first fences the store off
   (nothing the store answers from now on reaches the service), one consistent read straight
   to the store drains DynamoDB Local's SQLite queue, then the java process is SIGKILLed by
   its PID (a crash: a transaction in flight is rolled back by SQLite's journal on restart)
   and waited for; the proxy passes through again, so the service meets the dead port
   (refused). Every request that starts and ends in that window (fence to restart) must be
   answered 503 `{"code":"unavailable"}`. Then the store is started again on the same
   dbPath and the same port, polled until it answers, and every write the service had
   acknowledged before the kill must be in it with the result that was answered.
   Why the fence and the drain: DynamoDB Local answers a TransactWriteItems before its
   COMMIT has run (it queues the COMMIT on its SQLite thread without waiting), so killing
   it under traffic - SIGKILL every time, SIGTERM sometimes - loses the last acknowledged
   write, which real DynamoDB never does. Draining first keeps "acknowledged = durable".
2. the store takes writes but their answers are lost (proxy: TransactWriteItems reach it
   and are applied, the service times out): such writes are answered 503 although they
   happened, and some of them must indeed be in the store;
3. the store is back. Every request answered 503 is repeated, as an agent does, until
   it gets an answer; then every check of `make load` must hold: no 5xx but 503, each
   request's answers identical (a write applied during the fault is found, not applied
   twice), per resource revisions 1..n once each, the newest report stored (read
   through the API and from the store directly), lost = 0.

`proxy` (moto, LocalStack): moto in memory cannot be restarted without losing everything, so
the store keeps running and the proxy cuts it off instead (connections refused and reset)
for step 1; steps 2 and 3 are the same.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from urllib.parse import urlsplit

import pytest

from chalicelib.store.saved_results import request_key
from loadtest.client import Client
from loadtest.engine import DUP, GET, REPLAY, REPORT, STALE, WRITE_KINDS, LoadRun, Record, make_plan, verify
from loadtest.harness import allocation_reader, dynamodb, generate_keys, poll, start_service
from loadtest.load import bind_projects
from loadtest.proxy import FaultProxy
from tests.support.stores import (
    STOP_TIMEOUT,
    StoreServer,
    StoreUnavailable,
    selected_kind,
    start_dynamodb_local,
)

pytestmark = pytest.mark.slow

REQUESTS = 1200
RESOURCES = 16
CLIENTS = 8
DOWN_ANSWERS = 60  # requests answered entirely inside the outage window
LOST_WRITES = 12  # writes answered entirely while the store's answers to writes were lost
BACKOFF_AFTER_503 = 0.25  # per client, as an agent backs off: the outage does not burn the whole plan
RESTART_ATTEMPTS = 3  # the port is free once java is gone; a few tries in case another socket grabbed it
STORE_TIMEOUTS = {
    "RP_STORE_CONNECT_TIMEOUT": "0.5",
    "RP_STORE_READ_TIMEOUT": "1",
    "RP_STORE_MAX_ATTEMPTS": "1",
    "RP_LOG_LEVEL": "WARNING",
}
RESTART, PROXY = "restart", "proxy"


def _within(records: list[Record], start: float, end: float) -> list[Record]:
    return [r for r in records if r.started >= start and r.finished <= end]


def _kill(store: StoreServer) -> None:
    """SIGKILL the store's own java process and wait (bounded) until it has exited."""
    assert store.pid is not None and store.process is not None
    os.kill(store.pid, signal.SIGKILL)
    store.process.wait(timeout=STOP_TIMEOUT)
    store.stop()  # nothing left to stop; unregisters its atexit hook


def _restart(db_path, port: int) -> StoreServer:
    """The same database on the same port; start_dynamodb_local polls until ListTables answers."""
    for attempt in range(1, RESTART_ATTEMPTS + 1):
        try:
            return start_dynamodb_local(db_path=db_path, port=port)
        except StoreUnavailable:
            if attempt == RESTART_ATTEMPTS:
                raise
    raise AssertionError("unreachable")


def _unacknowledged(store_endpoint: str, table: str, records: list[Record]) -> tuple[int, list[str]]:
    """Every report answered 200/422 must have its saved result in the store, equal to the answer."""
    client = dynamodb(store_endpoint)
    checked, missing = 0, []
    for r in records:
        if r.kind not in (REPORT, DUP, REPLAY, STALE) or r.status not in (200, 422) or r.request_id is None:
            continue
        checked += 1
        item = client.get_item(TableName=table, Key=request_key("k8s", "report", r.request_id),
                               ConsistentRead=True).get("Item")
        saved = (int(item["status"]["N"]), json.loads(item["body"]["S"])) if item else None
        if saved != (r.status, r.parsed):
            missing.append(f"{r.kind} {r.request_id}: answered {r.status} {r.raw[:120]!r}, stored {saved}")
    client.close()
    return checked, missing


def test_store_outage_in_the_middle_of_a_load_run(request, tmp_path):
    kind, _ = selected_kind()
    db_path = tmp_path / "dynamodb-local"
    if kind == "dynamodb-local":
        variant = RESTART
        store = start_dynamodb_local(db_path=db_path)  # dedicated: this test stops it
    else:
        variant = PROXY
        store = request.getfixturevalue("store_server")  # moto in memory: never stopped here
    table = f"rp-fault-{uuid.uuid4().hex[:10]}"
    upstream = urlsplit(store.endpoint)
    assert upstream.hostname in ("127.0.0.1", "localhost")
    store_port = upstream.port or 80
    proxy = FaultProxy(store_port).start()
    keys = generate_keys()
    service = None
    loader: threading.Thread | None = None
    run: LoadRun | None = None
    restart_seconds = 0.0
    durable_checked = 0
    try:
        service = start_service(
            keys, store_endpoint=proxy.endpoint, extra_env={"RP_TABLE_NAME": table, **STORE_TIMEOUTS},
            log_dir=tmp_path,
        )
        bind_projects(service.base_url, keys["service"])
        plan = make_plan("fault", REQUESTS, RESOURCES, seed=11)
        run = LoadRun(service.base_url, keys["k8s"], plan, CLIENTS, seed=11, backoff_after_503=BACKOFF_AFTER_503)
        loader = threading.Thread(target=run.run, args=(time.monotonic() + 240,), daemon=True)
        loader.start()
        assert poll(lambda: run.completed >= REQUESTS // 5, 120), "the load did not get going"

        def answered_since(start: float) -> int:
            return len(_within(run.records_since(0), start, time.monotonic()))

        # 1. The store goes away.
        proxy.cut()  # restart: the fence (nothing answered by the store from now on reaches the service)
        down_from = time.monotonic()
        if variant == RESTART:
            direct = dynamodb(store.endpoint)
            direct.get_item(TableName=table, Key=request_key("k8s", "report", "drain"), ConsistentRead=True)
            direct.close()  # answered after every COMMIT queued before it: all acknowledged writes are on disk
            _kill(store)
            killed_at = time.monotonic()
            proxy.restore()  # pass-through again: the service's connections now meet the dead port
        assert poll(lambda: answered_since(down_from) >= DOWN_ANSWERS, 30), (
            "too few requests answered while the store was down"
        )
        down_to = time.monotonic()
        if variant == RESTART:
            store = _restart(db_path, store_port)
            restart_seconds = time.monotonic() - down_to
            assert store.endpoint == f"http://127.0.0.1:{store_port}"
            # Acknowledged before the kill: in the store after the restart, as answered.
            acked = [r for r in run.records_since(0) if r.finished < killed_at]
            durable_checked, missing = _unacknowledged(store.endpoint, table, acked)
            assert durable_checked and not missing, (
                f"{len(missing)} of {durable_checked} acknowledged writes lost by the restart: {missing[:3]}"
            )

        # 2. Writes reach the store, their answers do not come back.
        proxy.lose_replies()
        lost_from = time.monotonic()

        def lost_writes() -> list[Record]:
            return [r for r in _within(run.records_since(0), lost_from, time.monotonic())
                    if r.kind in WRITE_KINDS and r.status == 503]

        assert poll(lambda: len(lost_writes()) >= LOST_WRITES, 60), (
            f"too few writes during the lost answers: {len(lost_writes())} in"
            f" {len(_within(run.records_since(0), lost_from, time.monotonic()))} requests,"
            f" load {'running' if loader.is_alive() else 'ended'} at {run.completed} requests"
        )
        restore_at = time.monotonic()

        # 3. The store is back; the load goes on to its end.
        proxy.restore()
        assert loader.is_alive(), "the load ended before the store came back: the outage was not in the middle"
        loader.join(timeout=300)
        assert not loader.is_alive(), "the load run did not end"

        records = run.records_since(0)
        down = _within(records, down_from, down_to)
        wrong = [r for r in down if (r.status, r.raw) != (503, b'{"code":"unavailable"}')]
        assert not wrong, f"{len(wrong)} of {len(down)} requests during the outage were not 503: {wrong[:3]}"
        assert len(down) >= DOWN_ANSWERS
        assert {r.kind for r in down} >= {REPORT, GET}, "the outage saw reports and reads"

        # Writes answered 503 while their answers were lost: some were applied all the same.
        during_loss = [r for r in _within(records, lost_from, restore_at) if r.kind in WRITE_KINDS]
        unavailable = [r for r in during_loss if r.status == 503]
        direct = dynamodb(store.endpoint)
        applied = [
            r for r in unavailable
            if direct.get_item(TableName=table, Key=request_key("k8s", "report", r.request_id),
                               ConsistentRead=True).get("Item")
        ]
        direct.close()
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
            verdict = verify(run, allocation_reader(store.endpoint, table),
                             lambda a: reader.get(run.allocation_path(a)))
        finally:
            reader.close()
        repeated = sum(1 for r in run.records_since(0) if r.phase == "converge")
        how = (
            f"restart: DynamoDB Local (dbPath) SIGKILLed by PID and started again on port {store_port}"
            f" in {restart_seconds:.1f}s, {durable_checked} writes acknowledged before the kill found intact"
            if variant == RESTART else
            f"proxy only: {kind} kept running, cut off by the proxy (it cannot be restarted without losing data)"
        )
        print(
            f"\nfault variant {how}\n"
            f"fault: {len(records)} requests, {len(down)} during the outage (all 503),"
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
        if variant == RESTART:
            store.stop()
