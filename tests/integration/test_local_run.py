"""`make run`'s server: its own empty store per instance, keys from the environment or generated."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "11111111-1111-4111-8111-111111111111"


@contextmanager
def local_server(**env: str) -> Iterator[tuple[str, list[str]]]:
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL", "RP_SITE_KEY_K8S",
                                "RP_SITE_KEY_SLURM", "RP_SERVICE_KEY")}
    environment.update(PORT="0", RP_LOG_LEVEL="WARNING", **env)
    proc = subprocess.Popen([sys.executable, "-m", "chalicelib.local.server"], cwd=ROOT, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
            url = found.group(1) if found else None
        assert url, "".join(lines)  # the banner comes last: the key lines are already read
        yield url, lines
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def call(url: str, method: str, path: str, key: str, body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_two_servers_side_by_side_have_their_own_empty_stores():
    keys = {"RP_SITE_KEY_K8S": "k8s-secret", "RP_SITE_KEY_SLURM": "slurm-secret", "RP_SERVICE_KEY": "svc-secret"}
    with local_server(**keys) as (first, _), local_server(**keys) as (second, _):
        assert first != second
        event = {"type": "project_binding", "bindingId": "b-1", "projectId": PROJECT,
                 "providerProjectRef": "wp-1", "state": "established", "revision": 1}
        assert call(first, "POST", "/api/resource-provisioning/events", "svc-secret", {"events": [event]}) == (
            200, {"applied": 1, "ignored": 0})
        assert call(first, "GET", "/resource-provisioning/k8s/projects/wp-1", "k8s-secret") == (
            200, {"projectId": PROJECT})
        assert call(second, "GET", "/resource-provisioning/k8s/projects/wp-1", "k8s-secret") == (
            404, {"code": "not_found"})
        assert call(second, "GET", "/resource-provisioning/k8s/projects/wp-1", "wrong") == (
            401, {"code": "unauthorized"})


def test_missing_keys_are_generated_and_printed_once():
    with local_server(RP_SITE_KEY_K8S="k8s-secret") as (url, lines):
        printed = dict(re.findall(r"generated (RP_\w+)=(\S+)", "".join(lines)))
        assert set(printed) == {"RP_SITE_KEY_SLURM", "RP_SERVICE_KEY"}
        assert call(url, "GET", "/resource-provisioning/slurm/retained-accounts", printed["RP_SITE_KEY_SLURM"]) == (
            200, {"revision": 0, "accounts": []})
        assert call(url, "GET", "/resource-provisioning/k8s/retained-accounts", "k8s-secret")[0] == 200
