"""`make bench-placement`: our Placement API against the real Placement, same client, one run.

Sides:
- the real Placement 16.0.0 (the PyPI wheel in its own venv, sqlite, noauth2, waitress with 8
  threads, mounted at /placement; devkit/placement/reference.py);
- ours: `make run`'s server on DynamoDB Local (devkit/placement/service.py).

Both get the same setup through the API (providers with ample VCPU and MEMORY_MB inventory) and
the same requests from the same client (http.client, one keep-alive connection per thread). The
sides alternate phase by phase (Placement's, then ours), so a change in machine load hits both:
- PUT /placement/allocations/{new consumer} at 1.28 (consumer_generation null), sequential and
  with 8 threads, spread over 16 providers; and with 8 threads on 1 provider (every write races
  on the same provider generation);
- GET /placement/allocations/{consumer}; GET .../resource_providers/{u}/usages; GET /usages.
Per side and operation: successes/s, p50/p99 latency, non-2xx counts. Only 2xx counts as a
success. A 5xx (or a dropped connection) is reported on either side; on ours it makes the exit
status 1 (the real Placement's 5xx under threads are its figures: sqlite "database is locked").

Round trips: ours is run once more through a counting HTTP proxy in front of DynamoDB Local,
and the DynamoDB calls per allocation write are reported by operation (goal: 2); then the same
calls, straight from boto3 on the same store, give the floor.

BENCH_PLACEMENT_N: requests per measured phase (default 400). BENCH_PLACEMENT_THREADS: 8.
BENCH_PLACEMENT_KEEPALIVE=0: a new connection per request instead of keep-alive.
"""

from __future__ import annotations

import collections
import http.client
import json
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from chalicelib.cli import use_local_credentials
from devkit.placement.reference import ReferencePlacement
from devkit.placement.service import start_placement_service
from devkit.stores import describe_selection, start_store

N = int(os.environ.get("BENCH_PLACEMENT_N", "400"))
THREADS = int(os.environ.get("BENCH_PLACEMENT_THREADS", "8"))
KEEPALIVE = os.environ.get("BENCH_PLACEMENT_KEEPALIVE", "1") != "0"
SPREAD_PROVIDERS = 16
PROJECTS = [str(uuid.uuid4()) for _ in range(4)]
USER = str(uuid.uuid4())
NOAUTH_ADMIN_TOKEN = "admin"  # the reference runs noauth2: this is its admin token, no secret
ROUND_TRIP_WRITES = 50


# --- the client ---------------------------------------------------------------------------------


class Client:
    """One keep-alive HTTP/1.1 connection per thread to one side's /placement."""

    def __init__(self, base: str, token: str) -> None:
        parts = urlsplit(base)
        self.host, self.port, self.prefix = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        self.token = token
        self.local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        return conn

    def call(self, method: str, path: str, body: Any = None, version: str = "1.28") -> tuple[int, Any]:
        headers = {"x-auth-token": self.token, "accept": "application/json",
                   "openstack-api-version": f"placement {version}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        conn = self._connection()
        try:
            conn.request(method, self.prefix + path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            conn.close()  # counted as status 0: a failure, never retried (a write may have been applied)
            self.local.conn = None
            return 0, None
        if not KEEPALIVE or response.getheader("connection", "").lower() == "close":
            conn.close()
            self.local.conn = None
        return response.status, (json.loads(raw) if raw else None)


def expect(answer: tuple[int, Any], *statuses: int) -> Any:
    status, body = answer
    if status not in statuses:
        raise RuntimeError(f"setup request answered {status}: {json.dumps(body)[:300]}")
    return body


# --- measurement --------------------------------------------------------------------------------


@dataclass
class Phase:
    side: str
    operation: str
    n: int
    elapsed: float
    latencies: list[float] = field(default_factory=list)  # seconds, successes only
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)

    @property
    def ok(self) -> int:
        return sum(count for status, count in self.statuses.items() if 200 <= status < 300)

    @property
    def per_s(self) -> float:
        return self.ok / self.elapsed if self.elapsed else 0.0

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def errors(self) -> str:
        return ", ".join(f"{count}x{status}" for status, count in sorted(self.statuses.items())
                         if not 200 <= status < 300) or "-"


def measure(side: str, operation: str, requests: list[Callable[[], int]], threads: int) -> Phase:
    phase = Phase(side, operation, len(requests), 0.0)
    lock = threading.Lock()

    def one(request: Callable[[], int]) -> None:
        started = time.perf_counter()
        status = request()
        took = time.perf_counter() - started
        with lock:
            phase.statuses[status] += 1
            if 200 <= status < 300:
                phase.latencies.append(took)

    started = time.perf_counter()
    if threads == 1:
        for request in requests:
            one(request)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, requests))
    phase.elapsed = time.perf_counter() - started
    return phase


# --- the workload -------------------------------------------------------------------------------


def make_providers(client: Client, count: int) -> list[str]:
    providers = []
    for _ in range(count):
        rp = expect(client.call("POST", "/resource_providers", {"name": f"bench-{uuid.uuid4().hex}"}), 200)["uuid"]
        expect(client.call("PUT", f"/resource_providers/{rp}/inventories", {
            "resource_provider_generation": 0,
            "inventories": {"VCPU": {"total": 10_000_000}, "MEMORY_MB": {"total": 1_000_000_000}}}), 200)
        providers.append(rp)
    return providers


def allocate(client: Client, provider: str, consumer: str, project: str) -> Callable[[], int]:
    body = {"allocations": {provider: {"resources": {"VCPU": 1, "MEMORY_MB": 256}}},
            "project_id": project, "user_id": USER, "consumer_generation": None}
    return lambda: client.call("PUT", f"/allocations/{consumer}", body)[0]


class Side:
    """One side's setup (through its API) and its phases, run one at a time so that the two sides
    alternate phase by phase: a change in the machine's load then hits both sides alike."""

    def __init__(self, name: str, client: Client) -> None:
        self.name, self.client = name, client
        self.spread = make_providers(client, SPREAD_PROVIDERS)
        self.hot = make_providers(client, 1)[0]
        self.consumers: list[str] = []
        measure(name, "warm-up", self.writes(20, self.spread), 1)

    def writes(self, count: int, providers: list[str]) -> list[Callable[[], int]]:
        batch = [str(uuid.uuid4()) for _ in range(count)]
        self.consumers.extend(batch)
        return [allocate(self.client, providers[i % len(providers)], c, PROJECTS[i % len(PROJECTS)])
                for i, c in enumerate(batch)]

    def gets(self, paths: list[str]) -> list[Callable[[], int]]:
        return [(lambda path=path: self.client.call("GET", path)[0]) for path in paths]

    def phases(self) -> Iterator[Callable[[], Phase]]:
        yield lambda: measure(self.name, "PUT allocations, sequential", self.writes(N, self.spread), 1)
        yield lambda: measure(self.name, f"PUT allocations, {THREADS} threads", self.writes(N, self.spread), THREADS)
        yield lambda: measure(self.name, f"PUT allocations, {THREADS} threads, 1 provider",
                              self.writes(N, [self.hot]), THREADS)
        yield lambda: measure(self.name, "GET allocations/{c}",
                              self.gets([f"/allocations/{c}" for c in self.consumers[-N:]]), 1)
        yield lambda: measure(self.name, "GET resource_providers/{u}/usages", self.gets(
            [f"/resource_providers/{self.spread[i % len(self.spread)]}/usages" for i in range(N)]), 1)
        yield lambda: measure(self.name, "GET usages?project_id", self.gets(
            [f"/usages?project_id={PROJECTS[i % len(PROJECTS)]}" for i in range(N)]), 1)


def run_alternating(first: Side, second: Side) -> tuple[list[Phase], list[Phase]]:
    firsts: list[Phase] = []
    seconds: list[Phase] = []
    for one, other in zip(first.phases(), second.phases(), strict=True):
        firsts.append(one())
        seconds.append(other())
    return firsts, seconds


# --- round trips: a counting proxy in front of DynamoDB Local ----------------------------------


def items_in(operation: str, body: bytes) -> int:
    """How many items a DynamoDB call names: transaction items, or keys of a batch read."""
    request = json.loads(body or b"{}")
    if operation == "TransactWriteItems":
        return len(request.get("TransactItems", []))
    if operation == "BatchGetItem":
        return sum(len(table.get("Keys", [])) for table in request.get("RequestItems", {}).values())
    return 1


class CountingProxy:
    """Forwards every DynamoDB request to the store and counts them by operation (X-Amz-Target)."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.counts: collections.Counter[str] = collections.Counter()
        self.sizes: dict[str, list[int]] = collections.defaultdict(list)  # items per call, by operation
        self.actions: collections.Counter[str] = collections.Counter()  # transaction actions (Put, Update...)
        lock = threading.Lock()
        target = (parts.hostname, parts.port)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                operation = (self.headers.get("X-Amz-Target") or "?").rsplit(".", 1)[-1]
                with lock:
                    proxy.counts[operation] += 1
                    proxy.sizes[operation].append(items_in(operation, body))
                    if operation == "TransactWriteItems":
                        proxy.actions.update(action for item in json.loads(body)["TransactItems"] for action in item)
                conn = http.client.HTTPConnection(*target, timeout=60)
                try:
                    conn.request("POST", self.path, body=body, headers=dict(self.headers.items()))
                    response = conn.getresponse()
                    payload = response.read()
                finally:
                    conn.close()
                self.send_response(response.status)
                for name, value in response.getheaders():
                    if name.lower() not in ("content-length", "connection", "transfer-encoding", "date", "server"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, name="counting-proxy", daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class RoundTrips:
    per_write: float
    calls: dict[str, float]            # operation -> calls per write
    items: dict[str, float]            # operation -> mean items per call
    actions: dict[str, float]          # transaction action (Put, Update, ...) -> per write


def round_trips_per_write(store_endpoint: str) -> RoundTrips:
    proxy = CountingProxy(store_endpoint)
    service = start_placement_service(proxy.endpoint)
    try:
        client = Client(service.base, service.key)
        providers = make_providers(client, 2)
        for i in range(5):  # warm-up: the server's first requests (key lookup caches and the like)
            allocate(client, providers[i % 2], str(uuid.uuid4()), PROJECTS[0])()
        proxy.counts.clear()
        proxy.sizes.clear()
        proxy.actions.clear()
        statuses = collections.Counter(allocate(client, providers[i % 2], str(uuid.uuid4()), PROJECTS[i % 4])()
                                       for i in range(ROUND_TRIP_WRITES))
        if set(statuses) != {204}:
            raise RuntimeError(f"round-trip phase answered {dict(statuses)}")
        calls = {op: count / ROUND_TRIP_WRITES for op, count in sorted(proxy.counts.items())}
        items = {op: sum(sizes) / len(sizes) for op, sizes in sorted(proxy.sizes.items())}
        actions = {action: count / ROUND_TRIP_WRITES for action, count in sorted(proxy.actions.items())}
        return RoundTrips(sum(proxy.counts.values()) / ROUND_TRIP_WRITES, calls, items, actions)
    finally:
        service.stop()
        proxy.stop()


def dynamodb_floor(store_endpoint: str, batch_keys: int, actions: dict[str, float]) -> Phase:
    """The bare DynamoDB work of one allocation write, straight from boto3, sequential: a consistent
    BatchGetItem of `batch_keys` existing items, then one transaction with the same actions as ours
    (each Update/ConditionCheck on an existing item, each Put a new item, all conditional)."""
    from chalicelib.store.schema import ensure_table
    from devkit.placement.service import store_client

    client, table = store_client(store_endpoint), f"bench-floor-{uuid.uuid4().hex[:8]}"
    ensure_table(client, table)

    def key(pk: str) -> dict[str, Any]:
        return {"pk": {"S": pk}, "sk": {"S": "-"}}

    counts = {action: round(n) for action, n in actions.items()}
    existing = max(batch_keys, counts.get("Update", 0) + counts.get("ConditionCheck", 0))
    for i in range(existing):
        client.put_item(TableName=table, Item={**key(f"E#{i}"), "v": {"N": "0"}, "doc": {"S": "x" * 300}})
    values = {":one": {"N": "1"}, ":cap": {"N": str(10**12)}}

    def transaction(write: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        slot = iter(range(existing))
        for _ in range(counts.get("Update", 0)):
            items.append({"Update": {"TableName": table, "Key": key(f"E#{next(slot)}"),
                                     "UpdateExpression": "SET v = v + :one", "ConditionExpression": "v < :cap",
                                     "ExpressionAttributeValues": values}})
        for _ in range(counts.get("ConditionCheck", 0)):
            items.append({"ConditionCheck": {"TableName": table, "Key": key(f"E#{next(slot)}"),
                                             "ConditionExpression": "v < :cap", "ExpressionAttributeValues": values}})
        items.extend({"Put": {"TableName": table, "Item": {**key(f"W#{write}#{i}"), "doc": {"S": "x" * 300}},
                              "ConditionExpression": "attribute_not_exists(pk)"}} for i in range(counts.get("Put", 0)))
        return items

    def one() -> int:
        client.batch_get_item(RequestItems={table: {
            "Keys": [key(f"E#{i}") for i in range(batch_keys)], "ConsistentRead": True}})
        client.transact_write_items(TransactItems=transaction(uuid.uuid4().hex))
        return 200

    try:
        measure("floor", "warm-up", [one] * 20, 1)
        return measure("DynamoDB floor (boto3)", "the same 2 calls, sequential", [one] * N, 1)
    finally:
        client.delete_table(TableName=table)


# --- report -------------------------------------------------------------------------------------


def table(theirs: list[Phase], ours: list[Phase]) -> str:
    rows = ["| operation | side | n | ok | non-2xx | per s | p50 ms | p99 ms | ours / Placement |",
            "|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for reference, mine in zip(theirs, ours, strict=True):
        ratio = mine.per_s / reference.per_s if reference.per_s else float("nan")
        for phase, cell in ((reference, ""), (mine, f"**{ratio:.2f}x**")):
            rows.append(f"| {phase.operation} | {phase.side} | {phase.n} | {phase.ok} | {phase.errors} | "
                        f"{phase.per_s:.0f} | {phase.percentile(0.50):.1f} | {phase.percentile(0.99):.1f} | {cell} |")
    return "\n".join(rows)


@contextmanager
def reference_placement() -> Iterator[ReferencePlacement]:
    with tempfile.TemporaryDirectory(prefix="bench-placement-") as workdir:
        reference = ReferencePlacement(Path(workdir), threads=THREADS)
        reference.start()
        try:
            yield reference
        finally:
            reference.stop()


def main() -> int:
    use_local_credentials()
    print(describe_selection(), flush=True)
    print(f"{N} requests per phase, {THREADS} threads, {'keep-alive' if KEEPALIVE else 'a connection per request'}; "
          "the sides alternate phase by phase (the real Placement's venv is made once)", flush=True)
    store = start_store()
    try:
        with reference_placement() as reference:
            service = start_placement_service(store.endpoint)
            try:
                theirs, ours = run_alternating(Side("Placement 16.0.0 (sqlite)", Client(reference.base,
                                                                                       NOAUTH_ADMIN_TOKEN)),
                                               Side(f"ours ({store.kind})", Client(service.base, service.key)))
            finally:
                service.stop()
        trips = round_trips_per_write(store.endpoint)
        floor = dynamodb_floor(store.endpoint, round(trips.items.get("BatchGetItem", 1)), trips.actions)
    finally:
        store.stop()

    print()
    print(table(theirs, ours))
    print()
    print(f"ours: DynamoDB round trips per allocation write (new consumer, 1 provider): {trips.per_write:.2f} "
          f"({', '.join(f'{op} {n:.2f} of {trips.items[op]:.1f} items' for op, n in trips.calls.items())}), "
          f"counted at the wire over {ROUND_TRIP_WRITES} writes; transaction actions per write: "
          f"{', '.join(f'{action} {n:.1f}' for action, n in trips.actions.items())}")
    print(f"DynamoDB floor, those calls straight from boto3 on the same store, sequential: {floor.per_s:.0f}/s, "
          f"p50 {floor.percentile(0.5):.1f} ms, p99 {floor.percentile(0.99):.1f} ms "
          f"(ours sequential PUT is {ours[0].per_s / floor.per_s:.2f}x of it)")
    for phase in theirs + ours:
        if any(status >= 500 or status == 0 for status in phase.statuses):
            print(f"5xx or dropped: {phase.side}: {phase.operation}: {phase.errors}")
    # The real Placement's 5xx (sqlite "database is locked" under threads) are its figures, reported
    # above and never counted as successes; ours must have none.
    return 1 if any(status >= 500 or status == 0 for phase in ours for status in phase.statuses) else 0


if __name__ == "__main__":
    sys.exit(main())
