"""Background processes on 127.0.0.1: the service as `make run` runs it, and store helpers.

Each process listens on a loopback port the kernel picks (it prints it), is waited for by polling
(bounded in time), and stopped by its own PID, also when the caller fails.
Output goes to a log file, never to a pipe nobody reads.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devkit.keys import KEY_VARIABLES

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"Resource Provisioning listening on http://127\.0\.0\.1:(\d+)")


class StartError(RuntimeError):
    pass


def poll(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """True as soon as `predicate()` holds; False after `timeout` seconds. Bounded in time."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def generate_keys() -> dict[str, str]:
    return {target: f"rp_{target}_" + secrets.token_urlsafe(24) for target in KEY_VARIABLES}


def local_aws_env() -> dict[str, str]:
    return {
        "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "local"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "local"),
        "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
    }


@dataclass
class Background:
    """One child process, its log file and how to stop it."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    _log: object = field(repr=False, default=None)

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, chars: int = 4000) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_text(errors="replace")[-chars:]
        return ""

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()  # type: ignore[attr-defined]


def spawn(name: str, argv: list[str], env: dict[str, str], log_dir: Path | None = None) -> Background:
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix=f"rp-{name}-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{name}.log"
    log = log_path.open("wb")
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module, no shell
        argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
    )
    return Background(name, process, log_path, log)


def _answers_http(port: int, path: str) -> bool:
    connection = http.client.HTTPConnection(HOST, port, timeout=2)
    try:
        connection.request("GET", path)
        connection.getresponse().read()
        return True
    except OSError:
        return False
    finally:
        connection.close()


def _wait_listening(child: Background, path: str, timeout: float) -> int:
    """Poll the child's log for the port it reports, then until that port answers HTTP."""
    port = 0

    def ready() -> bool:
        nonlocal port
        if not child.alive():
            raise StartError(f"{child.name} exited with {child.process.returncode}:\n{child.log_tail()}")
        if not port:
            match = LISTENING.search(child.log_tail(1 << 16))
            port = int(match.group(1)) if match else 0
        return bool(port) and _answers_http(port, path)

    if not poll(ready, timeout):
        child.stop()
        raise StartError(f"{child.name} did not answer within {timeout:.0f}s:\n{child.log_tail()}")
    return port


@dataclass
class Service:
    child: Background
    base_url: str
    port: int
    keys: dict[str, str]

    def stop(self) -> None:
        self.child.stop()


def start_service(
    keys: dict[str, str],
    *,
    store_endpoint: str | None = None,
    extra_env: dict[str, str] | None = None,
    log_dir: Path | None = None,
    timeout: float = 90.0,
) -> Service:
    """`python -m devkit.server` (what `make run` runs) on a free port with the given keys.

    Without `store_endpoint` it embeds its own in-memory moto store, exactly as `make run`.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB")}
    env.update(local_aws_env())
    env.update({KEY_VARIABLES[target]: raw for target, raw in keys.items()})
    # PORT=0: the kernel picks a free port and the server prints it, so no port is guessed.
    env.update({"PORT": "0", "POWERTOOLS_METRICS_DISABLED": "true", "PYTHONUNBUFFERED": "1"})
    if store_endpoint:
        env["AWS_ENDPOINT_URL_DYNAMODB"] = store_endpoint
    env.update(extra_env or {})
    child = spawn("service", [sys.executable, "-m", "devkit.server"], env, log_dir)
    # Any HTTP answer (401 here: no key) means the handler stack and the store are up.
    port = _wait_listening(child, "/resource-provisioning/k8s/retained-accounts", timeout)
    return Service(child, f"http://{HOST}:{port}", port, keys)


def dynamodb(endpoint: str) -> Any:
    """A boto3 DynamoDB client for a local store (our own reads, around the service)."""
    import boto3
    from botocore.config import Config

    env = local_aws_env()
    return boto3.session.Session().client(
        "dynamodb", endpoint_url=endpoint, region_name=env["AWS_DEFAULT_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        config=Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=5, read_timeout=30),
    )


def allocation_reader(endpoint: str, table: str) -> Callable[[str], dict[str, Any] | None]:
    """Reads one allocation item straight from the store (consistent read), as plain values."""
    from chalicelib.allocations.repository import allocation_key
    from chalicelib.store.codec import from_item

    client = dynamodb(endpoint)

    def read(allocation_id: str) -> dict[str, Any] | None:
        item = client.get_item(TableName=table, Key=allocation_key(allocation_id), ConsistentRead=True).get("Item")
        return from_item(item)

    return read
