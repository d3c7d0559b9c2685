"""Fleet figures (issue 9): plan and apply of the largest document one transaction holds; export at 10,000 objects.

`python -m bench.fleet` (`make bench-fleet`). Requests go through the real
handler stack (the Lambda proxy event path, via the local API Gateway
stand-in) with a tenant bearer token, against the integration tier's store
(RP_TEST_STORE: DynamoDB Local where Java is, else moto) or whatever
AWS_ENDPOINT_URL_DYNAMODB points at. Round trips are DynamoDB HTTP requests
per operation (botocore hooks, retries included).

- Largest document: one account, one pool (its Placement provider and name
  claim are 3 items), and as many flavors as still fit 100 transaction items
  with the version, the status and one document chunk. Plan (fresh state),
  apply with the planHash, then a no-op plan.
- Export: 10,000 objects (1 account, 100 pools, 9,899 flavors) seeded with
  BatchWriteItem in the store's own layout, then `fleet/export`: one paged
  Query of the tenant's partition (never a Scan) plus its Sites and classes.
"""

from __future__ import annotations

import json
import statistics
import time
import uuid
from typing import Any

from bench.store import bench_services
from chalicelib.auth.keys import generate_key, hash_key
from chalicelib.fleet.models import ACCOUNTS, FLAVORS, POOLS, FleetObject, object_id
from chalicelib.fleet.store import object_item
from chalicelib.runtime import Services, build_services, use_services
from chalicelib.store.codec import to_item
from chalicelib.store.ops import MAX_TRANSACTION_OPS
from chalicelib.store.schema import ensure_table

TENANT = "bench"
GRANTS = [f"compute:{m}:admin@compute-{m}" for m in
          ("fleet", "providerAccounts", "pools", "ownerQuotas", "offers", "flavors", "sites")]
FIXED_ITEMS = 1 + 3 + 3  # account; pool + provider + name claim; version + status + one chunk
EXPORT_OBJECTS = 10_000
REPEATS = 5


def document(flavors: int) -> dict[str, Any]:
    return {
        "sites": [{"name": "k8s"}],
        "providerAccounts": [{"name": "main", "site": "k8s", "provider": "aws", "description": "bench"}],
        "pools": [{"name": "gpu", "site": "k8s", "account": "main", "class": "general", "owner": "team-a",
                   "availabilityZone": "az1", "capacity": {"VCPU": 512, "MEMORY_MB": 2 ** 20, "DISK_GB": 4096}}],
        "ownerQuotas": [], "offers": [],
        "flavors": [{"name": f"flavor-{i:03d}", "pool": "gpu", "resources": {"VCPU": 2, "MEMORY_MB": 4096},
                     "description": f"flavor {i}"} for i in range(flavors)],
    }


class Tenant:
    def __init__(self, services: Services, table: str) -> None:
        from dataclasses import replace

        from app import app
        from devkit.gateway import LocalGateway

        self.svc = replace(build_services(replace(services.settings, table_name=table), services.client),
                           round_trips=services.round_trips)
        ensure_table(services.client, table)
        use_services(self.svc)
        self.svc.tenants.register_site(TENANT, "k8s", "kubernetes")
        self.token = generate_key()
        self.svc.tenants.issue(TENANT, "bench", tuple(sorted(GRANTS)), hash_key(self.token))
        self.gateway = LocalGateway(app)

    def rpc(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"content-type": "application/json", "authorization": f"Bearer {self.token}"}
        response = self.gateway.handle("POST", f"/api/compute/{method}", headers, json.dumps(body).encode())
        answer: dict[str, Any] = json.loads(response["body"])
        assert response["statusCode"] == 200, answer
        return answer

    def measure(self, method: str, body: dict[str, Any]) -> tuple[dict[str, Any], float, dict[str, int]]:
        self.svc.authenticator.authenticate(self.token)  # cached: the key lookup is not what is measured
        self.svc.round_trips.reset()
        started = time.perf_counter()
        answer = self.rpc(method, body)
        elapsed = (time.perf_counter() - started) * 1000
        return answer, elapsed, dict(self.svc.round_trips.calls)

    def drop(self) -> None:
        self.svc.client.delete_table(TableName=self.svc.table)


def _calls(calls: dict[str, int]) -> str:
    return f"{sum(calls.values())} ({', '.join(f'{k}={v}' for k, v in sorted(calls.items()))})"


def largest(services: Services) -> list[str]:
    flavors = MAX_TRANSACTION_OPS - FIXED_ITEMS
    lines = [f"fleet: the largest document one transaction holds ({flavors} flavors + account + pool = "
             f"{flavors + 2} objects, {MAX_TRANSACTION_OPS} items), median of {REPEATS} fresh tenants:"]
    figures: dict[str, list[tuple[float, dict[str, int]]]] = {"plan": [], "apply": [], "plan after": []}
    for _ in range(REPEATS):
        tenant = Tenant(services, f"{services.table}-fleet-{uuid.uuid4().hex[:6]}")
        try:
            planned, ms, calls = tenant.measure("fleet/plan", {"document": document(flavors)})
            assert len(planned["calls"]) == flavors + 2
            figures["plan"].append((ms, calls))
            applied, ms, calls = tenant.measure("fleet/apply", {"document": document(flavors),
                                                                "planHash": planned["planHash"]})
            assert applied["applied"] == flavors + 2
            figures["apply"].append((ms, calls))
            again, ms, calls = tenant.measure("fleet/plan", {"document": document(flavors)})
            assert again["calls"] == []
            figures["plan after"].append((ms, calls))
        finally:
            tenant.drop()
    for label, runs in figures.items():
        median = statistics.median(ms for ms, _ in runs)
        lines.append(f"  {label:11}: {median:8.1f} ms, round trips {_calls(runs[0][1])}")
    return lines


def _seed(tenant: Tenant, objects: int) -> None:
    account = FleetObject(ACCOUNTS, object_id(TENANT, ACCOUNTS, "main"), "main",
                          {"site": "k8s", "provider": "aws", "description": ""})
    pools = [FleetObject(POOLS, object_id(TENANT, POOLS, f"pool-{i:03d}"), f"pool-{i:03d}", {
        "site": "k8s", "account": account.id, "class": "general", "owner": "team-a", "availabilityZone": "az1",
        "capacity": {"VCPU": 64}}) for i in range(100)]
    flavors = [FleetObject(FLAVORS, object_id(TENANT, FLAVORS, f"flavor-{i:05d}"), f"flavor-{i:05d}", {
        "pool": pools[i % 100].id, "resources": {"VCPU": 2}, "description": "a flavor of the bench"})
        for i in range(objects - 1 - len(pools))]
    items = [object_item(TENANT, o) for o in (account, *pools, *flavors)]
    for start in range(0, len(items), 25):
        batch = [{"PutRequest": {"Item": to_item(i)}} for i in items[start:start + 25]]
        pending: dict[str, Any] = {tenant.svc.table: batch}
        while pending:
            pending = tenant.svc.client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}


def export(services: Services) -> list[str]:
    tenant = Tenant(services, f"{services.table}-export-{uuid.uuid4().hex[:6]}")
    try:
        started = time.perf_counter()
        _seed(tenant, EXPORT_OBJECTS)
        seeding = time.perf_counter() - started
        runs = []
        for _ in range(REPEATS):
            answer, ms, calls = tenant.measure("fleet/export", {})
            assert sum(len(answer["document"][k]) for k in ("providerAccounts", "pools", "flavors")) == EXPORT_OBJECTS
            assert "Scan" not in calls, calls
            runs.append((ms, calls))
        size = len(json.dumps(answer))
        return [f"fleet export at {EXPORT_OBJECTS:,} objects (seeded in {seeding:.1f} s; answer {size / 1e6:.1f} MB), "
                f"median of {REPEATS}: {statistics.median(ms for ms, _ in runs):.1f} ms, round trips "
                f"{_calls(runs[0][1])}, no Scan"]
    finally:
        tenant.drop()


def main() -> int:
    services, store = bench_services()
    settings = services.settings
    try:
        print(f"store: {settings.endpoint_url} ({store.kind if store else 'external'})\n")
        for line in [*largest(services), "", *export(services)]:
            print(line)
    finally:
        use_services(None)
        if store is not None:
            store.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
