"""`make run`'s server: its own empty store per instance, keys from the environment or generated,
and an HTTP front (waitress) whose own answers are in the contract's shape, over raw sockets."""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from devkit.keys import KEY_VARIABLES, MIN_KEY_LENGTH

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "11111111-1111-4111-8111-111111111111"
KEYS = {"RP_SITE_KEY_K8S": "k8s-secret-0123456789", "RP_SITE_KEY_SLURM": "slurm-secret-0123456789",
        "RP_SERVICE_KEY": "svc-secret-0123456789"}
SOCKET_TIMEOUT = 30.0  # a bound on every wait below, never a pause: each returns as soon as the server acts


@dataclass
class Running:
    url: str
    lines: list[str]  # stdout up to the banner
    pid: int

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.url.removeprefix("http://").split(":")
        return host, int(port)


def server_env(**env: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL", *KEY_VARIABLES.values())}
    environment.update({"PORT": "0", "RP_LOG_LEVEL": "WARNING", **env})
    return environment


@contextmanager
def local_server(output: list[str] | None = None, **env: str) -> Iterator[Running]:
    """The server on a free port; `output`, when given, receives every line it printed (stdout, then
    stderr) once it has stopped."""
    with tempfile.TemporaryFile("w+") as errors:
        proc = subprocess.Popen([sys.executable, "-m", "devkit.server"], cwd=ROOT, env=server_env(**env),
                                stdout=subprocess.PIPE, stderr=errors, text=True)
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
            errors.seek(0)
            assert url, "".join(lines) + errors.read()  # the banner comes last: the key lines are already read
            yield Running(url, lines, proc.pid)
        finally:
            proc.terminate()
            rest, _ = proc.communicate(timeout=20)
            if output is not None:
                errors.seek(0)
                output.extend([*lines, *rest.splitlines(keepends=True), *errors.read().splitlines(keepends=True)])


def call(url: str, method: str, path: str, key: str | None, body: dict | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    sent = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {}),
            **(headers or {})}
    request = urllib.request.Request(url + path, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def connect(server: Running) -> socket.socket:
    return socket.create_connection(server.address, timeout=SOCKET_TIMEOUT)


def until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (EOF)."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def exchange(server: Running, raw: bytes) -> bytes:
    with closing(connect(server)) as sock:
        sock.sendall(raw)
        return until_closed(sock)


def responses(raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Split a byte stream into HTTP responses: (status, headers with lowercase names, body)."""
    answers = []
    while raw:
        head, _, raw = raw.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, value in (h.split(":", 1) for h in header_lines)}
        # 204 and 304 carry no body and no Content-Length (RFC 9110 8.6): their header's end is their end.
        length = 0 if status_line.split(" ")[1] in ("204", "304") else int(headers["content-length"])
        answers.append((int(status_line.split(" ")[1]), headers, raw[:length]))
        raw = raw[length:]
    return answers


def the_one_answer(raw: bytes) -> tuple[int, str, bytes]:
    [(status, headers, body)] = responses(raw)
    return status, headers["content-type"], body


def test_two_servers_side_by_side_have_their_own_empty_stores():
    with local_server(**KEYS) as first, local_server(**KEYS) as second:
        assert first.url != second.url
        event = {"type": "project_binding", "bindingId": "b-1", "projectId": PROJECT,
                 "providerProjectRef": "wp-1", "state": "established", "revision": 1}
        assert call(first.url, "POST", "/api/resource-provisioning/events", KEYS["RP_SERVICE_KEY"],
                    {"events": [event]}) == (200, {"applied": 1, "ignored": 0})
        assert call(first.url, "GET", "/resource-provisioning/k8s/projects/wp-1", KEYS["RP_SITE_KEY_K8S"]) == (
            200, {"projectId": PROJECT})
        assert call(second.url, "GET", "/resource-provisioning/k8s/projects/wp-1", KEYS["RP_SITE_KEY_K8S"]) == (
            404, {"code": "not_found"})
        assert call(second.url, "GET", "/resource-provisioning/k8s/projects/wp-1", "wrong") == (
            401, {"code": "unauthorized"})


def test_missing_keys_are_generated_and_printed_once():
    with local_server(RP_SITE_KEY_K8S=KEYS["RP_SITE_KEY_K8S"]) as server:
        printed = dict(re.findall(r"generated (RP_\w+)=(\S+)", "".join(server.lines)))
        assert set(printed) == {"RP_SITE_KEY_SLURM", "RP_SERVICE_KEY", "RP_PLACEMENT_KEY"}
        status, _ = call(server.url, "GET", "/placement/resource_providers", None,
                         headers={"x-auth-token": printed["RP_PLACEMENT_KEY"]})
        assert status == 200
        assert call(server.url, "GET", "/resource-provisioning/slurm/retained-accounts",
                    printed["RP_SITE_KEY_SLURM"]) == (200, {"revision": 0, "accounts": []})
        assert call(server.url, "GET", "/resource-provisioning/k8s/retained-accounts",
                    KEYS["RP_SITE_KEY_K8S"])[0] == 200


# --- keys that refuse the start ----------------------------------------------------------------


def start_refused(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "devkit.server"], cwd=ROOT, env=server_env(**env),
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(("first", "second"), [
    ("RP_SITE_KEY_K8S", "RP_SITE_KEY_SLURM"), ("RP_SITE_KEY_K8S", "RP_SERVICE_KEY"),
    ("RP_SITE_KEY_SLURM", "RP_SERVICE_KEY"),
])
def test_two_variables_with_one_key_refuse_the_start(first, second):
    shared = "one-key-for-two-principals"
    done = start_refused(**{first: shared, second: shared})
    assert done.returncode != 0
    assert f"{first} and {second} hold the same key" in done.stderr
    assert shared not in done.stderr + done.stdout  # a key is never printed back
    assert "listening" not in done.stdout


def test_a_short_key_refuses_the_start():
    short = "x" * (MIN_KEY_LENGTH - 1)
    done = start_refused(RP_SERVICE_KEY=short)
    assert done.returncode != 0
    assert f"RP_SERVICE_KEY is {MIN_KEY_LENGTH - 1} characters long" in done.stderr
    assert short not in done.stderr + done.stdout
    assert "listening" not in done.stdout


def test_a_port_in_use_is_one_line_naming_port():
    with closing(socket.socket()) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = start_refused(PORT=str(port))
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        f"make run: port {port} on 127.0.0.1 is in use (another make run?): stop that server, "
        f"or choose another port, e.g. make run PORT={port + 1}"]
    assert "listening" not in done.stdout and "Traceback" not in done.stderr


def test_a_setting_that_cannot_be_read_is_one_line_naming_the_variable():
    done = start_refused(RP_STORE_CONNECT_TIMEOUT="soon")
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == ["make run: RP_STORE_CONNECT_TIMEOUT must be a number (seconds)"]
    assert "soon" not in done.stderr and "listening" not in done.stdout


@pytest.mark.parametrize(("env", "says"), [
    # read on Placement's first request when deployed: without this check, every Placement request was a 500
    ({"RP_PLACEMENT_CANDIDATE_STRATEGY": "random"},
     "RP_PLACEMENT_CANDIDATE_STRATEGY must be one of: depth-first, breadth-first"),
    ({"RP_PLACEMENT_MAX_CANDIDATES": "0"}, "RP_PLACEMENT_MAX_CANDIDATES must be at least 1"),
    ({"RP_PLACEMENT_AUTH": "ldap"}, "RP_PLACEMENT_AUTH must be one of: keys, keystone"),
    ({"RP_PLACEMENT_POLICY_FILE": "/nonexistent/policy.yaml"},
     "RP_PLACEMENT_POLICY_FILE names a file that cannot be read"),
    # Keystone's settings, read on the first token when deployed
    # (blank: what another test's environment may have left, e.g. chalice.test's stage variables, is unset)
    ({"RP_PLACEMENT_AUTH": "keystone", "RP_OPENSTACK_AUTH_URL": "http://127.0.0.1:9/v3",
      "RP_OPENSTACK_USERNAME": "placement", "RP_OPENSTACK_PASSWORD": "", "RP_OPENSTACK_PROJECT_NAME": "",
      "RP_COMMITMENTS_SECRET_ID": ""},
     "Keystone token validation needs RP_OPENSTACK_*: RP_OPENSTACK_PASSWORD, RP_OPENSTACK_PROJECT_NAME are "
     "required (or RP_OPENSTACK_APPLICATION_CREDENTIAL_ID and RP_OPENSTACK_APPLICATION_CREDENTIAL_SECRET "
     "instead of a password)"),
    # read as the app is imported (deployed: logged, the default used)
    ({"RP_LOG_LEVEL": "LOUD"}, "RP_LOG_LEVEL must be one of: DEBUG, INFO, WARNING, ERROR, CRITICAL"),
    ({"RP_LOG_FORMAT": "xml"}, "RP_LOG_FORMAT must be one of: json, text"),
    # read by each commitment pass: refused at the start when `make run` runs the sync
    ({"RP_COMMITMENTS_INTERVAL_SECONDS": "3600", "RP_COMMITMENTS_LEASE_SECONDS": "soon"},
     "RP_COMMITMENTS_LEASE_SECONDS must be a number (seconds)"),
    ({"RP_COMMITMENTS_INTERVAL_SECONDS": "3600", "RP_COMMITMENTS_CONCURRENCY": "lots"},
     "RP_COMMITMENTS_CONCURRENCY must be a whole number"),
])
def test_a_setting_read_later_is_refused_at_the_start(env, says):
    done = start_refused(**env)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [f"make run: {says}"]
    assert "listening" not in done.stdout and "Traceback" not in done.stderr


def test_a_port_that_is_no_port_is_named():
    done = start_refused(PORT="http")
    assert done.returncode != 0 and "PORT='http' is not a port" in done.stderr


def test_a_key_of_the_minimum_length_is_accepted():
    key = "k" * MIN_KEY_LENGTH
    with local_server(RP_SITE_KEY_K8S=key) as server:
        assert call(server.url, "GET", "/resource-provisioning/k8s/retained-accounts", key)[0] == 200


def test_start_up_does_not_use_the_request_paths_store_timeouts():
    # A fault test serves with one attempt and a 1 s read timeout; on a busy machine the table's creation
    # took longer and the server exited. Start-up has timeouts of its own: even with request-path timeouts
    # no store answers within, the server starts, and a request is answered, never a crash. Whether that
    # answer is 503 depends on the machine's speed (a socket timeout is at least 1 ms, which a warm
    # loopback store may meet), so either is accepted here; the 503 itself is tested by the wire-level
    # faults (tests/support/faults.py).
    with local_server(RP_STORE_READ_TIMEOUT="0.000001", RP_STORE_CONNECT_TIMEOUT="0.000001",
                      RP_STORE_MAX_ATTEMPTS="1") as server:
        key = next(line.split("=", 1)[1].strip() for line in server.lines if "RP_SITE_KEY_K8S=" in line)
        status, body = call(server.url, "GET", "/resource-provisioning/k8s/retained-accounts", key)[:2]
        assert (status, body) in ((503, {"code": "unavailable"}), (200, {"revision": 0, "accounts": []}))


# --- the HTTP front over raw sockets -----------------------------------------------------------


@pytest.fixture(scope="module")
def front():
    """One server for the socket tests; silent connections are dropped after 2 s."""
    with local_server(RP_DEV_CHANNEL_TIMEOUT="2", RP_DEV_THREADS="2", RP_PLACEMENT_KEY=PLACEMENT_KEY,
                      **KEYS) as server:
        yield server


PLACEMENT_KEY = "placement-secret-0123456789"
INVALID_REQUEST = (400, "application/json", b'{"code":"invalid_request"}')
TOO_LARGE = (400, "application/json", b'{"code":"too_large"}')
MARKER = b"<script>echo-me</script>"


@pytest.mark.parametrize("raw", [
    b"GARBAGE\r\n\r\n",
    b"get /resource-provisioning/" + MARKER + b" HTTP/1.1\r\nHost: x\r\n\r\n",  # methods are upper case
    b"GET /resource-provisioning/k8s/retained-accounts HTTP/1.1 " + MARKER + b"\r\nHost: x\r\n\r\n",
    b"GET /resource-provisioning/k8s/retained-accounts HTTP/1.1\r\n " + MARKER + b"\r\n\r\n",  # bad folding
    b"POST /resource-provisioning/k8s/reports HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
    b"POST /resource-provisioning/k8s/reports HTTP/1.1\r\nTransfer-Encoding: " + MARKER + b"\r\n\r\n",
], ids=["no-target", "lower-case-method", "extra-field", "bad-header-line", "negative-length", "unknown-coding"])
def test_a_malformed_request_is_invalid_request_without_echo(front, raw):
    assert the_one_answer(exchange(front, raw)) == INVALID_REQUEST


@pytest.mark.parametrize("version", [b"HTTP/2.0", b"HTTP/1.2", b"HTTP/0.9", b""])
def test_a_bad_http_version_is_invalid_request(front, version):
    line = b"GET /resource-provisioning/k8s/retained-accounts" + (b" " + version if version else b"")
    assert the_one_answer(exchange(front, line + b"\r\n\r\n")) == INVALID_REQUEST


# The server reads no more than the 10 KB of request line and headers API Gateway takes; a client
# sending more than it reads would see the answer cut by a reset, so these send exactly that much.
HEADER_LIMIT = 10 * 1024


def test_an_over_long_header_is_too_large(front):
    start = b"GET /resource-provisioning/k8s/retained-accounts HTTP/1.1\r\nX-Padding: "
    assert the_one_answer(exchange(front, start + b"a" * (HEADER_LIMIT - len(start)))) == TOO_LARGE


def test_an_over_long_url_is_too_large(front):
    start = b"GET /resource-provisioning/k8s/allocations/"
    assert the_one_answer(exchange(front, start + b"a" * (HEADER_LIMIT - len(start)))) == TOO_LARGE


def test_a_body_over_10_mb_is_refused_before_it_is_sent(front):
    # Only the headers are sent: an answer shows the server did not wait for the body.
    raw = b"POST /resource-provisioning/k8s/reports HTTP/1.1\r\nContent-Length: 10485761\r\n\r\n"
    assert the_one_answer(exchange(front, raw)) == TOO_LARGE


def test_a_body_over_10_mb_under_placement_is_placements_400_with_a_request_id(front):
    """Issue 14 item 32: make run answers it in Placement's error format (deployed, API Gateway's one answer)."""
    raw = (b"POST /placement/resource_providers HTTP/1.1\r\nContent-Type: application/json\r\n"
           b"OpenStack-API-Version: placement 1.28\r\nContent-Length: 10485761\r\n\r\n")
    [(status, headers, body)] = responses(exchange(front, raw))
    (error,) = json.loads(body)["errors"]
    assert (status, headers["content-type"], error["status"]) == (400, "application/json", 400)
    assert error["request_id"] == headers["x-openstack-request-id"] and error["code"] == "placement.undefined_code"
    assert headers["openstack-api-version"] == "placement 1.28"


def test_a_chunked_body_is_the_request_body_never_a_next_request(front):
    event = json.dumps({"events": [{"type": "project_binding", "bindingId": "chunked-1", "projectId": PROJECT,
                                    "providerProjectRef": "wp-chunked", "state": "established",
                                    "revision": 1}]}).encode()
    half = len(event) // 2
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (event[:half], event[half:])) + b"0\r\n\r\n"
    first = (b"POST /api/resource-provisioning/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Authorization: Bearer " + KEYS["RP_SERVICE_KEY"].encode() + b"\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n" + chunks)
    second = (b"GET /resource-provisioning/k8s/projects/wp-chunked HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
              b"Authorization: Bearer " + KEYS["RP_SITE_KEY_K8S"].encode() + b"\r\n\r\n")
    answers = responses(exchange(front, first + second))  # pipelined on one connection
    assert [(status, json.loads(body)) for status, _, body in answers] == [
        (200, {"applied": 1, "ignored": 0}), (200, {"projectId": PROJECT})]


def test_answers_without_a_body_keep_the_connection_open(front):
    """A 204 keeps an HTTP/1.1 connection (waitress alone closes it): keystoneauth1's sessions and the
    bench's clients would otherwise connect anew after every allocation write."""
    def trait(method: str, last: bool = False) -> bytes:
        return (f"{method} /placement/traits/CUSTOM_KEEP_ALIVE HTTP/1.1\r\nHost: x\r\n"
                f"X-Auth-Token: {PLACEMENT_KEY}\r\nOpenStack-API-Version: placement 1.6\r\n"
                + ("Connection: close\r\n" if last else "") + "\r\n").encode()

    answers = responses(exchange(front, trait("PUT") + trait("PUT") + trait("GET") + trait("GET", last=True)))
    assert [status for status, _, _ in answers] == [201, 204, 204, 204]
    assert [headers.get("connection") for _, headers, _ in answers] == [None, None, None, "close"]


def test_path_parameters_reach_the_app_percent_decoded_once(front):
    event = {"type": "project_binding", "bindingId": "colon-1", "projectId": PROJECT,
             "providerProjectRef": "wp:colon.1", "state": "established", "revision": 1}
    assert call(front.url, "POST", "/api/resource-provisioning/events", KEYS["RP_SERVICE_KEY"],
                {"events": [event]}) == (200, {"applied": 1, "ignored": 0})
    k8s = KEYS["RP_SITE_KEY_K8S"]
    assert call(front.url, "GET", "/resource-provisioning/k8s/projects/wp%3Acolon.1", k8s) == (
        200, {"projectId": PROJECT})


@pytest.mark.parametrize("key", ["RP_SITE_KEY_K8S", None])
def test_a_head_answer_states_its_get_answers_length_and_sends_no_body(front, key):
    path = "/resource-provisioning/k8s/retained-accounts"
    auth = f"Authorization: Bearer {KEYS[key]}\r\n".encode() if key else b""
    get, head = (responses(exchange(front, f"{method} {path} HTTP/1.1\r\nHost: x\r\n".encode() + auth
                                    + b"Connection: close\r\n\r\n"))[0] for method in ("GET", "HEAD"))
    assert head[0] == get[0] == (200 if key else 401)
    assert int(head[1]["content-length"]) == len(get[2]) > 0 and head[2] == b""
    assert head[1]["content-type"] == get[1]["content-type"]


def test_path_parameters_are_not_decoded_twice(front):
    event = {"type": "project_binding", "bindingId": "colon-2", "projectId": PROJECT,
             "providerProjectRef": "wp:colon.2", "state": "established", "revision": 1}
    assert call(front.url, "POST", "/api/resource-provisioning/events", KEYS["RP_SERVICE_KEY"],
                {"events": [event]}) == (200, {"applied": 1, "ignored": 0})
    # Decoded once, the ref is "wp%3Acolon.2", which no Opaque value matches; decoded twice, it is the binding's.
    assert call(front.url, "GET", "/resource-provisioning/k8s/projects/wp%253Acolon.2", KEYS["RP_SITE_KEY_K8S"]) == (
        400, {"code": "invalid_provider_project_ref"})


def test_a_client_sending_half_a_body_is_dropped_after_the_timeout(front):
    with closing(connect(front)) as sock:
        sock.sendall(b"POST /resource-provisioning/k8s/reports HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 100\r\n\r\n{\"requestId\"")
        started = time.monotonic()
        assert until_closed(sock) == b""  # closed without an answer (a socket timeout would raise)
    assert time.monotonic() - started < SOCKET_TIMEOUT


def server_threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^Threads:\s+(\d+)$", status, re.M).group(1))


def test_many_idle_clients_hold_no_thread_and_do_not_block_others():
    idle = 60  # far more than the server's 2 request threads, under its 100 connections
    # Silent connections are kept for the whole test (a timeout would hide a thread per connection).
    with local_server(RP_DEV_CHANNEL_TIMEOUT="600", RP_DEV_THREADS="2", **KEYS) as server, ExitStack() as stack:
        before = server_threads(server.pid)
        for _ in range(idle):
            sock = stack.enter_context(closing(connect(server)))
            sock.sendall(b"POST /resource-provisioning/k8s/reports HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{")
        # Every idle client is connected and has sent its part before this request is served.
        assert call(server.url, "GET", "/resource-provisioning/k8s/retained-accounts",
                    KEYS["RP_SITE_KEY_K8S"]) == (200, {"revision": 0, "accounts": []})
        assert server_threads(server.pid) < before + 10  # a thread per connection would add 60


def test_disconnecting_clients_leave_only_json_log_lines():
    output: list[str] = []
    with local_server(output, RP_LOG_LEVEL="INFO", **KEYS) as server:
        request = (b"GET /resource-provisioning/k8s/retained-accounts HTTP/1.1\r\nHost: x\r\n"
                   b"Authorization: Bearer " + KEYS["RP_SITE_KEY_K8S"].encode() + b"\r\n\r\n")
        for _ in range(20):
            with closing(connect(server)) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.sendall(request)  # then reset, before (or while) the answer is written
        assert call(server.url, "GET", "/resource-provisioning/k8s/retained-accounts",
                    KEYS["RP_SITE_KEY_K8S"])[0] == 200
    banner = next(i for i, line in enumerate(output) if "listening on" in line)
    logged = [line for line in output[banner + 1:] if line.strip()]
    assert logged, "RP_LOG_LEVEL=INFO logs each request"
    for line in logged:
        assert isinstance(json.loads(line), dict), line
    assert not any("Traceback" in line for line in output)
