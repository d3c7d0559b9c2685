"""Fetch-phase figures for the commitment sync (issue 10): one Snapshot of a large cloud over a slow fake.

`python -m bench.commitments_fetch [--projects 10000] [--commitments 2000] [--latency-ms 20] [--concurrency 16]`

The fake OpenStack runs in a process of its own (so the client's time and memory are its own),
every call to it waits `latency-ms`. The world: `projects` Keystone projects in 50 domains (one
page of 1,000 per Keystone call), 40 flavors (a quarter private, two pages), `commitments`
compute instance commitments on half as many projects (2 each), 3 servers in each of those.
Printed: wall time of the fetch, calls per endpoint, the floor (calls / concurrency x latency:
what perfect overlap would cost), the ratio to it, and the client process's peak RSS.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests

from chalicelib.commitments.upstream import OpenStackClient, OpenStackConfig

NOW = int(time.time())


def scenario(projects: int, commitments: int, latency_ms: int, project_page: int = 1000) -> dict[str, Any]:
    flavors = [{"id": f"f{i:02d}", "name": f"m{i}.std", "ram": 2048 * (i % 8 + 1), "vcpus": i % 8 + 1,
                "disk": 0 if i % 5 == 0 else 40, "is_public": i % 4 != 0, "extra_specs": {"quota:separate": "true"}}
               for i in range(40)]
    project_list = [{"id": f"p{i:05d}", "name": f"project-{i}", "domain_id": f"d{i % 50:02d}"}
                    for i in range(projects)]
    committed = project_list[:: max(1, projects // max(1, commitments // 2))][: max(1, commitments // 2)]
    limes: dict[str, list[dict[str, Any]]] = {}
    servers = []
    n = 0
    for project in committed:
        for k in range(2):
            n += 1
            if n > commitments:
                break
            flavor = flavors[n % len(flavors)]["name"]
            limes.setdefault(project["id"], []).append({
                "id": n, "uuid": f"{n:08x}-0000-4000-8000-{n:012x}", "service_type": "compute",
                "resource_name": f"instances_{flavor}", "availability_zone": f"az{k + 1}", "amount": 5,
                "duration": "1 year", "created_at": NOW - 3600, "confirmed_at": NOW - 3600,
                "expires_at": NOW + 86_400 * 365, "status": "confirmed"})
        for s in range(3):
            servers.append({"id": f"{project['id']}-s{s}", "tenant_id": project["id"],
                            "availability_zone": f"az{s % 2 + 1}", "flavor": flavors[s % len(flavors)]["name"]})
    return {"users": [{"name": "bench", "password": "bench-password", "project": "cloud_admin"}],
            "projects": project_list, "flavors": flavors, "servers": servers, "commitments": limes,
            "page_size": {"projects": project_page, "flavors": 25}, "latency_ms": latency_ms}


@contextlib.contextmanager
def fake_cloud(projects: int, commitments: int, latency_ms: int, concurrency: int,
               project_page: int = 1000) -> Iterator[tuple[str, OpenStackConfig]]:
    """The fake OpenStack in its own process with a generated scenario: its URL and a client config for it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.json"
        path.write_text(json.dumps(scenario(projects, commitments, latency_ms, project_page)))
        fake = subprocess.Popen([sys.executable, "-m", "fakes.openstack", "--scenario", str(path)],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert fake.stdout is not None
            url = fake.stdout.readline().split("listening on ")[1].split()[0]
            yield url, OpenStackConfig(auth_url=f"{url}/v3", username="bench", password="bench-password",
                                       project_name="cloud_admin", concurrency=concurrency)
        finally:
            fake.terminate()
            fake.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.commitments_fetch", description=__doc__)
    parser.add_argument("--projects", type=int, default=10_000)
    parser.add_argument("--commitments", type=int, default=2_000)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args(argv)

    with fake_cloud(args.projects, args.commitments, args.latency_ms, args.concurrency) as (url, config):
        started, cpu_started = time.perf_counter(), time.process_time()
        snapshot = OpenStackClient(config).fetch()
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        stats = requests.get(f"{url}/_fake/stats", timeout=10).json()

    calls = stats["calls"]
    total = sum(calls.values())
    floor = total / args.concurrency * args.latency_ms / 1000
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"commitments fetch: {args.projects:,} projects, {args.commitments:,} commitments, "
          f"{args.latency_ms} ms per call, concurrency {args.concurrency}")
    print(f"  read: {len(snapshot.projects):,} projects, {sum(len(v) for v in snapshot.commitments.values()):,} "
          f"commitments, {len(snapshot.flavors)} flavors, servers of {len(snapshot.servers):,} projects")
    print(f"  calls: {total:,} ({', '.join(f'{k} {v:,}' for k, v in sorted(calls.items()))}); "
          f"most at once {stats['maxInFlight']}")
    ratio = f"; ratio {wall / floor:.2f}" if floor else ""
    print(f"  wall: {wall:.1f} s; floor (calls / concurrency x latency): {floor:.1f} s{ratio}")
    print(f"  client CPU: {cpu:.1f} s ({cpu / total * 1000:.2f} ms per call); load average now "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"  peak RSS of the client process: {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
