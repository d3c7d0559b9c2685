"""`make bench-placement`: our Placement API against the real Placement, same client, one run.

Sides (all started and emptied here):
- the real Placement 16.0.0 on PostgreSQL (Debian's package, a throw-away cluster on a loopback
  port; devkit/placement/postgres.py) behind gunicorn, one worker per core: Placement as operators
  run it, the reference the ratios are against;
- the real Placement on sqlite behind waitress: the second row;
- ours: `make run`'s server on DynamoDB Local (devkit/placement/service.py).

Every side gets the same setup through its own API (concurrently) and BENCH_PLACEMENT_WARMUP unmeasured
requests (DynamoDB Local is a JVM that needs a few hundred calls to warm), the same requests from the same
client (http.client, one keep-alive connection per thread), operation by operation in turn, for
BENCH_PLACEMENT_ROUNDS rounds; the table quotes medians across rounds. Only 2xx counts as a
success. An operation a side does not support yet prints "unsupported" for that side. A 5xx (or a
dropped connection) on our side makes the exit status 1; the references' are their figures.

The operations: PUT /allocations (sequential, threads, one hot provider), PUT /traits, the reads
(allocations, usages, the provider list with filters, traits, aggregates) sequential and threaded;
Nova's boot query over BENCH_PLACEMENT_TREES compute trees; the wide tree of bug 2070257; a
reshape of BENCH_PLACEMENT_RESHAPE_CONSUMERS consumers. Then our DynamoDB round trips per
allocation write and per reshape, counted at the wire, and the write's calls replayed through the
service's own DynamoDB client: the floor; and ours alone behind the counting proxy answering Nova's boot
query over the smallest tree count:
DynamoDB calls and read units per query (`python -m bench.placement --candidates` runs only that, for every tree count).
Then the allocation write with Keystone tokens (bench/placement_keystone.py): the cost of a token's
first validation, the cache's hit rate, and that a cached validation adds no round trip.
Variables: docs/configuration.md; what each figure means: docs/placement-conformance.md.
"""

from __future__ import annotations

import collections
import functools
import http.client
import itertools
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
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

from bench import placement_keystone
from bench.processes import tree_cpu_seconds
from chalicelib.cli import use_local_credentials
from devkit.placement.postgres import Postgres
from devkit.placement.postgres import install as install_postgres
from devkit.placement.reference import ReferencePlacement
from devkit.placement.service import start_placement_service
from devkit.stores import describe_selection, start_store

N = int(os.environ.get("BENCH_PLACEMENT_N", "400"))
THREADS = int(os.environ.get("BENCH_PLACEMENT_THREADS", "8"))
ROUNDS = int(os.environ.get("BENCH_PLACEMENT_ROUNDS", "3"))
TREES = [int(n) for n in os.environ.get("BENCH_PLACEMENT_TREES", "1000,10000").split(",") if n]
CANDIDATE_N = int(os.environ.get("BENCH_PLACEMENT_CANDIDATE_N", "100"))
RESHAPE_CONSUMERS = int(os.environ.get("BENCH_PLACEMENT_RESHAPE_CONSUMERS", "500"))
REFERENCE_THREADS = int(os.environ.get("BENCH_PLACEMENT_REFERENCE_THREADS", "4"))
WIDE_N = 5
# Our server processes on one table, behind one client (`Client`): as many as the PostgreSQL reference's
# gunicorn workers (one per core), each of which, like an AWS Lambda instance, serves requests in one process.
SERVERS = int(os.environ.get("BENCH_PLACEMENT_SERVERS", str(os.cpu_count() or 2)))
# The references to run: the PostgreSQL one (the ratios' anchor) and the sqlite second row; "postgresql"
# alone halves a full run (sqlite seeds 10,000 trees through "database is locked" retries, ~15 minutes).
REFERENCES = [r.strip() for r in os.environ.get("BENCH_PLACEMENT_REFERENCES", "postgresql,sqlite").split(",")]
# Requests each side answers before anything is measured: DynamoDB Local is a JVM, whose calls take twice
# as long until it has compiled its hot paths (a few hundred calls); DynamoDB itself has no such phase.
WARMUP = int(os.environ.get("BENCH_PLACEMENT_WARMUP", "600"))
KEEPALIVE = os.environ.get("BENCH_PLACEMENT_KEEPALIVE", "1") != "0"
SPREAD_PROVIDERS = 16
PROJECTS = [str(uuid.uuid4()) for _ in range(4)]
USER = str(uuid.uuid4())
NOAUTH_ADMIN_TOKEN = "admin"  # the reference runs noauth2: this is its admin token, no secret
ROUND_TRIP_WRITES = 50
# A claim for a new consumer on a provider the server has read before: one transaction (decision 0050); the
# first on a provider reads it first (a BatchGetItem).
WRITE_CALLS = ("TransactWriteItems",)
HELD_TRAIT = "CUSTOM_BENCH_HELD"  # held by half the spread providers (CUSTOM_BENCH_DEV_KIND: by the trees only)


# --- the client ---------------------------------------------------------------------------------


class NoDelayConnection(http.client.HTTPConnection):
    """http.client sends a request's headers and its body in two writes; with Nagle's algorithm on, the body
    then waits for the server's (delayed) ACK of the headers: milliseconds added to every write, on every
    side, that no OpenStack client pays (keystoneauth1's requests/urllib3 sets TCP_NODELAY, as this does)."""

    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Client:
    """One keep-alive HTTP/1.1 connection per thread to one side's /placement; with several servers (`base`
    a list: ours as several processes, as the reference is several gunicorn workers), each new thread's
    connection goes to the next one in turn, as the kernel spreads connections over a server's workers."""

    def __init__(self, base: str | list[str], token: str) -> None:
        self.servers = [urlsplit(b) for b in ([base] if isinstance(base, str) else base)]
        self.prefix = self.servers[0].path
        self.token = token
        self.local = threading.local()
        self._turn = itertools.count()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            server = self.servers[next(self._turn) % len(self.servers)]
            conn = self.local.conn = NoDelayConnection(server.hostname or "127.0.0.1", server.port or 80, timeout=60)
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

    def setup(self, method: str, path: str, body: Any = None, version: str = "1.28") -> tuple[int, Any]:
        """A setup request (never measured), tried again while the side answers 5xx, drops the
        connection, or loses a provider-generation race (409 concurrent_update, not a consumer's):
        the sqlite reference answers concurrent writes "database is locked" (500), the PostgreSQL
        one runs out of its own retries when many writes hit one provider; both roll back."""
        for attempt in range(SETUP_ATTEMPTS):
            status, answer = self.call(method, path, body, version)
            raced = status == 409 and "placement.concurrent_update" in json.dumps(answer) and \
                "consumer generation" not in json.dumps(answer)
            if status != 0 and status < 500 and not raced:
                break
            time.sleep(0.02 * attempt)  # back off from a locked database; not a synchronisation
        return status, answer


SETUP_ATTEMPTS = 100


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
    cpu_seconds: dict[str, float] = field(default_factory=dict)  # "app"/"store": its processes' CPU in the phase

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

    def cpu_ms(self, part: str) -> float:
        """CPU milliseconds the side's `part` ("app": its servers, "store": its database) spent per
        successful request; nan when not measured."""
        spent = self.cpu_seconds.get(part)
        return 1000 * spent / self.ok if spent is not None and self.ok else float("nan")


@dataclass
class Processes:
    """The pids of a side's servers (`app`) and of its store, read when a phase starts and ends."""
    app: Callable[[], list[int]]
    store: Callable[[], list[int]]

    def cpu_seconds(self) -> dict[str, float]:
        parts = {"app": self.app(), "store": self.store()}  # no pids: not measured (sqlite is in the app)
        spent = {part: tree_cpu_seconds(pids) for part, pids in parts.items() if pids}
        return {part: seconds for part, seconds in spent.items() if seconds is not None}


def measure(side: str, operation: str, requests: list[Callable[[], int]], threads: int,
            processes: Processes | None = None) -> Phase:
    phase = Phase(side, operation, len(requests), 0.0)
    cpu_before = processes.cpu_seconds() if processes else {}
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
    cpu_after = processes.cpu_seconds() if processes else {}
    phase.cpu_seconds = {part: cpu_after[part] - before for part, before in cpu_before.items() if part in cpu_after}
    return phase


# --- the workload -------------------------------------------------------------------------------

UNSUPPORTED = (400, 404, 405, 406)   # a side that answers these to a well-formed request lacks the feature
BOOT_QUERY = ("/allocation_candidates?resources=VCPU:2,MEMORY_MB:4096,DISK_GB:20&limit=1000"
              "&root_required=!COMPUTE_STATUS_DISABLED")
WIDE_QUERY = ("/allocation_candidates?" + "&".join(f"resources{i}=CUSTOM_WIDE:1" for i in range(1, 7))
              + "&group_policy=none&limit=1000")


def make_providers(client: Client, count: int) -> list[str]:
    providers = []
    for _ in range(count):
        rp = expect(client.setup("POST", "/resource_providers", {"name": f"bench-{uuid.uuid4().hex}"}), 200)["uuid"]
        expect(client.setup("PUT", f"/resource_providers/{rp}/inventories", {
            "resource_provider_generation": 0,
            "inventories": {"VCPU": {"total": 10_000_000}, "MEMORY_MB": {"total": 1_000_000_000}}}), 200)
        providers.append(rp)
    return providers


def allocate(client: Client, provider: str, consumer: str, project: str) -> Callable[[], int]:
    body = {"allocations": {provider: {"resources": {"VCPU": 1, "MEMORY_MB": 256}}},
            "project_id": project, "user_id": USER, "consumer_generation": None}
    return lambda: client.call("PUT", f"/allocations/{consumer}", body)[0]


def compute_tree(client: Client, index: int) -> bool:
    """One compute node as Nova reports it: a root with VCPU/MEMORY_MB/DISK_GB and COMPUTE_NODE; every
    tenth with two children holding CUSTOM_BENCH_DEV and a custom trait; every twentieth disabled.
    False when the side lacks what the tree needs (its root is then left flat)."""
    root = expect(client.setup("POST", "/resource_providers", {"name": f"cn-{index}-{uuid.uuid4().hex[:6]}"},
                              version="1.20"), 200)["uuid"]
    expect(client.setup("PUT", f"/resource_providers/{root}/inventories", {
        "resource_provider_generation": 0, "inventories": {
            "VCPU": {"total": 64, "allocation_ratio": 4.0}, "MEMORY_MB": {"total": 262144},
            "DISK_GB": {"total": 4000}}}), 200)
    traits = ["COMPUTE_NODE"] + (["COMPUTE_STATUS_DISABLED"] if index % 20 == 0 else [])
    status, _ = client.setup("PUT", f"/resource_providers/{root}/traits",
                            {"resource_provider_generation": 1, "traits": traits}, version="1.6")
    if status in UNSUPPORTED:
        return False
    if index % 10 == 0:
        for n in range(2):
            status, child = client.setup("POST", "/resource_providers", {
                "name": f"cn-{index}-dev{n}-{uuid.uuid4().hex[:6]}", "parent_provider_uuid": root}, version="1.20")
            if status in UNSUPPORTED:
                return False
            expect(client.setup("PUT", f"/resource_providers/{child['uuid']}/inventories", {
                "resource_provider_generation": 0, "inventories": {"CUSTOM_BENCH_DEV": {"total": 4}}}), 200)
            expect(client.setup("PUT", f"/resource_providers/{child['uuid']}/traits", {
                "resource_provider_generation": 1, "traits": ["CUSTOM_BENCH_DEV_KIND"]}, version="1.6"), 200)
    return True


def seed_trees(client: Client, start: int, stop: int) -> bool:
    """Trees start..stop-1 through the side's API, concurrently (THREADS); True when all were complete."""
    with ThreadPoolExecutor(THREADS) as pool:
        complete = list(pool.map(lambda i: compute_tree(client, i), range(start, stop)))  # every tree, then judge
    return all(complete)


def wide_tree(client: Client) -> bool:
    """Upstream bug 2070257's shape: 1 root, 8 children with one CUSTOM_WIDE each, asked in 6 groups."""
    root = expect(client.setup("POST", "/resource_providers", {"name": f"wide-{uuid.uuid4().hex[:8]}"},
                              version="1.20"), 200)["uuid"]
    for n in range(8):
        status, child = client.setup("POST", "/resource_providers", {
            "name": f"wide-child-{n}-{uuid.uuid4().hex[:6]}", "parent_provider_uuid": root}, version="1.20")
        if status in UNSUPPORTED:
            return False
        expect(client.setup("PUT", f"/resource_providers/{child['uuid']}/inventories", {
            "resource_provider_generation": 0, "inventories": {"CUSTOM_WIDE": {"total": 1}}}), 200)
    return True


def prepare_reshape(client: Client, consumers: int) -> Callable[[], int]:
    """A root with VGPU inventory and `consumers` consumers of one VGPU each, and an empty child;
    returns the reshape (VGPU inventory and every allocation moved to the child) as one request."""
    vcpus = 2 * consumers
    root = expect(client.setup("POST", "/resource_providers", {"name": f"reshape-{uuid.uuid4().hex[:8]}"},
                              version="1.20"), 200)["uuid"]
    expect(client.setup("PUT", f"/resource_providers/{root}/inventories", {
        "resource_provider_generation": 0, "inventories": {"VGPU": {"total": consumers}, "VCPU": {"total": vcpus}}}),
           200)
    status, child = client.setup("POST", "/resource_providers", {"name": f"reshape-child-{uuid.uuid4().hex[:8]}",
                                                                "parent_provider_uuid": root}, version="1.20")
    if status in UNSUPPORTED:
        return lambda: status
    ids = [str(uuid.uuid4()) for _ in range(consumers)]
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(lambda c: expect(client.setup("PUT", f"/allocations/{c}", {
            "allocations": {root: {"resources": {"VGPU": 1, "VCPU": 1}}}, "project_id": PROJECTS[0],
            "user_id": USER, "consumer_generation": None}), 204), ids))
    generation = expect(client.setup("GET", f"/resource_providers/{root}"), 200)["generation"]
    body = {
        "inventories": {
            root: {"resource_provider_generation": generation, "inventories": {"VCPU": {"total": vcpus}}},
            child["uuid"]: {"resource_provider_generation": 0, "inventories": {"VGPU": {"total": consumers}}}},
        "allocations": {c: {"allocations": {root: {"resources": {"VCPU": 1}},
                                            child["uuid"]: {"resources": {"VGPU": 1}}},
                            "project_id": PROJECTS[0], "user_id": USER, "consumer_generation": 1} for c in ids}}
    def reshape() -> int:
        status, answer = client.call("POST", "/reshaper", body, version="1.30")
        if status != 204 and status not in UNSUPPORTED:
            print(f"\nreshape answered {status}: {json.dumps(answer)[:300]}", flush=True)
        return status

    return reshape


@dataclass
class Operation:
    name: str
    requests: Callable[[], list[Callable[[], int]]]   # built when the phase runs
    threads: int = 1
    needs: str = ""                                     # a seeded shape this side may lack


class Side:
    """One side's setup (through its API) and its operations, run one at a time so that the sides
    alternate operation by operation: a change in the machine's load then hits every side alike."""

    def __init__(self, name: str, client: Client, processes: Processes) -> None:
        self.name, self.client, self.processes = name, client, processes
        with ThreadPoolExecutor(THREADS) as pool:
            parts = list(pool.map(lambda _: make_providers(client, SPREAD_PROVIDERS // THREADS or 1), range(THREADS)))
        self.spread = [rp for part in parts for rp in part]
        # Half the spread providers hold a custom trait (the `required` filter a match is read for).
        client.setup("PUT", f"/traits/{HELD_TRAIT}", version="1.6")
        for rp in self.spread[:len(self.spread) // 2]:
            expect(client.setup("PUT", f"/resource_providers/{rp}/traits", {
                "resource_provider_generation": 1, "traits": [HELD_TRAIT]}, version="1.6"), 200)
        self.hot = make_providers(client, 1)[0]
        self.consumers: list[str] = []
        self.trees = 0
        # The custom class and trait the trees use (a side without traits answers 404: it lacks trees).
        for name in ("CUSTOM_BENCH_DEV", "CUSTOM_WIDE"):
            client.setup("PUT", f"/resource_classes/{name}", version="1.7")
        client.setup("PUT", "/traits/CUSTOM_BENCH_DEV_KIND", version="1.6")
        self.lacks: set[str] = set()
        self.aggregate = str(uuid.uuid4())
        status, _ = client.setup("PUT", f"/resource_providers/{self.spread[0]}/aggregates", [self.aggregate],
                                version="1.1")
        if status in UNSUPPORTED:
            self.lacks.add("aggregates")
        self.warm_up()

    def warm_up(self) -> None:
        """WARMUP allocation writes and as many of each read, THREADS at a time, measured nowhere."""
        measure(self.name, "warm-up", self.writes(WARMUP, self.spread), THREADS)
        for _, paths, version in self.reads():
            measure(self.name, "warm-up", self.gets(paths(WARMUP // 4), version), THREADS)

    def grow_to(self, trees: int) -> float:
        """Seeds compute trees up to `trees`; the seconds it took."""
        started = time.perf_counter()
        if not seed_trees(self.client, self.trees, trees):
            self.lacks.add("trees")
        self.trees = trees
        return time.perf_counter() - started

    def writes(self, count: int, providers: list[str]) -> list[Callable[[], int]]:
        batch = [str(uuid.uuid4()) for _ in range(count)]
        self.consumers.extend(batch)
        return [allocate(self.client, providers[i % len(providers)], c, PROJECTS[i % len(PROJECTS)])
                for i, c in enumerate(batch)]

    def gets(self, paths: list[str], version: str = "1.28") -> list[Callable[[], int]]:
        return [functools.partial(self.get, path, version) for path in paths]

    def get(self, path: str, version: str) -> int:
        return self.client.call("GET", path, version=version)[0]

    def put_custom_trait(self) -> int:
        return self.client.call("PUT", f"/traits/CUSTOM_BENCH_{uuid.uuid4().hex[:8].upper()}", version="1.6")[0]

    def read_phase(self, paths: Callable[[int], list[str]], version: str) -> list[Callable[[], int]]:
        return self.gets(paths(N), version)

    def reads(self) -> list[tuple[str, Callable[[int], list[str]], str]]:
        """(name, paths for n requests, microversion) of every read the bench measures."""
        spread, project = self.spread, PROJECTS
        return [
            ("GET allocations/{c}", lambda n: [f"/allocations/{c}" for c in self.consumers[-n:]], "1.28"),
            ("GET resource_providers/{u}/usages",
             lambda n: [f"/resource_providers/{spread[i % len(spread)]}/usages" for i in range(n)], "1.28"),
            ("GET usages?project_id", lambda n: [f"/usages?project_id={project[i % 4]}" for i in range(n)], "1.28"),
            ("GET resource_providers?name", lambda n: [f"/resource_providers?name=bench-none-{i}" for i in range(n)],
             "1.28"),
            ("GET resource_providers?in_tree", lambda n: [f"/resource_providers?in_tree={spread[i % len(spread)]}"
                                                          for i in range(n)], "1.14"),
            ("GET resource_providers?member_of&resources",
             lambda n: [f"/resource_providers?member_of=in:{self.aggregate}&resources=VCPU:1"] * n, "1.4"),
            ("GET resource_providers?required (none hold it)",
             lambda n: ["/resource_providers?required=CUSTOM_BENCH_DEV_KIND"] * n, "1.18"),
            ("GET resource_providers?required (half hold it)",
             lambda n: [f"/resource_providers?required={HELD_TRAIT}"] * n, "1.18"),
            ("GET traits?name=startswith", lambda n: ["/traits?name=startswith:CUSTOM_BENCH"] * n, "1.6"),
            ("GET resource_providers/{u}/traits",
             lambda n: [f"/resource_providers/{spread[i % len(spread)]}/traits" for i in range(n)], "1.6"),
            ("GET resource_providers/{u}/aggregates",
             lambda n: [f"/resource_providers/{spread[i % len(spread)]}/aggregates" for i in range(n)], "1.19"),
        ]

    def operations(self) -> list[Operation]:
        ops = [
            Operation("PUT allocations, sequential", lambda: self.writes(N, self.spread)),
            Operation(f"PUT allocations, {THREADS} threads", lambda: self.writes(N, self.spread), THREADS),
            Operation(f"PUT allocations, {THREADS} threads, 1 provider", lambda: self.writes(N, [self.hot]), THREADS),
            Operation("PUT /traits/{CUSTOM_*}", lambda: [self.put_custom_trait] * N),
        ]
        for name, paths, version in self.reads():
            for threads in (1, THREADS):
                ops.append(Operation(f"{name}, {'sequential' if threads == 1 else f'{threads} threads'}",
                                     functools.partial(self.read_phase, paths, version), threads))
        return ops

    def candidate_operations(self, trees: int) -> list[Operation]:
        return [Operation(f"GET allocation_candidates (Nova's boot query), {trees} trees, {label}",
                          lambda: self.gets([BOOT_QUERY] * CANDIDATE_N, "1.36"), threads, "trees")
                for label, threads in (("sequential", 1), (f"{THREADS} threads", THREADS))]


def run_operation(side: Side, operation: Operation) -> Phase | None:
    """One phase on one side; None when the side lacks the shape or answers the first request with
    a status that says the feature is not there (printed as "unsupported")."""
    if operation.needs and operation.needs in side.lacks:
        return None
    requests = operation.requests()
    first = requests[0]()
    if first in UNSUPPORTED:
        return None
    return measure(side.name, operation.name, requests[1:], operation.threads, side.processes)


# --- round trips: a counting proxy in front of DynamoDB Local ----------------------------------


def items_in(operation: str, body: bytes) -> int:
    """How many items a DynamoDB call names: transaction items, or keys of a batch read."""
    request = json.loads(body or b"{}")
    if operation == "TransactWriteItems":
        return len(request.get("TransactItems", []))
    if operation == "BatchGetItem":
        return sum(len(table.get("Keys", [])) for table in request.get("RequestItems", {}).values())
    return 1


def _consumed_units(payload: bytes) -> float:
    """The capacity units a DynamoDB answer says it consumed (its ConsumedCapacity, when asked for)."""
    try:
        answer = json.loads(payload or b"{}")
    except ValueError:
        return 0.0
    consumed = answer.get("ConsumedCapacity") if isinstance(answer, dict) else None
    entries = consumed if isinstance(consumed, list) else [consumed] if consumed else []
    return sum(float(e.get("CapacityUnits", 0) or 0) for e in entries if isinstance(e, dict))


class CountingProxy:
    """Forwards every DynamoDB request to the store and counts them by operation (X-Amz-Target)."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.counts: collections.Counter[str] = collections.Counter()
        self.sizes: dict[str, list[int]] = collections.defaultdict(list)  # items per call, by operation
        self.actions: collections.Counter[str] = collections.Counter()  # transaction actions (Put, Update...)
        self.units: dict[str, float] = collections.defaultdict(float)  # consumed capacity, by operation
        self.sent: list[tuple[str, bytes]] = []  # (operation, request body) of each call since last cleared
        lock = threading.Lock()
        target = (parts.hostname or "127.0.0.1", parts.port or 80)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # and the answer written at once (buffered): no delayed-ACK stall
            wbufsize = 1 << 16

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                operation = (self.headers.get("X-Amz-Target") or "?").rsplit(".", 1)[-1]
                with lock:
                    proxy.counts[operation] += 1
                    proxy.sizes[operation].append(items_in(operation, body))
                    proxy.sent.append((operation, body))
                    if operation == "TransactWriteItems":
                        proxy.actions.update(action for item in json.loads(body)["TransactItems"] for action in item)
                conn = NoDelayConnection(*target, timeout=60)
                try:
                    conn.request("POST", self.path, body=body, headers=dict(self.headers.items()))
                    response = conn.getresponse()
                    payload = response.read()
                finally:
                    conn.close()
                consumed = _consumed_units(payload)
                if consumed:
                    with lock:
                        proxy.units[operation] += consumed
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

    def reset(self) -> None:
        """Forget every call so far (the measured phase counts from here)."""
        for recorded in (self.counts, self.sizes, self.actions, self.units, self.sent):
            recorded.clear()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class RoundTrips:
    per_write: float
    calls: dict[str, float]            # operation -> calls per write
    items: dict[str, float]            # operation -> mean items per call
    actions: dict[str, float]          # transaction action (Put, Update, ...) -> per write
    recordings: dict[str, list[Recording]]  # "PUT allocations, ..." and READ_FLOORS rows (sequential and
                                            # with THREADS threads) -> the calls their floors replay


# One request's DynamoDB calls as sent at the wire ((operation, body) in order), and the consumer they name
# (a write's: each replay names a new one; None for a read).
Recording = tuple[list[tuple[str, bytes]], "str | None"]


@contextmanager
def recorded_calls(store_endpoint: str) -> Iterator[RoundTrips]:
    """A second instance of ours behind the counting proxy: its round trips per allocation write, and the
    calls the floors replay (`floor_phase`), recorded. Its service and table stay while the caller runs the
    floors, right after the sides' phases of the same rows."""
    proxy = CountingProxy(store_endpoint)
    service = start_placement_service(proxy.endpoint)
    try:
        client = Client(service.base, service.key)
        providers = make_providers(client, SPREAD_PROVIDERS)
        for i in range(5):  # warm-up: the server's first requests (key lookup caches and the like)
            allocate(client, providers[i % 2], str(uuid.uuid4()), PROJECTS[0])()
        for provider in providers[2:]:  # each provider read once by the server, as the bench's own writes find them
            allocate(client, provider, str(uuid.uuid4()), PROJECTS[0])()
        proxy.reset()
        consumers = [str(uuid.uuid4()) for _ in range(ROUND_TRIP_WRITES)]
        statuses = collections.Counter(allocate(client, providers[i % 2], c, PROJECTS[i % 4])()
                                       for i, c in enumerate(consumers))
        if set(statuses) != {204}:
            raise RuntimeError(f"round-trip phase answered {dict(statuses)}")
        calls = {op: count / ROUND_TRIP_WRITES for op, count in sorted(proxy.counts.items())}
        items = {op: sum(sizes) / len(sizes) for op, sizes in sorted(proxy.sizes.items())}
        actions = {action: count / ROUND_TRIP_WRITES for action, count in sorted(proxy.actions.items())}
        if set(calls) != set(WRITE_CALLS):
            raise RuntimeError(f"an allocation write made {calls}, not {WRITE_CALLS}")
        per_write = sum(proxy.counts.values()) / ROUND_TRIP_WRITES
        # The threaded rows' writes: one recorded per spread provider (and its project), replayed in turn, so
        # that the floor's threads meet on items as the bench's writes do.
        spread: list[Recording] = []
        for i, provider in enumerate(providers):
            consumer = str(uuid.uuid4())
            proxy.sent.clear()
            if allocate(client, provider, consumer, PROJECTS[i % len(PROJECTS)])() != 204:
                raise RuntimeError("a recorded write was refused")
            if tuple(op for op, _ in proxy.sent) != WRITE_CALLS:
                raise RuntimeError(f"a recorded write made {[op for op, _ in proxy.sent]}, not {WRITE_CALLS}")
            spread.append((list(proxy.sent), consumer))
        recordings = {"PUT allocations, sequential": spread[-1:], f"PUT allocations, {THREADS} threads": spread}
        for row, (path, version, reads) in READ_FLOORS.items():
            proxy.sent.clear()
            status, _ = client.call("GET", path.format(consumer=consumers[-1], provider=providers[0]),
                                    version=version)
            if status != 200 or tuple(op for op, _ in proxy.sent) != reads:
                raise RuntimeError(f"{row} answered {status} with {[op for op, _ in proxy.sent]}, not {reads}")
            recorded: list[Recording] = [(list(proxy.sent), None)]
            recordings[f"{row}, sequential"] = recordings[f"{row}, {THREADS} threads"] = recorded
        yield RoundTrips(per_write, calls, items, actions, recordings)
    finally:
        service.stop()
        proxy.stop()


@dataclass
class CandidateReads:
    trees: int
    candidates: int                    # allocation requests in the answer
    calls: dict[str, float]            # DynamoDB operation -> calls per query
    units: float                       # read units per query
    latency: Phase                     # the queries, sequential


def candidate_reads(store_endpoint: str, trees: int) -> CandidateReads | None:
    """Ours alone behind the counting proxy: `trees` compute trees, then Nova's boot query CANDIDATE_N times;
    DynamoDB calls and read units per query, counted at the wire. None when ours lacks the shape."""
    proxy = CountingProxy(store_endpoint)
    service = start_placement_service(proxy.endpoint)
    try:
        client = Client(service.base, service.key)
        client.setup("PUT", "/resource_classes/CUSTOM_BENCH_DEV", version="1.7")
        client.setup("PUT", "/traits/CUSTOM_BENCH_DEV_KIND", version="1.6")
        if not seed_trees(client, 0, trees):
            print(f"\nours: seeding {trees} trees was incomplete", flush=True)
            return None
        # The warm-up, and the answer's size; as a setup call, since this thread's connection may have idled
        # out while the trees were seeded.
        status, answer = client.setup("GET", BOOT_QUERY, version="1.36")
        if status != 200:
            print(f"\nours: the boot query answered {status}: {json.dumps(answer)[:300]}", flush=True)
            return None
        proxy.reset()
        latency = measure("ours", "boot query", [lambda: client.call("GET", BOOT_QUERY, version="1.36")[0]]
                          * CANDIDATE_N, 1)
        return CandidateReads(trees, len(answer["allocation_requests"]),
                              {op: n / CANDIDATE_N for op, n in sorted(proxy.counts.items())},
                              sum(proxy.units.values()) / CANDIDATE_N, latency)
    finally:
        service.stop()
        proxy.stop()


def round_trips_per_reshape(store_endpoint: str, consumers: int) -> tuple[float, dict[str, int]] | None:
    """One reshape of `consumers` consumers on our side, its DynamoDB calls counted at the wire (the
    setup's are not): (seconds, calls per operation), or None where our side does not support it."""
    proxy = CountingProxy(store_endpoint)
    service = start_placement_service(proxy.endpoint)
    try:
        reshape = prepare_reshape(Client(service.base, service.key), consumers)
        proxy.reset()
        started = time.perf_counter()
        status = reshape()
        took = time.perf_counter() - started
        return (took, dict(sorted(proxy.counts.items()))) if status == 204 else None
    finally:
        service.stop()
        proxy.stop()


def print_candidate_reads(reads: list[CandidateReads | None]) -> None:
    print("ours: Nova's boot query (limit=1000, root_required=!COMPUTE_STATUS_DISABLED) alone, sequential, "
          f"{CANDIDATE_N} queries, counted at the wire:")
    for found in reads:
        if found is None:
            print("- unsupported (ours lacks traits, children or 1.36)")
            continue
        print(f"- {found.trees} trees: {found.candidates} candidates, p50 {found.latency.percentile(0.5):.1f} ms, "
              f"p99 {found.latency.percentile(0.99):.1f} ms, {found.units:.1f} read units per query "
              f"({', '.join(f'{op} {n:.1f}' for op, n in found.calls.items())} calls per query)")


def candidates_only() -> int:
    """`python -m bench.placement --candidates`: ours alone, Nova's boot query over BENCH_PLACEMENT_TREES
    trees (no reference, no other phase): latency and read units per query."""
    use_local_credentials()
    print(describe_selection(), flush=True)
    store = start_store()
    try:
        reads = [candidate_reads(store.endpoint, trees) for trees in TREES]
    finally:
        store.stop()
    print_candidate_reads(reads)
    return 0 if all(reads) else 1


def floor_phase(store_endpoint: str, trips: RoundTrips, row: str) -> Phase | None:
    """The floor of a row whose calls were recorded (None for any other row), as threaded as the row."""
    recordings = trips.recordings.get(row)
    if recordings is None:
        return None
    return dynamodb_floor(store_endpoint, recordings, THREADS if row.endswith(f", {THREADS} threads") else 1)


def dynamodb_floor(store_endpoint: str, recordings: list[Recording], threads: int = 1) -> Phase:
    """The bare DynamoDB work of requests of ours: their calls (as sent at the wire) replayed on the same
    table, `threads` at a time, request j being recordings[j % len], through a client made as ours is
    (chalicelib/store/client.py `make_client`: the direct transport of decision 0052, or boto3's with
    RP_STORE_TRANSPORT=botocore). A write's replay names
    a new consumer each time, so it is the same new-consumer write: the same keys, items, conditions. A
    transaction canceled by another thread's on the same items is sent again, as ours tries again.

    Threaded, the threads are shared by SERVERS processes, as ours serves from SERVERS processes: in one
    process boto3's CPU under one interpreter lock, not the store, would bound the floor."""
    label = "sequential" if threads == 1 else f"{threads} threads"
    if threads == 1:
        parts = [_floor_part(store_endpoint, recordings, 1, N)]
    else:
        processes = max(1, min(SERVERS, threads))
        context = multiprocessing.get_context("spawn")  # a clean interpreter: no fork of this one's threads
        start = context.Barrier(processes)
        results = context.Queue()
        workers = [context.Process(target=_floor_worker, args=(
            store_endpoint, recordings[p:] + recordings[:p], threads // processes, N // processes, start, results))
            for p in range(processes)]
        for worker in workers:
            worker.start()
        parts = [results.get(timeout=600) for _ in workers]
        for worker in workers:
            worker.join()
    statuses: collections.Counter[int] = collections.Counter()
    for _, part_statuses, _ in parts:
        statuses.update(part_statuses)
    return Phase("DynamoDB floor (boto3)", f"our calls, {label}", N, max(part[0] for part in parts),
                 [took for part in parts for took in part[2]], statuses)


def _floor_worker(store_endpoint: str, recordings: list[Recording], threads: int, n: int, start: Any,
                  results: Any) -> None:
    """One process of a threaded floor: its share of the requests, started with the others (`start`)."""
    results.put(_floor_part(store_endpoint, recordings, threads, n, start))


def _floor_part(store_endpoint: str, recordings: list[Recording], threads: int, n: int,
                start: Any = None) -> tuple[float, dict[int, int], list[float]]:
    """(elapsed seconds, statuses, latencies) of `n` replays, `threads` at a time, after 50 unmeasured."""
    from chalicelib.config import Settings
    from chalicelib.store.client import make_client

    # The service's own client configuration (raw reads): the floor differs from ours only by our code.
    client = make_client(Settings.from_env({"AWS_ENDPOINT_URL_DYNAMODB": store_endpoint}))
    methods = {"GetItem": client.get_item, "BatchGetItem": client.batch_get_item, "Query": client.query,
               "TransactWriteItems": client.transact_write_items}

    def replay(calls: list[tuple[str, bytes]], consumer: str | None) -> int:
        fresh = str(uuid.uuid4())
        for _ in range(FLOOR_TRIES):
            try:
                for operation, body in calls:
                    request = json.loads(body.decode().replace(consumer, fresh) if consumer else body)
                    request.pop("ClientRequestToken", None)  # botocore's idempotency token: a new one per replay
                    methods[operation](**request)
                return 200
            except client.exceptions.TransactionCanceledException:
                continue
        return 409

    def requests(count: int) -> list[Callable[[], int]]:
        return [functools.partial(replay, *recordings[j % len(recordings)]) for j in range(count)]

    measure("floor", "warm-up", requests(50), threads)
    if start is not None:
        start.wait()
    phase = measure("floor", "replay", requests(n), threads)
    return phase.elapsed, dict(phase.statuses), phase.latencies


FLOOR_TRIES = 20  # as the service's RETRIES


# The reads whose bare DynamoDB calls are measured too (operation -> path, microversion, the calls in their
# order), sequential and threaded as their rows are.
READ_FLOORS = {
    # the consumer and its one provider's generation in one BatchGet: it was written by this process
    # (decision 0051; read first by a process, it is a GetItem for each)
    "GET allocations/{c}": ("/allocations/{consumer}", "1.28", ("BatchGetItem",)),
    "GET resource_providers/{u}/aggregates": ("/resource_providers/{provider}/aggregates", "1.19", ("GetItem",)),
}


# --- report -------------------------------------------------------------------------------------

FLOOR = "DynamoDB floor"  # the floors' phases in `Row.phases`, one per round (not a side of the table)


@dataclass
class Row:
    operation: str
    phases: dict[str, list[Phase | None]]   # side -> one per round (None: unsupported)

    def median(self, side: str, value: Callable[[Phase], float]) -> float | None:
        got = [value(phase) for phase in self.phases.get(side, []) if phase is not None]
        return statistics.median(got) if got else None

    def errors(self, side: str) -> str:
        total: collections.Counter[int] = collections.Counter()
        for phase in self.phases.get(side, []):
            if phase is not None:
                total.update({status: n for status, n in phase.statuses.items() if not 200 <= status < 300})
        return ", ".join(f"{n}x{status}" for status, n in sorted(total.items())) or "-"


def table(rows: list[Row], sides: list[str]) -> str:
    ours, references = sides[-1], sides[:-1]
    head = "| operation | side | per s | p50 ms | p99 ms | non-2xx | CPU ms/req: app, store | " + " | ".join(
        f"ours / {name.split(' (')[1].split(',')[0]}" for name in references) + " |"
    lines = [head, "|---|---|---:|---:|---:|---|---:|" + "---:|" * len(references)]
    for row in rows:
        ours_rate = row.median(ours, lambda p: p.per_s)
        for side in sides:
            rate = row.median(side, lambda p: p.per_s)
            if rate is None:
                lines.append(f"| {row.operation} | {side} | unsupported | | | | | "
                             + " | " * (len(references) - 1) + " |")
                continue
            ratios = ""
            if side == ours:
                cells = []
                for ref in references:
                    theirs = row.median(ref, lambda p: p.per_s)
                    cells.append(f"**{ours_rate / theirs:.2f}x**" if ours_rate and theirs else "")
                ratios = " | ".join(cells)
            else:
                ratios = " | ".join("" for _ in references)
            p50 = row.median(side, lambda p: p.percentile(0.5))
            cpu = [row.median(side, functools.partial(Phase.cpu_ms, part=part)) for part in ("app", "store")]
            lines.append(f"| {row.operation} | {side} | {rate:.0f} | {p50:.1f} | "
                         f"{row.median(side, lambda p: p.percentile(0.99)):.1f} | {row.errors(side)} | "
                         f"{', '.join('-' if c is None or c != c else f'{c:.2f}' for c in cpu)} | {ratios} |")
    return "\n".join(lines)


def print_floors(rows: dict[str, Row], names: list[str], trips: RoundTrips) -> None:
    """Each floor beside ours and 2x the reference: medians of the rounds, and ours' ratio to the floor
    round by round (each floor ran right after ours' phase of its row), whose median is the figure."""
    print("DynamoDB floors: each row's calls through the service's DynamoDB client on the same store, run in "
          f"each round right after the sides' phase of the row (the write's recorded on each of {SPREAD_PROVIDERS} "
          "providers for the threaded row), against ours and 2x the reference (medians of the rounds):")
    for name in trips.recordings:
        row = rows.get(name)
        floors = row.phases.get(FLOOR, []) if row else []
        if row is None or not floors:
            continue
        rate = row.median(FLOOR, lambda p: p.per_s) or 0.0
        ours = row.median(names[-1], lambda p: p.per_s)
        reference = row.median(names[0], lambda p: p.per_s) if len(names) > 1 else None
        paired = [mine.per_s / floor.per_s for mine, floor in zip(row.phases.get(names[-1], []), floors, strict=False)
                  if mine is not None and floor is not None and floor.per_s]
        operation = name.split(",")[0]
        sent = READ_FLOORS[operation][2] if operation in READ_FLOORS else WRITE_CALLS
        refused = row.errors(FLOOR)
        p50, p99 = (row.median(FLOOR, functools.partial(Phase.percentile, q=q)) for q in (0.5, 0.99))
        print(f"- {name} ({' then '.join(sent)}): {rate:.0f}/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms"
              + (f", {refused} refused" if refused != "-" else "")
              + (f"; ours {ours:.0f}/s, **{statistics.median(paired):.2f}x** of it (rounds: "
                 f"{', '.join(f'{r:.2f}' for r in paired)})" if ours and paired else "")
              + (f"; 2x {names[0]} {2 * reference:.0f}/s, {2 * reference / rate:.2f}x of it"
                 if reference and rate else ""))


def _pids(*processes: subprocess.Popen[str] | int | None) -> list[int]:
    return [p if isinstance(p, int) else p.pid for p in processes if p is not None]


@contextmanager
def reference_sides() -> Iterator[list[tuple[str, Client, Processes]]]:
    """The real Placement on PostgreSQL behind gunicorn (one worker per core), and on sqlite behind
    waitress (the second row): each with its client and its processes (whose CPU the phases count)."""
    workers = os.cpu_count() or 2
    with tempfile.TemporaryDirectory(prefix="bench-placement-") as workdir:
        database = Postgres()
        database.start()
        sql = ReferencePlacement(Path(workdir) / "pg-placement", threads=REFERENCE_THREADS,
                                 database_url=database.url, workers=workers)
        lite = ReferencePlacement(Path(workdir) / "sqlite-placement", threads=THREADS)
        try:
            sql.start()
            sides = [(f"Placement 16.0.0 (PostgreSQL, gunicorn {workers} workers x {REFERENCE_THREADS} threads)",
                      Client(sql.base, NOAUTH_ADMIN_TOKEN),
                      Processes(lambda: _pids(sql.process), lambda: _pids(database.pid)))]
            if "sqlite" in REFERENCES:
                lite.start()
                sides.append(("Placement 16.0.0 (sqlite, waitress)", Client(lite.base, NOAUTH_ADMIN_TOKEN),
                              Processes(lambda: _pids(lite.process), list)))  # sqlite: in the app's processes
            yield sides
        finally:
            lite.stop()
            sql.stop()
            database.stop()


def alternate(rows: dict[str, Row], sides: list[Side], operations: Callable[[Side], list[Operation]],
              floor: Callable[[str], Phase | None] | None = None) -> None:
    """ROUNDS rounds; in each, every operation on every side in turn, then the operation's floor (where it
    has one) as a side of its own: ours and its floor then meet the store in the same state (DynamoDB Local
    still JIT-compiles its hot paths thousands of calls in, on one of this machine's two cores)."""
    for _ in range(ROUNDS):
        per_side = [operations(side) for side in sides]
        for index in range(len(per_side[0])):
            for side, ops in zip(sides, per_side, strict=True):
                operation = ops[index]
                row = rows.setdefault(operation.name, Row(operation.name, {}))
                row.phases.setdefault(side.name, []).append(run_operation(side, operation))
                print(".", end="", flush=True)
            found = floor(per_side[0][index].name) if floor is not None else None
            if found is not None:
                rows[per_side[0][index].name].phases.setdefault(FLOOR, []).append(found)
                print(".", end="", flush=True)


def main() -> int:
    use_local_credentials()
    print(describe_selection(), flush=True)
    print(f"{N} requests per phase ({CANDIDATE_N} per candidate query), {THREADS} threads, {ROUNDS} rounds (medians), "
          f"trees {TREES}, reshape of {RESHAPE_CONSUMERS} consumers; "
          f"{'keep-alive' if KEEPALIVE else 'a connection per request'}; the sides alternate operation by operation",
          flush=True)
    install_postgres()
    store = start_store()
    rows: dict[str, Row] = {}
    seeding: list[str] = []
    wide: dict[str, list[float] | None] = {}
    reshapes: dict[str, list[float | None]] = {}
    try:
        with recorded_calls(store.endpoint) as trips, reference_sides() as references:
            service = start_placement_service(store.endpoint)
            more = [start_placement_service(store.endpoint, table=service.table, key=service.key)
                    for _ in range(SERVERS - 1)]
            try:
                sides = [Side(name, client, processes) for name, client, processes in references]
                servers = [service.server.process, *(m.server.process for m in more)]
                sides.append(Side(f"ours ({store.kind}, {SERVERS} processes)",
                                  Client([service.base, *(m.base for m in more)], service.key),
                                  Processes(lambda: _pids(*servers), lambda: _pids(store.pid))))
                names = [side.name for side in sides]
                alternate(rows, sides, Side.operations, functools.partial(floor_phase, store.endpoint, trips))
                for trees in TREES:
                    for side in sides:
                        took = side.grow_to(trees)
                        seeding.append(f"{side.name}: {trees} trees in {took:.1f} s"
                                       + (" (flat roots only: no traits or children)" if "trees" in side.lacks else ""))
                    alternate(rows, sides, functools.partial(Side.candidate_operations, trees=trees))
                for side in sides:
                    wide[side.name] = [] if wide_tree(side.client) else None
                for _ in range(ROUNDS):
                    for side in sides:
                        if wide[side.name] is not None:
                            for _ in range(WIDE_N):
                                started = time.perf_counter()
                                status, _ = side.client.call("GET", WIDE_QUERY, version="1.36")
                                if status in UNSUPPORTED:
                                    wide[side.name] = None
                                    break
                                wide[side.name].append(time.perf_counter() - started)  # type: ignore[union-attr]
                        try:
                            reshape = prepare_reshape(side.client, RESHAPE_CONSUMERS)
                        except RuntimeError as err:  # a setup the side refused: reported, the table still printed
                            print(f"\nreshape setup on {side.name} failed: {err}", flush=True)
                            reshapes.setdefault(side.name, []).append(None)
                            continue
                        started = time.perf_counter()
                        status = reshape()
                        reshapes.setdefault(side.name, []).append(
                            time.perf_counter() - started if status == 204 else None)
            finally:
                for extra in more:
                    extra.stop()
                service.stop()
        reads = [candidate_reads(store.endpoint, min(TREES))] if TREES else []
        keystone = placement_keystone.measure(store.endpoint, CountingProxy)
        reshape_trips = round_trips_per_reshape(store.endpoint, RESHAPE_CONSUMERS)
    finally:
        store.stop()

    print()
    print()
    print(table(list(rows.values()), names))
    print()
    print("Seeding the compute trees through each side's API, concurrently:")
    for line in seeding:
        print(f"- {line}")
    print(f"Wide tree (1 root, 8 children, 6 groups; bug 2070257), {WIDE_N} x {ROUNDS} queries:")
    for name, latencies in wide.items():
        print(f"- {name}: " + ("unsupported" if latencies is None else
                              f"p50 {1000 * statistics.median(latencies):.0f} ms, max {1000 * max(latencies):.0f} ms"))
    print(f"Reshape of a tree with {RESHAPE_CONSUMERS} consumers (POST /reshaper), median of {ROUNDS}:")
    for name, times in reshapes.items():
        done = [t for t in times if t is not None]
        print(f"- {name}: " + (f"{1000 * statistics.median(done):.0f} ms" if done else "unsupported"))
    if reshape_trips is not None:
        took, calls = reshape_trips
        print(f"- ours, its DynamoDB round trips (one more reshape, counted at the wire): {sum(calls.values())} "
              f"({', '.join(f'{op} {n}' for op, n in calls.items())}) in {1000 * took:.0f} ms")
    print()
    print(f"ours: DynamoDB round trips per allocation write (new consumer, 1 provider the server has read before; "
          f"the first claim on a provider reads it first: one BatchGetItem more): {trips.per_write:.2f} "
          f"({', '.join(f'{op} {n:.2f} of {trips.items[op]:.1f} items' for op, n in trips.calls.items())}), "
          f"counted at the wire over {ROUND_TRIP_WRITES} writes; transaction actions per write: "
          f"{', '.join(f'{action} {n:.1f}' for action, n in trips.actions.items())}")
    print_candidate_reads(reads)
    for line in keystone.lines():
        print(line)
    print_floors(rows, names, trips)
    ours_5xx = [f"{row.operation}: {row.errors(names[-1])}" for row in rows.values()
                if any(status >= 500 or status == 0 for phase in row.phases.get(names[-1], []) if phase
                       for status in phase.statuses)]
    for line in ours_5xx:
        print(f"5xx or dropped on our side: {line}")
    # The references' 5xx (sqlite "database is locked" under threads) are their figures, reported above
    # and never counted as successes; ours must have none.
    return 1 if ours_5xx else 0


if __name__ == "__main__":
    sys.exit(candidates_only() if "--candidates" in sys.argv[1:] else main())
