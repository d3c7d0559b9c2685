"""`make load`: many concurrent clients against a background server, then nothing lost.

Starts a DynamoDB-compatible store and the service (`python -m devkit.server`,
as `make run` runs it, pointed at that store) on free 127.0.0.1 ports, binds the Project
refs through the event intake, runs the plan of loadtest/engine.py, repeats what got
503, verifies (engine.verify: answers, revisions, stored state through the API and
read from the store directly) and stops both processes, also on failure.

The store is the integration tier's (devkit/stores.py, RP_TEST_STORE): AWS's
DynamoDB Local where Java is available, else moto serialized to one request at a time.
Not `make run`'s embedded moto: moto's transactions are not atomic under concurrent
requests (they deep-copy the table while another request changes it), so a load test
over it measures moto, not the service.

Environment (all bounded):
  LOAD_REQUESTS   requests in the load phase (default 20000; CI runs 2000)
  LOAD_RESOURCES  resources reported on (default: LOAD_REQUESTS / 40, between 10 and 500)
  LOAD_CLIENTS    concurrent clients (default 16)
  LOAD_SECONDS    time limit of the load phase (default 600); what is not sent by then is not sent
  LOAD_SEED       plan seed (default 7)
  LOAD_MAX_503_RATE  the store is healthy here, so 503s (repeated until answered) may be at
                  most this share of the load phase's requests (default 0.01)
Exit status 0 only when every check holds and lost = 0.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from typing import Any

from loadtest.client import Client
from loadtest.engine import BOUND_REFS, PROJECTS, LoadRun, make_plan, verify
from loadtest.harness import ROOT, allocation_reader, generate_keys, start_service


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw else default


def bind_projects(base_url: str, service_key: str) -> None:
    events = [
        {"type": "project_binding", "bindingId": f"load-binding-{i}", "projectId": project, "providerProjectRef": ref,
         "state": "established", "revision": 1}
        for i, (project, ref) in enumerate(zip(PROJECTS, BOUND_REFS, strict=True), start=1)
    ]
    client = Client(base_url, service_key)
    try:
        answer = client.post("/api/resource-provisioning/events", {"events": events})
    finally:
        client.close()
    if answer.status != 200:
        raise SystemExit(f"load: binding the Project refs failed: {answer.status} {answer.raw[:200]!r}")


def print_verdict(run: LoadRun, verdict: Any, requests: int, elapsed: float, remaining: int) -> None:
    figures = verdict.figures
    statuses = figures.get("statuses", {})
    load_records = [r for r in run.shared.records if r.phase == "load"]
    unavailable = sum(1 for r in load_records if r.status == 503)
    print("\n== make load ==")
    print(f"plan: {len(run.plan.items)} requests over {len(run.plan.versions)} resources, {run.clients} clients")
    print(f"requests: {requests} in {elapsed:.1f}s = {requests / elapsed if elapsed else 0:.0f} req/s")
    print(f"statuses (all phases): {statuses}")
    print(f"503s: {unavailable} in the load phase; repeated until answered, {remaining} left unanswered")
    print(
        f"checked: {figures.get('repeats_identical', 0)} repeated answers identical to the saved one"
        f" ({figures.get('replays', 0)} replays, {figures.get('duplicates', 0)} concurrent duplicates),"
        f" {figures.get('reuse_checked', 0)} reused requestIds, {figures.get('stale_checked', 0)} stale reports,"
        f" {figures.get('reads_checked', 0)} reads, {figures.get('resources', 0)} resources' final state"
    )
    print(f"lost: {verdict.lost}")
    for problem in verdict.problems[:50]:
        print(f"  PROBLEM: {problem}")
    if len(verdict.problems) > 50:
        print(f"  ... and {len(verdict.problems) - 50} more")


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop the children
    requests = _env_int("LOAD_REQUESTS", 20000)
    resources = _env_int("LOAD_RESOURCES", min(500, max(10, requests // 40)))
    clients = _env_int("LOAD_CLIENTS", 16)
    seconds = _env_int("LOAD_SECONDS", 600)
    seed = _env_int("LOAD_SEED", 7)
    max_503_rate = float(os.environ.get("LOAD_MAX_503_RATE") or 0.01)
    table = f"rp-load-{uuid.uuid4().hex[:8]}"
    log_dir = ROOT / "build" / "load"

    from devkit.stores import start_store

    keys = generate_keys()
    store = start_store()
    endpoint = store.endpoint
    service = None
    try:
        service = start_service(keys, store_endpoint=endpoint, extra_env={"RP_TABLE_NAME": table}, log_dir=log_dir)
        print(f"load: store {store.kind} {endpoint}, service {service.base_url}"
              f" (pid {service.child.process.pid}), logs in {log_dir}", flush=True)
        bind_projects(service.base_url, keys["service"])
        plan = make_plan(f"load{seed}", requests, resources, seed)
        run = LoadRun(service.base_url, keys["k8s"], plan, clients, seed)
        run.run(deadline=time.monotonic() + seconds)
        elapsed = run.finished - run.started
        sent = len([r for r in run.shared.records if r.phase == "load"])
        remaining = run.converge()
        reader = Client(service.base_url, keys["k8s"])
        try:
            verdict = verify(run, allocation_reader(endpoint, table), lambda a: reader.get(run.allocation_path(a)))
        finally:
            reader.close()
        if not service.child.alive():
            verdict.fail(f"the service died:\n{service.child.log_tail()}")
        if remaining:
            verdict.fail(f"{remaining} requests still unanswered after repeating")
        unavailable = sum(1 for r in run.shared.records if r.phase == "load" and r.status == 503)
        if unavailable > max_503_rate * sent:
            verdict.fail(f"{unavailable} of {sent} requests answered 503 with a healthy store")
        print_verdict(run, verdict, sent, elapsed, remaining)
    finally:
        if service is not None:
            service.stop()
        store.stop()
    print("load passed" if verdict.ok else "load FAILED")
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
