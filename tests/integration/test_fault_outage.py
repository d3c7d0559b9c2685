"""The store fails in the middle of a load run, and comes back.

The service runs as `make run` runs it (its own process, the real handler stack), with
low store timeouts, talking to its store through a loopback proxy (loadtest/proxy.py).
While concurrent clients send reports, replays, reused ids, stale reports and reads
(loadtest/engine.py), the test drives the fault itself, phase by phase, each begun and ended
by an explicit signal (proxy.cut / lose_replies / restore, the store's kill and restart).
Nothing is judged by clock windows: what must hold during a phase is checked on probe
requests the test itself sends after the phase began and answered before the test ends it,
and on the load's records in the order they were answered (list positions at the signals).
Two variants, chosen by the integration tier's store (RP_TEST_STORE); the test prints which
one ran:

`restart` (DynamoDB Local): a dedicated DynamoDB Local for this test, its database on disk
(`-dbPath`, SQLite) in the test's tmp dir, `-sharedDb`.

1. the store process is killed and started again. The proxy first fences the store off
   (nothing the store answers from now on reaches the service), one consistent read straight
   to the store drains DynamoDB Local's SQLite queue, then the java process is SIGKILLed by
   its PID (a crash: a transaction in flight is rolled back by SQLite's journal on restart)
   and waited for; the proxy passes through again, so the service meets the dead port
   (refused). Every probe (new report, replay, read) is answered 503 `{"code":"unavailable"}`.
   Then the store is started again on the same dbPath and the same port, polled until it
   answers, and every write the load had acknowledged before the fence must be in it with
   the result that was answered.
   Why the fence and the drain: DynamoDB Local answers a TransactWriteItems before its
   COMMIT has run (it queues the COMMIT on its SQLite thread without waiting), so killing
   it under traffic - SIGKILL every time, SIGTERM sometimes - loses the last acknowledged
   write, which real DynamoDB never does. Draining first keeps "acknowledged = durable".
2. the store takes writes but their answers are lost (proxy: TransactWriteItems reach it
   and are applied, the service times out): every probe report is answered 503 although
   it was applied (its saved result is in the store), while a replay, which needs no write,
   is answered;
3. the store is back. Each probe is repeated and gets the result that was saved for it,
   applied once; every request of the load answered 503 is repeated, as an agent does, until
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
from typing import Any
from urllib.parse import urlsplit

import pytest

from chalicelib.store.saved_results import request_key
from loadtest.client import Answer, Client
from loadtest.engine import BOUND_REFS, DUP, REPLAY, REPORT, STALE, LoadRun, Record, make_plan, verify
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

# pytest-timeout's 300 s is a hang guard, and this run (1,200 requests, a store killed and restarted) is the
# longest of the suite: on a machine loaded many times over it needs more than that without anything being
# wrong. Its own waits are bounded by HANG_GUARD; this only keeps a real hang from running forever.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

REQUESTS = 1200
RESOURCES = 16
CLIENTS = 8
DOWN_PROBES = 20  # of each kind (new report, replay, read) while the store is down
LOST_PROBES = 6  # new reports while the store's answers to writes are lost
BACKOFF_AFTER_503 = 0.25  # per client, as an agent backs off: the outage does not burn the whole plan
RESTART_ATTEMPTS = 3  # the port is free once java is gone; a few tries in case another socket grabbed it
HANG_GUARD = 300.0  # seconds: only to fail instead of hanging when an awaited event never comes
STORE_TIMEOUTS = {
    "RP_STORE_CONNECT_TIMEOUT": "0.5",
    "RP_STORE_READ_TIMEOUT": "1",
    "RP_STORE_MAX_ATTEMPTS": "1",
    "RP_LOG_LEVEL": "WARNING",
}
RESTART, PROXY = "restart", "proxy"
UNAVAILABLE = (503, b'{"code":"unavailable"}')
REPORTS = "/resource-provisioning/k8s/reports"


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


def _saved(store_endpoint: str, table: str, request_id: str) -> tuple[int, Any] | None:
    """The result the store saved for a report's requestId, read straight from the store."""
    client = dynamodb(store_endpoint)
    try:
        item = client.get_item(TableName=table, Key=request_key("k8s", "report", request_id),
                               ConsistentRead=True).get("Item")
    finally:
        client.close()
    return (int(item["status"]["N"]), json.loads(item["body"]["S"])) if item else None


def _unacknowledged(store_endpoint: str, table: str, records: list[Record]) -> tuple[int, list[str]]:
    """Every report answered 200/422 must have its saved result in the store, equal to the answer."""
    checked, missing = 0, []
    for r in records:
        if r.kind not in (REPORT, DUP, REPLAY, STALE) or r.status not in (200, 422) or r.request_id is None:
            continue
        checked += 1
        saved = _saved(store_endpoint, table, r.request_id)
        if saved != (r.status, r.parsed):
            missing.append(f"{r.kind} {r.request_id}: answered {r.status} {r.raw[:120]!r}, stored {saved}")
    return checked, missing


class Probe:
    """The test's own requests, outside the load's plan: resources `probe-<n>` of a bound ref."""

    def __init__(self, base_url: str, key: str) -> None:
        self.client = Client(base_url, key, timeout=60)
        self.sent: dict[str, dict[str, Any]] = {}

    def report(self, name: str, request_id: str | None = None) -> Answer:
        message = self.sent.get(request_id or "") or {
            "requestId": request_id or f"probe-{name}-{uuid.uuid4().hex[:8]}",
            "resource": {"resourceRef": f"probe-{name}", "offeringRef": "probe", "providerProjectRef": BOUND_REFS[0],
                         "providerState": "OK", "paused": False, "nativeScope": "ns", "configured": {"cpu": 1},
                         "applied": {"cpu": 1}, "observedAt": "2026-03-01T10:00:00Z"},
        }
        self.sent[message["requestId"]] = message
        return self.client.post(REPORTS, message)

    def last_request_id(self) -> str:
        return list(self.sent)[-1]

    def read(self, allocation_id: str) -> Answer:
        return self.client.get(f"/resource-provisioning/k8s/allocations/{allocation_id}")

    def close(self) -> None:
        self.client.close()


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
    probe: Probe | None = None
    loader: threading.Thread | None = None
    run: LoadRun | None = None
    durable_checked = 0
    try:
        service = start_service(
            # The probe's keep-alive connection idles while the store restarts (slow on a loaded machine):
            # the dev server's idle timeout must not close it, which is not what this test is about.
            keys, store_endpoint=proxy.endpoint,
            extra_env={"RP_TABLE_NAME": table, "RP_DEV_CHANNEL_TIMEOUT": "900", **STORE_TIMEOUTS},
            log_dir=tmp_path,
        )
        bind_projects(service.base_url, keys["service"])
        probe = Probe(service.base_url, keys["k8s"])
        first = probe.report("0")  # acknowledged before the outage: replayed and read during it
        assert first.status == 200, first.raw
        first_id, first_allocation = probe.last_request_id(), first.body["allocationId"]

        plan = make_plan("fault", REQUESTS, RESOURCES, seed=11)
        run = LoadRun(service.base_url, keys["k8s"], plan, CLIENTS, seed=11, backoff_after_503=BACKOFF_AFTER_503)
        loader = threading.Thread(target=run.run, args=(time.monotonic() + 3600,), daemon=True)
        loader.start()
        assert poll(lambda: run.completed >= REQUESTS // 5, HANG_GUARD), "the load did not get going"

        # 1. The store goes away (signal: the fence), then dies (restart) or stays cut off (proxy).
        acknowledged = run.records_since(0)  # every one of these was answered before the fence
        proxy.cut()
        if variant == RESTART:
            direct = dynamodb(store.endpoint)
            direct.get_item(TableName=table, Key=request_key("k8s", "report", "drain"), ConsistentRead=True)
            direct.close()  # answered after every COMMIT queued before it: all acknowledged writes are on disk
            _kill(store)
            proxy.restore()  # pass-through again: the service's connections now meet the dead port
        down = []
        for i in range(DOWN_PROBES):
            down += [("report", probe.report(f"down-{i}")), ("replay", probe.report("0", request_id=first_id)),
                     ("read", probe.read(first_allocation))]
        wrong = [(what, a.status, a.raw[:120]) for what, a in down if (a.status, a.raw) != UNAVAILABLE]
        assert not wrong, f"{len(wrong)} of {len(down)} probes while the store was down were not 503: {wrong[:3]}"
        load_during_outage = len(run.records_since(len(acknowledged)))
        if variant == RESTART:
            store = _restart(db_path, store_port)  # signal: the store is back (it answered ListTables)
            assert store.endpoint == f"http://127.0.0.1:{store_port}"
            durable_checked, missing = _unacknowledged(store.endpoint, table, acknowledged)
            assert durable_checked and not missing, (
                f"{len(missing)} of {durable_checked} acknowledged writes lost by the restart: {missing[:3]}"
            )

        # 2. Writes reach the store, their answers do not come back (signal: lose_replies).
        proxy.lose_replies()
        lost = [(probe.report(f"lost-{i}"), probe.last_request_id()) for i in range(LOST_PROBES)]
        replay_while_lost = probe.report("0", request_id=first_id)
        applied = {request_id: _saved(store.endpoint, table, request_id) for _, request_id in lost}

        # 3. The store is back (signal: restore); the load goes on to its end.
        proxy.restore()
        assert [(a.status, a.raw) for a, _ in lost] == [UNAVAILABLE] * LOST_PROBES, (
            "a write was answered while the store's answers to writes were lost"
        )
        missing_writes = [request_id for request_id, saved in applied.items() if saved is None]
        assert not missing_writes, f"writes answered 503 but not applied although they reached it: {missing_writes}"
        assert (replay_while_lost.status, replay_while_lost.body) == (first.status, first.body), (
            "a replay needs no write: it is answered even while the answers to writes are lost"
        )
        for _, request_id in lost:
            repeat = probe.report("", request_id=request_id)
            assert (repeat.status, repeat.body) == applied[request_id], "the repeat did not find the applied write"
            assert repeat.body["revision"] == 1
            read = probe.read(repeat.body["allocationId"])
            assert (read.status, read.body["revision"]) == (200, 1)

        loader.join(timeout=HANG_GUARD)
        assert not loader.is_alive(), "the load run did not end"
        records = run.records_since(0)
        assert load_during_outage and any(r.status == 503 for r in records[len(acknowledged):]), (
            "the load never met the outage: it was not in the middle of the run"
        )

        # Repeat every 503 until answered; then everything converges with nothing lost or doubled.
        remaining = run.converge(attempts=20, seconds=HANG_GUARD)
        assert remaining == 0, f"{remaining} requests still unanswered after the store came back"
        reader = Client(service.base_url, keys["k8s"])
        try:
            verdict = verify(run, allocation_reader(store.endpoint, table),
                             lambda a: reader.get(run.allocation_path(a)))
        finally:
            reader.close()
        repeated = sum(1 for r in run.records_since(0) if r.phase == "converge")
        how = (
            f"restart: DynamoDB Local (dbPath) SIGKILLed by PID and started again on port {store_port},"
            f" {durable_checked} writes acknowledged before the fence found intact"
            if variant == RESTART else
            f"proxy only: {kind} kept running, cut off by the proxy (it cannot be restarted without losing data)"
        )
        print(
            f"\nfault variant {how}\n"
            f"fault: {len(records)} load requests ({load_during_outage} answered while the store was down),"
            f" {len(down)} probes during the outage (all 503), {LOST_PROBES} writes answered 503 while answers"
            f" were lost (all applied, found once on repeat), {repeated} repeats to converge,"
            f" {verdict.figures.get('resources')} resources checked, lost = {verdict.lost}"
        )
        assert verdict.ok, "\n".join(verdict.problems[:30])
        assert service.child.alive(), service.child.log_tail()
    finally:
        if run is not None:
            run.stop()
        if loader is not None:
            loader.join(timeout=60)
        if probe is not None:
            probe.close()
        if service is not None:
            service.stop()
        proxy.close()
        if variant == RESTART:
            store.stop()
