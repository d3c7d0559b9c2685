"""`make fuzz`: schemathesis (v4) against the local server, over the project's copy of the contract.

1. Starts `python -m devkit.server` (what `make run` runs, with its embedded
   in-memory store) in the background on a free loopback port, with known keys, and
   waits for it by polling.
2. Seeds a little state through the API, so that cases can reach real answers and not
   only 404s: Project bindings, allocations at this Site and one at the other Site,
   and the view entities the member and retained-accounts operations read. Their ids
   go to schemathesis dictionaries (build/fuzz/dict/), drawn for half of the values.
3. Runs schemathesis: all checks, positive and negative modes, fixed seed, at least
   100 examples per operation, every case on /resource-provisioning/k8s/... with the
   k8s key (tests/fuzz/schemathesis.toml, tests/fuzz/hooks.py).
4. Prints the test cases generated per operation and, per operation, what failed.
5. Stops the server, also when anything above failed.

The store never fails during the run, so a 503 is a finding like any other 5xx.

Environment: FUZZ_SEED (default 20260301), FUZZ_MAX_EXAMPLES (default 100),
FUZZ_WORKERS (default 1: the seed then fixes the order of every request).
Reports (JUnit, NDJSON) and the server's log go to build/fuzz/. Exit status: 0 only with zero failures and every
operation tested with at least FUZZ_MIN_CASES (default 100) cases.
"""

from __future__ import annotations

import base64
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loadtest.client import Client
from loadtest.harness import ROOT, generate_keys, start_service

HERE = Path(__file__).resolve().parent
CONTRACT = ROOT / "chalicelib" / "contract" / "openapi.yaml"
CONFIG = HERE / "schemathesis.toml"
HOOKS = HERE / "hooks.py"
OUT = ROOT / "build" / "fuzz"  # schemathesis.toml reads the dictionaries from OUT/dict
OPERATIONS = ("report", "reportAccounts", "getAllocation", "getProject", "getMember", "getRetainedAccounts")

PROJECTS = [f"7a000000-0000-4000-8000-00000000000{i}" for i in range(1, 5)]
PARTY = "7b000000-0000-4000-8000-000000000001"
USERNAMES = ("fz-user-1", "fz:user.2")


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw else default


def _check(answer: Any, expected: int, what: str) -> Any:
    if answer.status != expected:
        raise SystemExit(f"fuzz: seeding failed at {what}: {answer.status} {answer.raw[:200]!r}")
    return answer.body


def seed(base_url: str, keys: dict[str, str]) -> dict[str, list[str]]:
    """State for the cases to reach; returns the dictionaries (name -> values)."""
    service = Client(base_url, keys["service"])
    k8s, slurm = Client(base_url, keys["k8s"]), Client(base_url, keys["slurm"])
    # ':' and '.' are valid in Opaque values; a client percent-encodes ':' in a path.
    refs = ["fz-proj-1", "fz-proj-2", "fz:proj.3", "fz-proj-4"]
    events: list[dict[str, Any]] = [
        {"type": "project_binding", "bindingId": f"fz-b-{i}", "projectId": project, "providerProjectRef": ref,
         "state": "established", "revision": 1}
        for i, (project, ref) in enumerate(zip(PROJECTS, refs, strict=True), start=1)
    ]
    # A provider ref claimed by two established bindings resolves to nothing (404).
    events += [
        {"type": "project_binding", "bindingId": f"fz-dup-{i}", "projectId": PROJECTS[i], "providerProjectRef":
         "fz-proj-dup", "state": "established", "revision": 1}
        for i in range(2)
    ]
    events += [
        {"type": "project", "projectId": project, "state": "active", "managementGeneration": 1, "revision": 1}
        for project in PROJECTS
    ]
    events += [
        {"type": "party_site_binding", "bindingId": "fz-psb-1", "partyId": PARTY, "site": "k8s",
         "state": "established", "revision": 1},
        *({"type": "username", "site": "k8s", "username": username, "partyId": PARTY, "verified": True,
           "revision": 1} for username in USERNAMES),
        *({"type": "membership", "projectId": project, "partyId": PARTY, "generation": 1, "state": "member",
           "revision": 1} for project in (PROJECTS[0], PROJECTS[2])),
        {"type": "accepted_item", "itemId": "fz-item-1", "site": "k8s", "projectId": PROJECTS[0],
         "partyId": PARTY, "generation": 1, "managementGeneration": 1, "required": True, "revision": 1},
    ]
    _check(service.post("/api/resource-provisioning/events", {"events": events}), 200, "view events")

    allocations, resources = [], []
    for i in range(1, 9):
        resource_ref = f"fz-res-{i}"
        report = {
            "requestId": f"fz-seed-{i}",
            "resource": {
                "resourceRef": resource_ref, "offeringRef": "fz-offering", "providerProjectRef": refs[i % 4],
                "providerState": "OK", "paused": False, "nativeScope": f"fz-ns-{i}",
                "configured": {"cpu": 1000 * i}, "applied": {"cpu": 1000 * i},
                "observedAt": "2026-03-01T10:00:00Z",
            },
        }
        body = _check(k8s.post("/resource-provisioning/k8s/reports", report), 200, f"report {resource_ref}")
        allocations.append(body["allocationId"])
        resources.append(resource_ref)
    # Another Site's allocation: a k8s key must not see it (404, like none at all).
    other = {"requestId": "fz-seed-slurm", "resource": {
        "resourceRef": "fz-slurm-res", "offeringRef": "fz-offering", "providerProjectRef": refs[0],
        "providerState": "OK", "paused": False, "configured": {"cpu": 1}, "observedAt": "2026-03-01T10:00:00Z"}}
    allocations.append(_check(slurm.post("/resource-provisioning/slurm/reports", other), 200, "slurm")["allocationId"])
    for client in (service, k8s, slurm):
        client.close()
    return {
        "allocations": allocations,
        "project_refs": [*refs, "fz-proj-dup"],
        "resource_refs": resources,
        "usernames": list(USERNAMES),
    }


def write_dictionaries(directory: Path, dictionaries: dict[str, list[str]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, values in dictionaries.items():
        lines = [json.dumps(value) for value in values]  # libFuzzer form: one quoted string a line
        (directory / f"{name}.dict").write_text("\n".join(lines) + "\n")


def schemathesis_command(base_url: str, out: Path, seed_value: int, max_examples: int, workers: int) -> list[str]:
    return [
        sys.executable, "-m", "schemathesis.cli",
        "--config-file", str(CONFIG),
        "run", str(CONTRACT),
        "--url", base_url,
        "--checks", "all",
        "--mode", "all",
        "--seed", str(seed_value),
        "--max-examples", str(max_examples),
        "--workers", str(workers),
        "--continue-on-failure",
        "--generation-database", "none",
        "--request-timeout", "30",
        "--no-color",
        "--report", "junit,ndjson",
        "--report-dir", str(out),
        "--report-ndjson-path", str(out / "events.ndjson"),
        "--report-junit-path", str(out / "junit.xml"),
    ]


def summarize(ndjson: Path) -> dict[str, dict[str, Any]]:
    """Per operation label: cases by phase and mode, response statuses, failed checks."""
    ops: dict[str, dict[str, Any]] = collections.defaultdict(lambda: {
        "cases": 0, "phases": collections.Counter(), "modes": collections.Counter(),
        "statuses": collections.Counter(), "failures": collections.Counter(), "failed_cases": set(),
        "operation_id": None,
    })
    for line in ndjson.read_text().splitlines():
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if not finished:
            continue
        recorder = finished.get("recorder") or {}
        label = recorder.get("label", "?")
        for case_id, case in (recorder.get("cases") or {}).items():
            value = case.get("value") or {}
            entry = ops[label]
            entry["cases"] += 1
            entry["phases"][finished.get("phase")] += 1
            entry["modes"][((value.get("meta") or {}).get("generation") or {}).get("mode")] += 1
            interaction = (recorder.get("interactions") or {}).get(case_id) or {}
            response = interaction.get("response") or {}
            if response:
                entry["statuses"][response.get("status_code")] += 1
            for check in (recorder.get("checks") or {}).get(case_id, []):
                if check.get("status") == "failure":
                    failure = (check.get("failure_info") or {}).get("failure") or {}
                    code = failure.get("code") or check.get("name")
                    title = failure.get("title") or check.get("name")
                    detail = _first_line(failure.get("message"))
                    if response.get("status_code") is not None:
                        detail = f"{response['status_code']} {_content(response)} {detail}".strip()
                    entry["failures"][(code, title, detail)] += 1
                    entry["failed_cases"].add(case_id)
    return ops


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0][:100] if (text or "").strip() else ""


def _content(response: dict[str, Any]) -> str:
    encoded = (response.get("content") or {}).get("$base64")
    if not encoded:
        return ""
    text = base64.b64decode(encoded).decode("utf-8", "replace")
    return text[:60].replace("\n", " ")


def operation_ids() -> dict[str, str]:
    """'METHOD /path' -> operationId, from the contract."""
    import yaml

    document = yaml.safe_load(CONTRACT.read_text())
    return {
        f"{method.upper()} {path}": op["operationId"]
        for path, item in document["paths"].items()
        for method, op in item.items()
        if isinstance(op, dict) and "operationId" in op
    }


def report(ops: dict[str, dict[str, Any]], min_cases: int) -> list[str]:
    """Print the per-operation table; return the problems that fail the run besides schemathesis' own."""
    ids = operation_ids()
    problems: list[str] = []
    print("\n== make fuzz: test cases generated per operation ==")
    print(f"{'operation':<22} {'cases':>6} {'coverage':>9} {'fuzzing':>8} {'positive':>9} {'negative':>9}  statuses")
    for label, operation_id in sorted(ids.items(), key=lambda kv: OPERATIONS.index(kv[1])):
        entry = ops.get(label)
        if entry is None:
            problems.append(f"{operation_id}: not tested")
            print(f"{operation_id:<22} {0:>6}  (not tested)")
            continue
        statuses = ", ".join(f"{s}x{n}" for s, n in sorted(entry["statuses"].items(), key=lambda kv: str(kv[0])))
        print(
            f"{operation_id:<22} {entry['cases']:>6} {entry['phases']['coverage']:>9} {entry['phases']['fuzzing']:>8}"
            f" {entry['modes']['positive']:>9} {entry['modes']['negative']:>9}  {statuses}"
        )
        if entry["cases"] < min_cases:
            problems.append(f"{operation_id}: only {entry['cases']} test cases (at least {min_cases} required)")
    extra = sorted(label for label in ops if label not in ids)
    if extra:
        print("undeclared methods probed on the contract's paths: " + ", ".join(extra))
    total = sum(entry["cases"] for entry in ops.values())
    print(f"total: {total} test cases")

    failing = {label: entry for label, entry in ops.items() if entry["failures"]}
    print("\n== make fuzz: failures per operation ==")
    if not failing:
        print("none")
    for label, entry in sorted(failing.items()):
        name = ids.get(label, label)
        print(f"{name} ({label}): {len(entry['failed_cases'])} failing test cases")
        for (code, title, detail), count in entry["failures"].most_common():
            print(f"  {code} {title} x{count}: {detail}")
    return problems


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop the children
    seed_value = _env_int("FUZZ_SEED", 20260301)
    max_examples = _env_int("FUZZ_MAX_EXAMPLES", 100)
    min_cases = _env_int("FUZZ_MIN_CASES", 100)
    workers = _env_int("FUZZ_WORKERS", 1)
    out = OUT
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)

    keys = generate_keys()
    started = time.monotonic()
    service = start_service(keys, log_dir=out)
    print(f"fuzz: server {service.base_url} (pid {service.child.process.pid}, log {service.child.log_path})")
    try:
        write_dictionaries(out / "dict", seed(service.base_url, keys))
        env = {
            **os.environ,
            "RP_SITE_KEY_K8S": keys["k8s"],
            "SCHEMATHESIS_HOOKS": str(HOOKS),
            "PYTHONPATH": str(ROOT),
        }
        command = schemathesis_command(service.base_url, out, seed_value, max_examples, workers)
        print("fuzz: " + " ".join(command[2:]), flush=True)
        done = subprocess.run(command, cwd=ROOT, env=env, check=False, timeout=3000)
        if not service.child.alive():
            print(f"fuzz: the server died during the run:\n{service.child.log_tail()}")
            return 1
    finally:
        service.stop()
    ndjson = out / "events.ndjson"
    if not ndjson.exists():
        print(f"fuzz: schemathesis wrote no report (exit {done.returncode})")
        return done.returncode or 1
    problems = report(summarize(ndjson), min_cases)
    for problem in problems:
        print(f"fuzz: {problem}")
    verdict = "passed" if done.returncode == 0 and not problems else "FAILED"
    print(
        f"\nfuzz {verdict}: schemathesis exit {done.returncode}, seed {seed_value}, max-examples {max_examples},"
        f" {time.monotonic() - started:.0f}s; reports in {out}"
    )
    return 0 if verdict == "passed" else (done.returncode or 1)


if __name__ == "__main__":
    sys.exit(main())
