"""Our service as the conformance tests and the bench see it: `make run`'s HTTP server, in its
own process, on DynamoDB Local, with a Placement key registered.

`start_server` is the ONE place that knows how `make run`'s server is started (`SERVER_MODULE`).
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from chalicelib.auth.keys import generate_key
from chalicelib.auth.repository import PK as KEYS_PK
from chalicelib.store.schema import ensure_table
from devkit.placement.output import drain_output

ROOT = Path(__file__).resolve().parents[2]
PLACEMENT_PREFIX = "/placement"
START_TIMEOUT = 90.0
SERVER_MODULE = "devkit.server"  # `make run`
LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:\d+)")
# Variables of the parent that would point the server elsewhere or register other keys.
INHERITED_OUT = ("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL", "RP_TABLE_NAME", "RP_SITE_KEY_K8S",
                 "RP_SITE_KEY_SLURM", "RP_SERVICE_KEY", "RP_PLACEMENT_KEY", "PORT", "RP_PLACEMENT_AUTH",
                 "RP_PLACEMENT_POLICY", "RP_PLACEMENT_POLICY_FILE", "RP_COMMITMENTS_SECRET_ID")
INHERITED_OUT_PREFIXES = ("RP_OPENSTACK_",)  # the service's Keystone account is the caller's to give


@dataclass
class RunningServer:
    url: str                       # http://127.0.0.1:<port>, no trailing slash
    process: subprocess.Popen[str]
    output: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=200))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)

    def tail(self) -> str:
        return "\n".join(self.output)


def start_server(store_endpoint: str, table: str, env: dict[str, str] | None = None) -> RunningServer:
    """`make run`'s server on a free loopback port, on `table` at `store_endpoint`; returns once it
    listens (its banner's last line). Its output is drained into `RunningServer.output`."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in INHERITED_OUT and not k.startswith(INHERITED_OUT_PREFIXES)}
    environment.update(
        PORT="0", RP_LOG_LEVEL="WARNING", AWS_ENDPOINT_URL_DYNAMODB=store_endpoint, RP_TABLE_NAME=table,
        AWS_ACCESS_KEY_ID=environment.get("AWS_ACCESS_KEY_ID", "local"),
        AWS_SECRET_ACCESS_KEY=environment.get("AWS_SECRET_ACCESS_KEY", "local"),
        AWS_DEFAULT_REGION=environment.get("AWS_DEFAULT_REGION", "us-east-1"),
        **(env or {}),
    )
    process = subprocess.Popen(  # noqa: S603 - this python, our own server module
        [sys.executable, "-m", SERVER_MODULE], cwd=ROOT, env=environment, text=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    server = RunningServer(url="", process=process)
    found = threading.Event()

    def on_line(line: str) -> None:
        match = LISTENING.search(line)
        if match and not found.is_set():
            server.url = match.group(1)
            found.set()

    def on_end() -> None:  # the process ended: stop waiting
        ended.wait()
        found.set()

    ended = drain_output(process, server.output, on_line, "placement-server-output")
    threading.Thread(target=on_end, daemon=True).start()
    if not found.wait(START_TIMEOUT) or not server.url:
        server.stop()
        raise RuntimeError(f"the server did not start (exit {process.poll()}):\n{server.tail()}")
    return server


def store_client(endpoint: str) -> Any:
    """A plain boto3 client for the harness's own table work (creating, reset)."""
    return boto3.session.Session().client(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="local", aws_secret_access_key="local",  # noqa: S106 - any for an emulator
        config=Config(retries={"max_attempts": 3, "mode": "standard"}),
    )


def reset_placement_state(client: Any, table: str) -> int:
    """Delete every item but the keys: Placement state is empty again, the key still valid.
    A harness-side Scan of a small test table; the service itself never scans."""
    deleted = 0
    kwargs: dict[str, Any] = {"TableName": table, "ProjectionExpression": "pk, sk", "ConsistentRead": True}
    while True:
        page = client.scan(**kwargs)
        doomed = [item for item in page.get("Items", []) if item["pk"]["S"] != KEYS_PK]
        for start in range(0, len(doomed), 25):
            requests: dict[str, Any] = {table: [{"DeleteRequest": {"Key": item}} for item in doomed[start:start + 25]]}
            while requests:
                requests = client.batch_write_item(RequestItems=requests).get("UnprocessedItems") or {}
        deleted += len(doomed)
        if "LastEvaluatedKey" not in page:
            return deleted
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


@dataclass
class PlacementService:
    """Our service serving Placement at `base` (`http://127.0.0.1:<port>/placement`)."""

    server: RunningServer
    client: Any
    table: str
    key: str
    owns_table: bool = True

    @property
    def root(self) -> str:
        return self.server.url

    @property
    def base(self) -> str:
        return self.server.url + PLACEMENT_PREFIX

    def reset(self) -> None:
        reset_placement_state(self.client, self.table)

    def stop(self) -> None:
        self.server.stop()
        if self.owns_table:
            with contextlib.suppress(Exception):
                self.client.delete_table(TableName=self.table)


def keystone_settings(auth_url: str, username: str, password: str, project: str,
                      policy: str = "secure", policy_file: str | None = None) -> dict[str, str]:
    """The server's environment for Placement behind Keystone (docs/placement-keystone.md): tokens
    validated at `auth_url` as the service account `username` (which needs the `service` role)."""
    env = {"RP_PLACEMENT_AUTH": "keystone", "RP_PLACEMENT_POLICY": policy, "RP_OPENSTACK_AUTH_URL": auth_url,
           "RP_OPENSTACK_USERNAME": username, "RP_OPENSTACK_PASSWORD": password,
           "RP_OPENSTACK_PROJECT_NAME": project}
    if policy_file:
        env["RP_PLACEMENT_POLICY_FILE"] = policy_file
    return env


def start_placement_service(store_endpoint: str, env: dict[str, str] | None = None, *, table: str | None = None,
                            key: str | None = None) -> PlacementService:
    """The server on a fresh table (or on `table`, shared with another server), given a fresh Placement
    key (or `key`; RP_PLACEMENT_KEY: `make run` registers it as a key of the `placement` principal,
    hashed, like the other keys); `env` adds settings (e.g. `keystone_settings(...)`)."""
    client = store_client(store_endpoint)
    owned = table is None
    table = table or f"rp-placement-{uuid.uuid4().hex[:12]}"
    if owned:
        ensure_table(client, table)
    key = key or generate_key()
    server = start_server(store_endpoint, table, {"RP_PLACEMENT_KEY": key, **(env or {})})
    return PlacementService(server=server, client=client, table=table, key=key, owns_table=owned)
