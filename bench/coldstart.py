"""Cold start: what `import app` costs next to the floor, and how long the first report then takes.

- The ratio (issue 13's measure): `python -c 'import app'` against
  `python -c "import boto3; boto3.client('dynamodb', region_name='us-east-1')"`, whole processes, one
  warm-up each, then COLDSTART_PAIRS (default 9) alternating pairs; the median of the per-pair ratios.
- The first report: a new process imports app, then sends one report through the Lambda handler (the
  proxy event API Gateway sends) to the bench's store; the import and that first request are timed
  inside the process, so their sum is what a cold Lambda container spends before answering. Median of
  COLDSTART_REPORTS (default 5) processes.

`python -m bench.coldstart [--app-dir DIR] [--baseline REV]`: DIR (default: this checkout) is the tree
whose `app.py` is measured; with REV, that commit is also checked out (a temporary git worktree) and
measured first with the same harness, the same interpreter and the same store, so the two lines compare
before and after. `make bench` measures against BASELINE (04334d2, the commit before the composition root).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.store import bench_services
from chalicelib.auth.keys import generate_key, hash_key

FLOOR = "import boto3; boto3.client('dynamodb', region_name='us-east-1')"

# Runs in the measured tree: import app, then one report as API Gateway sends it.
FIRST_REPORT = r"""
import json, sys, time, uuid
t0 = time.perf_counter()
import app
t1 = time.perf_counter()
from chalice.local import LambdaContext
key = sys.argv[1]
body = {"requestId": "cold-" + uuid.uuid4().hex, "resource": {
    "resourceRef": "res-" + uuid.uuid4().hex, "offeringRef": "off-1", "providerProjectRef": "wp-1",
    "providerState": "OK", "paused": False, "nativeScope": "ns-1", "configured": {"cpu": 2000},
    "applied": {"cpu": 2000}, "observedAt": "2026-03-01T10:00:00Z"}}
path, resource = "/resource-provisioning/k8s/reports", "/resource-provisioning/{site}/reports"
headers = {"authorization": "Bearer " + key, "content-type": "application/json", "host": "localhost"}
event = {"resource": resource, "path": path, "httpMethod": "POST", "headers": headers,
         "multiValueHeaders": {k: [v] for k, v in headers.items()}, "queryStringParameters": None,
         "multiValueQueryStringParameters": None, "pathParameters": {"site": "k8s"}, "stageVariables": None,
         "requestContext": {"httpMethod": "POST", "resourcePath": resource, "path": path,
                            "requestId": str(uuid.uuid4())},
         "body": json.dumps(body), "isBase64Encoded": False}
answer = app.app(event, LambdaContext("resource-provisioning", 1024, max_runtime_ms=30000))
t2 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1000, "first_report_ms": (t2 - t1) * 1000,
                  "status": answer["statusCode"]}))
"""


def _run(code: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, *code], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def import_ratio(app_dir: Path, pairs: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    app, floor = ["-c", "import app"], ["-c", FLOOR]
    _run(app, app_dir, env)
    _run(floor, app_dir, env)
    ratios, app_times, floor_times = [], [], []
    for _ in range(pairs):
        a = _run(app, app_dir, env)
        f = _run(floor, app_dir, env)
        app_times.append(a)
        floor_times.append(f)
        ratios.append(a / f)
    return {"ratio": statistics.median(ratios), "app_s": statistics.median(app_times),
            "floor_s": statistics.median(floor_times)}


def first_reports(app_dir: Path, runs: int) -> dict[str, float]:
    services, store = bench_services()
    site_key = generate_key()
    services.keys.add(hash_key(site_key), "site:k8s")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(RP_TABLE_NAME=services.table, AWS_ENDPOINT_URL_DYNAMODB=services.settings.endpoint_url or "",
               RP_LOG_LEVEL="WARNING", POWERTOOLS_METRICS_DISABLED="true")
    samples: list[dict[str, Any]] = []
    try:
        for _ in range(runs + 1):  # the first one warms the OS's file cache
            out = subprocess.run([sys.executable, "-c", FIRST_REPORT, site_key], cwd=app_dir, env=env, check=True,
                                 capture_output=True, text=True).stdout
            samples.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        if store is not None:
            store.stop()
    samples = samples[1:]
    if any(s["status"] != 200 for s in samples):
        raise SystemExit(f"a first report was not accepted: {[s['status'] for s in samples]}")
    return {"import_ms": statistics.median(s["import_ms"] for s in samples),
            "first_report_ms": statistics.median(s["first_report_ms"] for s in samples),
            "total_ms": statistics.median(s["import_ms"] + s["first_report_ms"] for s in samples)}


@contextlib.contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """A temporary worktree of `rev` (removed afterwards)."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="rp-coldstart-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", "--quiet", str(tree), rev], check=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)], check=False)


def measure(app_dir: Path, label: str, pairs: int, runs: int) -> None:
    ratio = import_ratio(app_dir, pairs)
    first = first_reports(app_dir, runs)
    print(f"cold start, {label}:")
    print(f"  import app: {ratio['ratio']:.2f}x the floor (median of {pairs} pairs; "
          f"app {ratio['app_s'] * 1000:.0f} ms, boto3 + DynamoDB client {ratio['floor_s'] * 1000:.0f} ms, "
          "whole processes)")
    print(f"  first report after a cold start: {first['first_report_ms']:.0f} ms after an import of "
          f"{first['import_ms']:.0f} ms ({first['total_ms']:.0f} ms in all, median of {runs})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app-dir", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--baseline", help="a commit to measure first, as 'before'")
    args = parser.parse_args(argv)
    pairs = int(os.environ.get("COLDSTART_PAIRS", "9"))
    runs = int(os.environ.get("COLDSTART_REPORTS", "5"))
    if args.baseline:
        with checkout(args.baseline) as tree:
            measure(tree, f"before ({args.baseline})", pairs, runs)
    measure(args.app_dir, "now" if args.baseline else str(args.app_dir), pairs, runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
