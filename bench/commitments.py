"""`make bench-commitments`: two commitment sync passes over a large cloud, against the fake OpenStack.

`python -m bench.commitments [--projects 10000] [--commitments 2000] [--latency-ms 20] [--concurrency 16]`

The world is bench/commitments_fetch.py's (10,000 projects, 2,000 confirmed instance commitments
on 1,000 of them, 3 servers each), served by the fake in a process of its own with `latency-ms`
per call. The store is the integration tier's (devkit/stores.py: DynamoDB Local where Java is, else moto), or what
AWS_ENDPOINT_URL_DYNAMODB points at. The commitments tenant has one large pool per AZ.

Pass 1 starts from nothing (every commitment becomes a reservation, most hold capacity); pass 2
runs over the unchanged world and must write nothing. Printed per pass: wall time, upstream
calls and their floor (calls / concurrency x latency), DynamoDB calls by operation, writes,
and the process's peak RSS (the bench process is the pass: what a Lambda of that size needs).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import threading
import time
from collections import Counter
from typing import Any

import requests

from bench.commitments_fetch import fake_cloud
from bench.store import bench_services
from chalicelib.auth.principals import Principal
from chalicelib.commitments.pools import FleetPoolSource
from chalicelib.commitments.service import SyncSettings, sync
from chalicelib.commitments.upstream import OpenStackClient
from chalicelib.config import endpoint_from_env
from chalicelib.fleet.models import ACCOUNTS, POOLS
from chalicelib.fleet.service import FleetService
from chalicelib.fleet.store import FleetStore
from chalicelib.runtime import Services

TENANT = "openstack"
GOALS = {1: 90.0, 2: 30.0}
PEAK_GOAL_MB = 512


def _pools(services: Services) -> None:
    """One large pool per AZ of the world, created through fleet's own module methods."""
    owner = Principal(kind="tenant", name="bench", tenant=TENANT)
    services.tenants.register_site(TENANT, "os", "openstack")
    fleet = FleetService(FleetStore(services.client, services.table))
    account = fleet.call(ACCOUNTS, "create", owner, {"name": "main", "site": "os", "provider": "openstack"})["id"]
    for az in ("az1", "az2"):
        fleet.call(POOLS, "create", owner, {
            "name": f"pool-{az}", "site": "os", "account": account, "class": "general", "owner": "ops",
            "availabilityZone": az, "capacity": {"VCPU": 10**7, "MEMORY_MB": 10**9, "DISK_GB": 10**8}})


def _count_calls(client: Any) -> tuple[Counter[str], dict[str, float]]:
    """Calls per operation, and the slowest call per operation (seconds): what a read timeout meets."""
    seen: Counter[str] = Counter()
    slowest: dict[str, float] = {}
    lock = threading.Lock()

    def count(model: Any, context: dict[str, Any], **_: Any) -> None:
        context["bench_started"] = time.perf_counter()
        with lock:
            seen[model.name] += 1

    def timed(model: Any, context: dict[str, Any], **_: Any) -> None:
        took = time.perf_counter() - context.get("bench_started", time.perf_counter())
        with lock:
            slowest[model.name] = max(slowest.get(model.name, 0.0), took)

    client.meta.events.register("before-call.dynamodb.*", count)
    client.meta.events.register("after-call.dynamodb.*", timed)
    return seen, slowest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.commitments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=10_000)
    parser.add_argument("--commitments", type=int, default=2_000)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--project-page", type=int, default=1000, help="Keystone projects per page")
    args = parser.parse_args(argv)
    services, store = bench_services()
    _pools(services)
    dynamodb, slowest = _count_calls(services.client)
    failed = False
    try:
        with fake_cloud(args.projects, args.commitments, args.latency_ms, args.concurrency,
                        args.project_page) as (url, config):
            print(f"commitment sync: {args.projects:,} projects, {args.commitments:,} commitments, "
                  f"{args.latency_ms} ms per upstream call, concurrency {args.concurrency}; store "
                  f"{'DynamoDB Local/moto (devkit/stores.py)' if store else endpoint_from_env()}")
            previous: dict[str, int] = {}
            for number in (1, 2):
                dynamodb.clear()
                slowest.clear()
                started = time.perf_counter()
                run = sync(services, SyncSettings(tenant=TENANT), fetch=lambda: OpenStackClient(config).fetch(),
                           pools=FleetPoolSource(services.client, services.table))
                wall = time.perf_counter() - started
                stats = requests.get(f"{url}/_fake/stats", timeout=10).json()["calls"]
                calls = {k: v - previous.get(k, 0) for k, v in stats.items()}
                previous = stats
                upstream = sum(calls.values())
                floor = upstream / args.concurrency * args.latency_ms / 1000
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                counts = run["counts"]
                print(f"pass {number}: {run['outcome']}, wall {wall:.1f} s (goal < {GOALS[number]:.0f} s); "
                      f"upstream floor {floor:.1f} s")
                print(f"  upstream calls {upstream:,} ({', '.join(f'{k} {v:,}' for k, v in sorted(calls.items()))})")
                print(f"  DynamoDB calls {sum(dynamodb.values()):,} "
                      f"({', '.join(f'{k} {v:,}' for k, v in sorted(dynamodb.items()))}); slowest "
                      f"{', '.join(f'{k} {v:.2f} s' for k, v in sorted(slowest.items()))}")
                print(f"  writes {counts['writes']:,}; held {counts['held']:,}, released {counts['released']:,}, "
                      f"unplaced {counts['unplaced']:,}, skipped {counts['skipped']}")
                print(f"  peak RSS so far {peak:.0f} MB (goal < {PEAK_GOAL_MB} MB)")
                failed |= run["outcome"] != "ok" or wall >= GOALS[number] or peak >= PEAK_GOAL_MB
                if number == 2 and counts["writes"] != 0:
                    print("  FAIL: the second pass wrote something")
                    failed = True
    finally:
        if store is not None:
            store.stop()
    print(f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
