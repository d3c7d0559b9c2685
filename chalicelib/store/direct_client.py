"""DynamoDB's data-plane calls sent directly: JSON over one keep-alive connection per thread (decision 0052).

A boto3 call spends about 1.3 ms of CPU in botocore for a one-item read (model-driven validation and
serialization, endpoint rules, a general request model, signing, urllib3, event dispatch, parsing) where
the exchange itself needs about 0.35 ms; on Lambda that CPU is billed, and it was most of a Placement
read's time. `DirectClient` sends the operations in `DIRECT_OPERATIONS` itself and keeps botocore for
everything it does well and that is not per call:

- credentials: the boto3 session's provider chain (Lambda's role, refreshed as botocore refreshes it);
- retries: botocore's standard mode (its conditions, backoff with jitter and retry quota, DynamoDB's CRC32
  check), with `RP_STORE_MAX_ATTEMPTS` attempts;
- errors: the same `ClientError` classes with the same `response` (`Error`, `CancellationReasons`, ...),
  transport failures as the same `BotoCoreError`s (`EndpointConnectionError`, `ReadTimeoutError`, ...);
- events: `provide-client-params`, `before-parameter-build` (botocore's idempotency token),
  `before-call`, `before-send` (per attempt; a handler may answer), `after-call`, `after-call-error` are
  emitted on the wrapped client's emitter as botocore emits them, so the round-trip counter and the
  wire-level faults of the tests see both transports alike;
- every other operation (tables, TTL, paginators, `exceptions`, `meta`): the wrapped boto3 client.

`RP_STORE_TRANSPORT=botocore` turns it off (docs/configuration.md).
"""

from __future__ import annotations

import base64
import contextlib
import json
import select
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)
from botocore.retries import quota, standard

from chalicelib.store.client import BINARY_TAGS
from chalicelib.store.sigv4 import Credentials, Signer

# Client method -> DynamoDB operation: the calls whose request and answer are plain JSON.
DIRECT_OPERATIONS = {
    "get_item": "GetItem",
    "batch_get_item": "BatchGetItem",
    "query": "Query",
    "put_item": "PutItem",
    "update_item": "UpdateItem",
    "delete_item": "DeleteItem",
    "transact_write_items": "TransactWriteItems",
    "transact_get_items": "TransactGetItems",
    "batch_write_item": "BatchWriteItem",
}
_TARGET_PREFIX = "DynamoDB_20120810."
_MAX_LINE = 65536


class ResponseBody:
    """A body read already, as AWSResponse reads one (urllib3's `stream()`)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._data


def _encode_binary(value: Any) -> str:
    """json.dumps' fallback: a binary attribute value (B, BS) goes on the wire as base64, as botocore sends it."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"cannot send a {type(value).__name__} to DynamoDB")


def _decode_binary(value: Any) -> None:
    """Binary attribute values of an answer, base64 on the wire, as bytes (botocore parses them so)."""
    if isinstance(value, dict):
        for tag, inner in value.items():
            if tag == "B" and isinstance(inner, str) and len(value) == 1:
                value["B"] = base64.b64decode(inner)
            elif tag == "BS" and len(value) == 1 and isinstance(inner, list) and all(isinstance(v, str)
                                                                                      for v in inner):
                value["BS"] = [base64.b64decode(v) for v in inner]
            else:
                _decode_binary(inner)
    elif isinstance(value, list):
        for inner in value:
            _decode_binary(inner)


def _checksum_holds(http_response: AWSResponse) -> bool:
    """DynamoDB's CRC32 of the body (`x-amz-crc32`), where it sends one, matches the body read."""
    expected = http_response.headers.get("x-amz-crc32")
    return expected is None or zlib.crc32(http_response.content) & 0xFFFFFFFF == int(expected)


class _Stale(Exception):
    """The connection was closed or reset under a request, before any answer came back."""


class _Connection:
    """One HTTP/1.1 keep-alive connection to the store: a request out in one write, its answer read by
    Content-Length (or chunks). http.client parses every answer's headers with the email package, a fifth
    of a call's CPU here; DynamoDB's answers are a status line, a few headers and a JSON body."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb")

    def dropped(self) -> bool:
        """An idle keep-alive connection the store closed (readable with nothing asked means EOF or garbage)."""
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.reader.close()
        with contextlib.suppress(OSError):
            self.sock.close()

    def exchange(self, message: bytes) -> tuple[int, dict[str, str], bytes, bool]:
        """(status, headers with lower-case names, body, whether the connection stays open)."""
        try:
            self.sock.sendall(message)
            line = self.reader.readline(_MAX_LINE)
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError) as exc:
            raise _Stale() from exc
        if not line:
            raise _Stale()  # closed before answering: nothing of an answer came back
        version, _, rest = line.partition(b" ")
        if not version.startswith(b"HTTP/1."):
            raise ValueError("not an HTTP/1.x answer")
        status = int(rest[:3])
        headers: dict[str, str] = {}
        while True:
            line = self.reader.readline(_MAX_LINE)
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise ValueError("the answer's headers were cut off")
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        keep = version != b"HTTP/1.0" and headers.get("connection", "").lower() != "close"
        if "content-length" in headers:
            data = self._read(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            data = self._chunks()
        else:
            data, keep = self.reader.read(), False  # the body ends with the connection
        return status, headers, data, keep

    def _read(self, size: int) -> bytes:
        data = self.reader.read(size)
        if len(data) != size:
            raise ValueError("the answer's body was cut off")
        return data

    def _chunks(self) -> bytes:
        parts = []
        while size := int(self.reader.readline(_MAX_LINE).split(b";")[0].strip() or b"0", 16):
            parts.append(self._read(size))
            self._read(2)  # the CRLF after the chunk
        while self.reader.readline(_MAX_LINE) not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(parts)


class DirectClient:
    def __init__(self, boto_client: Any, credentials: Any, *, connect_timeout: float, read_timeout: float,
                 max_attempts: int) -> None:
        self._boto = boto_client
        self.meta = boto_client.meta
        self._credentials = credentials  # botocore's (refreshable) credentials, or None
        self._endpoint = boto_client.meta.endpoint_url
        parts = urlsplit(self._endpoint)
        https = parts.scheme == "https"
        self._hostname = parts.hostname or "localhost"
        self._port = parts.port or (443 if https else 80)
        default_port = (parts.scheme, self._port) in (("https", 443), ("http", 80))
        self._host = self._hostname if default_port else f"{self._hostname}:{self._port}"
        self._path = parts.path or "/"
        self._ssl = ssl.create_default_context() if https else None
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._signer = Signer(boto_client.meta.region_name)
        self._service_id = boto_client.meta.service_model.service_id.hyphenize()
        self._models = {op: boto_client.meta.service_model.operation_model(op) for op in DIRECT_OPERATIONS.values()}
        self._retries = standard.RetryPolicy(
            retry_checker=standard.StandardRetryConditions(max_attempts=max_attempts),
            retry_backoff=standard.ExponentialBackoff(),
        )
        self._quota = standard.RetryQuotaChecker(
            quota.RetryQuota(), standard.ThrottlingErrorDetector(standard.RetryEventAdapter()))
        self._local = threading.local()

    # -- the client surface -------------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        """Called only for what the instance does not have: a direct operation's method is made once, on its
        first use; anything else is the boto3 client's."""
        operation = DIRECT_OPERATIONS.get(name)
        if operation is None:
            return getattr(self._boto, name)

        def call(**params: Any) -> dict[str, Any]:
            return self._call(operation, params)

        call.__name__ = name
        setattr(self, name, call)
        return call

    # -- one call ------------------------------------------------------------------------------------------

    def _emit(self, event: str, operation: str, **kwargs: Any) -> list[Any]:
        return self.meta.events.emit(f"{event}.{self._service_id}.{operation}", **kwargs)  # type: ignore[no-any-return]

    def _call(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        model = self._models[operation]
        context: dict[str, Any] = {"client_region": self.meta.region_name}
        responses = self._emit("provide-client-params", operation, params=params, model=model, context=context)
        params = next((r for _, r in responses if r is not None), params)
        self._emit("before-parameter-build", operation, params=params, model=model, context=context)
        body = json.dumps(params, default=_encode_binary, separators=(",", ":")).encode("utf-8")
        request_dict = {"url_path": self._path, "query_string": "", "method": "POST", "headers": {},
                        "body": body, "url": self._endpoint, "context": context}
        _, answered = self.meta.events.emit_until_response(
            f"before-call.{self._service_id}.{operation}", model=model, params=request_dict,
            request_signer=None, context=context)
        if answered is not None:
            http_response, parsed = answered
        else:
            try:
                http_response, parsed = self._attempts(operation, model, request_dict["body"], context)
            except Exception as exc:
                self._emit("after-call-error", operation, exception=exc, context=context)
                raise
        self._emit("after-call", operation, http_response=http_response, parsed=parsed, model=model,
                   context=context)
        self._quota.release_retry_quota(context, http_response)
        if http_response.status_code >= 300:
            code = parsed.get("Error", {}).get("Code")
            raise self._boto.exceptions.from_code(code)(parsed, operation)
        answer: dict[str, Any] = parsed
        return answer

    def _attempts(self, operation: str, model: Any, body: bytes, context: dict[str, Any]) -> tuple[Any, Any]:
        attempt = 0
        while True:
            attempt += 1
            request = AWSPreparedRequest("POST", self._endpoint, self._signed_headers(operation, body), body,
                                         stream_output=False)
            http_response = parsed = caught = None
            try:
                responses = self._emit("before-send", operation, request=request)
                http_response = next((r for _, r in responses if r is not None), None)
                if http_response is None:
                    http_response = self._send(request)
                parsed = self._parse(http_response, attempt)
            except Exception as exc:  # noqa: BLE001 - judged by the retry policy, then raised as botocore does
                caught = exc
            if (caught is None and http_response is not None and http_response.status_code < 300
                    and _checksum_holds(http_response)):
                return http_response, parsed  # what the policy would say of it: of a success only the CRC counts
            retry = standard.RetryContext(attempt_number=attempt, operation_model=model, parsed_response=parsed,
                                          http_response=http_response, caught_exception=caught,
                                          request_context=context)
            if self._retries.should_retry(retry) and self._quota.acquire_retry_quota(retry):
                time.sleep(self._retries.compute_retry_delay(retry))
                continue
            if caught is not None:
                raise caught
            return http_response, parsed

    def _signed_headers(self, operation: str, body: bytes) -> dict[str, str]:
        if self._credentials is None:
            raise NoCredentialsError()
        frozen = self._credentials.get_frozen_credentials()
        amz_date = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        return self._signer.headers(Credentials(frozen.access_key, frozen.secret_key, frozen.token), self._host,
                                    _TARGET_PREFIX + operation, body, amz_date)

    # -- the wire ------------------------------------------------------------------------------------------

    def _connection(self) -> tuple[_Connection, bool]:
        """This thread's connection, and whether it carried a call before (`reused`)."""
        conn: _Connection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.dropped():
            self._forget(conn)
            conn = None
        if conn is not None:
            return conn, True
        try:
            sock = socket.create_connection((self._hostname, self._port), timeout=self._connect_timeout)
            if self._ssl is not None:
                sock = self._ssl.wrap_socket(sock, server_hostname=self._hostname)
        except TimeoutError as exc:
            raise ConnectTimeoutError(endpoint_url=self._endpoint) from exc
        except OSError as exc:
            raise EndpointConnectionError(endpoint_url=self._endpoint) from exc
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        sock.settimeout(self._read_timeout)
        conn = self._local.conn = _Connection(sock)
        return conn, False

    def _send(self, request: AWSPreparedRequest) -> AWSResponse:
        head = [f"POST {self._path} HTTP/1.1", *(f"{name}: {value}" for name, value in request.headers.items()),
                f"Content-Length: {len(request.body)}", "", ""]
        message = "\r\n".join(head).encode("latin-1") + request.body
        conn, reused = self._connection()
        try:
            return self._exchange(conn, message)
        except _Stale:
            if not reused:
                raise ConnectionClosedError(endpoint_url=self._endpoint) from None
        # A kept connection the peer had closed or reset without our seeing it (a closed fd whose RST is not
        # sent yet, a middlebox's idle timeout): sent once more on a new one, as urllib3 does; not an attempt.
        conn, _ = self._connection()
        try:
            return self._exchange(conn, message)
        except _Stale:
            raise ConnectionClosedError(endpoint_url=self._endpoint) from None

    def _exchange(self, conn: _Connection, message: bytes) -> AWSResponse:
        try:
            status, headers, data, keep = conn.exchange(message)
        except TimeoutError as exc:
            self._forget(conn)
            raise ReadTimeoutError(endpoint_url=self._endpoint) from exc
        except _Stale:
            self._forget(conn)
            raise
        except (OSError, ValueError) as exc:
            self._forget(conn)
            raise ConnectionClosedError(endpoint_url=self._endpoint) from exc
        if not keep:
            self._forget(conn)
        return AWSResponse(self._endpoint, status, headers, ResponseBody(data))

    def _forget(self, conn: _Connection) -> None:
        conn.close()
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None

    def _parse(self, http_response: AWSResponse, attempt: int) -> dict[str, Any]:
        data = http_response.content
        # botocore's ResponseMetadata but its HTTPHeaders (nothing here reads them)
        metadata = {"RequestId": http_response.headers.get("x-amzn-RequestId", ""),
                    "HTTPStatusCode": http_response.status_code, "RetryAttempts": attempt - 1}
        try:
            loaded = json.loads(data) if data else {}
        except ValueError:
            loaded = None
        if not isinstance(loaded, dict):
            loaded = {}
        if http_response.status_code < 300:
            if any(tag in data for tag in BINARY_TAGS):
                _decode_binary(loaded)
            loaded["ResponseMetadata"] = metadata
            return loaded
        kind = str(loaded.get("__type") or "")
        code = kind.rsplit("#", 1)[-1] or str(http_response.status_code)
        message = str(loaded.get("message") or loaded.get("Message") or "")
        # The error's modeled fields (CancellationReasons, Item, ...) beside Error, as botocore adds them.
        shape = self.meta.service_model.shape_for_error_code(code)
        error: dict[str, Any] = {name: loaded[name] for name in (shape.members if shape else ()) if name in loaded}
        if any(tag in data for tag in BINARY_TAGS):
            _decode_binary(error)
        error["Error"] = {"Code": code, "Message": message}
        error["ResponseMetadata"] = metadata
        return error
