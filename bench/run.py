"""`make bench`: figures, not tests.

Sends reports through the real handler stack (the Lambda proxy event path,
via the local API Gateway stand-in) against the local store, and prints:
reports/s, DynamoDB round trips and consumed capacity per report kind
(counted with botocore event hooks), and the same DynamoDB calls made
directly with the service's DynamoDB client (decision 0052) on the same store as the floor, with the ratio.

BENCH_REPORTS sets N (default 400). The store is the integration tier's
(RP_TEST_STORE: DynamoDB Local where Java is, else moto), or whatever
AWS_ENDPOINT_URL_DYNAMODB points at.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

from bench.store import bench_services
from chalicelib.auth.keys import generate_key, hash_key
from chalicelib.runtime import Services, use_services
from chalicelib.store.codec import key, to_item

PROJECT = "11111111-1111-4111-8111-111111111111"


def _resource(ref: str, at: str, **kw: Any) -> dict[str, Any]:
    base = {"resourceRef": ref, "offeringRef": "off", "providerProjectRef": "wp-bench", "providerState": "OK",
            "paused": False, "nativeScope": "ns", "configured": {"cpu": 2000, "memory": 2**32},
            "applied": {"cpu": 2000, "memory": 2**32}, "observedAt": at}
    base.update(kw)
    return base


def _at(i: int) -> str:
    return f"2026-03-01T{10 + i // 3600:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z"


class Bench:
    def __init__(self, services: Services, gateway: Any, keys: dict[str, str]) -> None:
        self.svc = services
        self.gateway = gateway
        self.keys = keys

    def post(self, path: str, body: dict[str, Any], who: str = "k8s") -> tuple[int, dict[str, Any]]:
        headers = {"content-type": "application/json", "authorization": f"Bearer {self.keys[who]}"}
        response = self.gateway.handle("POST", path, headers, json.dumps(body).encode())
        return response["statusCode"], json.loads(response["body"])

    def report(self, request_id: str, resource: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return self.post("/resource-provisioning/k8s/reports", {"requestId": request_id, "resource": resource})

    def measure(self, label: str, fn: Callable[[int], Any], n: int) -> dict[str, Any]:
        counter = self.svc.round_trips
        counter.reset()
        started = time.perf_counter()
        for i in range(n):
            fn(i)
        elapsed = time.perf_counter() - started
        return {"kind": label, "n": n, "per_s": n / elapsed, "ms": 1000 * elapsed / n,
                "trips": counter.total / n, "capacity": counter.total_capacity / n,
                "calls": {k: round(v / n, 2) for k, v in counter.calls.items()}}


def floor_op(services: Services, i: int) -> None:
    """The bare DynamoDB work of one steady report: one BatchGetItem of 3 keys, one 2-item transaction."""
    client, table = services.client, services.table
    pk = f"FLOOR#{i}"
    client.batch_get_item(RequestItems={table: {"Keys": [key(pk), key(pk + "#a"), key("REF#wp-bench")],
                                                "ConsistentRead": True}}, ReturnConsumedCapacity="TOTAL")
    client.transact_write_items(TransactItems=[
        {"Put": {"TableName": table, "Item": {**key(pk), **to_item({"v": i, "body": "x" * 160})},
                 "ConditionExpression": "attribute_not_exists(pk)"}},
        {"Put": {"TableName": table, "Item": {**key(pk + "#a"), **to_item({"v": i, "doc": "y" * 600})}}},
    ], ReturnConsumedCapacity="TOTAL")


def steady_vs_floor(bench: Bench, n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Alternate a steady report and its bare DynamoDB floor, so both see the same store load."""
    svc, counter = bench.svc, bench.svc.round_trips
    totals = {"steady": [0.0, 0, 0.0], "floor": [0.0, 0, 0.0]}
    for i in range(n):
        for kind in ("steady", "floor"):
            counter.reset()
            started = time.perf_counter()
            if kind == "steady":
                bench.report(f"steady-{i}", _resource(f"res-{i}", _at(1)))
            else:
                floor_op(svc, i)
            totals[kind][0] += time.perf_counter() - started
            totals[kind][1] += counter.total
            totals[kind][2] += counter.total_capacity
    rows = []
    for kind, label in (("steady", "steady (nothing changed)"), ("floor", "floor: same calls, the client direct")):
        elapsed, trips, capacity = totals[kind]
        rows.append({"kind": label, "n": n, "per_s": n / elapsed, "ms": 1000 * elapsed / n,
                     "trips": trips / n, "capacity": capacity / n, "calls": {}})
    return rows[0], rows[1]


def main() -> int:
    n = int(os.environ.get("BENCH_REPORTS", "400"))
    services, store = bench_services()
    settings = services.settings
    use_services(services)

    from app import app
    from devkit.gateway import LocalGateway

    keys = {"k8s": generate_key(), "service": generate_key()}
    services.keys.add(hash_key(keys["k8s"]), "site:k8s")
    services.keys.add(hash_key(keys["service"]), "service")
    bench = Bench(services, LocalGateway(app), keys)
    bench.post("/api/resource-provisioning/events", {"events": [{
        "type": "project_binding", "bindingId": "b", "projectId": PROJECT, "providerProjectRef": "wp-bench",
        "state": "established", "revision": 1}]}, who="service")

    rows = [
        bench.measure("new resource", lambda i: bench.report(f"new-{i}", _resource(f"res-{i}", _at(0))), n),
        bench.measure("changed (paused)",
                      lambda i: bench.report(f"chg-{i}", _resource(f"res-{i}", _at(2), paused=True)), n),
        bench.measure("replay (saved result)",
                      lambda i: bench.report(f"chg-{i}", _resource(f"res-{i}", _at(2), paused=True)), n),
        bench.measure("stale (older, refused)",
                      lambda i: bench.report(f"old-{i}", _resource(f"res-{i}", _at(0))), n),
    ]
    steady, bare = steady_vs_floor(bench, n)
    rows.insert(1, steady)
    print(f"store: {settings.endpoint_url} ({store.kind if store else 'external'}), N={n} per kind\n")
    print(f"{'report kind':28} {'reports/s':>10} {'ms/report':>10} {'round trips':>12} {'capacity':>9}  calls")
    for r in [*rows, bare]:
        calls = ", ".join(f"{k}={v}" for k, v in sorted(r["calls"].items()))
        print(f"{r['kind']:28} {r['per_s']:10.1f} {r['ms']:10.2f} {r['trips']:12.2f} {r['capacity']:9.2f}  {calls}")
    print(f"\nsteady report vs bare DynamoDB floor: {steady['ms'] / bare['ms']:.2f}x the time "
          f"({steady['ms']:.2f} ms vs {bare['ms']:.2f} ms), {steady['trips']:.2f} vs {bare['trips']:.2f} round trips")
    print("(capacity is what the store reports in ConsumedCapacity; emulators may report none)")

    try:
        from bench import accounts_retained
    except ImportError:
        accounts_retained = None  # type: ignore[assignment]
    if accounts_retained is not None:
        print()
        for line in accounts_retained.run(services):
            print(line)
    if store is not None:
        store.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
