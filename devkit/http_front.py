"""`make run`'s HTTP front: waitress serving the local gateway, every answer in the contract's shape.

waitress parses requests (chunked bodies included: they reach the app decoded, never as a next
request), holds idle and half-sent connections without a thread each, drops a connection silent
for `channel_timeout` seconds, and refuses oversized headers and bodies before reading them.
What it answers by itself (malformed request lines, oversized headers or bodies, unsupported
transfer codings) and HTTP versions other than 1.0/1.1 are answered here as `{"code": ...}`,
never an HTML or text page echoing the input. Its log lines are one-line JSON on stderr.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from waitress.channel import HTTPChannel
from waitress.server import create_server
from waitress.task import ErrorTask, WSGITask

from devkit.gateway import GATEWAY_MAX_BODY, too_large

# API Gateway's limit on the request line and headers together (bytes).
GATEWAY_MAX_HEADER = 10 * 1024
SUPPORTED_VERSIONS = ("1.0", "1.1")

# waitress's own error statuses -> the contract's answer (it knows no 413/431/501; no 5xx but 503).
WAITRESS_ERRORS: dict[int, tuple[int, str]] = {
    400: (400, "invalid_request"),  # malformed request line, header or chunk; bad Content-Length
    413: (400, "too_large"),  # body over GATEWAY_MAX_BODY, as the deployed gateway answers
    431: (400, "too_large"),  # request line + headers over GATEWAY_MAX_HEADER
    501: (400, "invalid_request"),  # a Transfer-Encoding other than chunked
    500: (503, "unavailable"),  # the front failed; the traceback is in the log
}


@dataclass(frozen=True)
class Limits:
    """Bounds of the local server; each from its environment variable, else the default."""

    channel_timeout: float = 30.0  # RP_DEV_CHANNEL_TIMEOUT: seconds a connection may stay silent
    threads: int = 8  # RP_DEV_THREADS: requests served at once
    connection_limit: int = 100  # RP_DEV_CONNECTION_LIMIT: open connections; more wait in the backlog
    backlog: int = 128  # connections the kernel queues (a burst of agents connecting at once)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Limits:
        env = os.environ if environ is None else environ
        defaults = cls()
        return cls(
            channel_timeout=float(env.get("RP_DEV_CHANNEL_TIMEOUT") or defaults.channel_timeout),
            threads=int(env.get("RP_DEV_THREADS") or defaults.threads),
            connection_limit=int(env.get("RP_DEV_CONNECTION_LIMIT") or defaults.connection_limit),
        )


def status_line(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Unknown"


def refuse(task: Any, status: int, code: str) -> None:
    """Answer `{"code": code}` on a waitress task and close the connection after it."""
    body = json.dumps({"code": code}, separators=(",", ":")).encode()  # the app's own bytes
    answer(task, status, {"Content-Type": "application/json"}, body)


def answer(task: Any, status: int, headers: dict[str, str], body: bytes) -> None:
    """Write one whole answer on a waitress task and close the connection after it."""
    task.complete = True  # what start_response marks: headers may now be written
    task.status = status_line(status)
    task.response_headers.extend((name, value) for name, value in headers.items()
                                 if name.lower() not in ("content-length", "connection"))
    task.set_close_on_finish()
    task.content_length = len(body)
    task.write(body)


def _waitress_headers(request: Any) -> dict[str, str]:
    """The parsed request's headers (waitress keys them as CONTENT_TYPE, OPENSTACK_API_VERSION, ...)."""
    return {name.replace("_", "-").lower(): value for name, value in (request.headers or {}).items()}


class ContractErrorTask(ErrorTask):  # type: ignore[misc]  # waitress ships no types
    """waitress's own refusals, in the contract's shape (a body too large under /placement: Placement's)."""

    def execute(self) -> None:
        if self.request.error.code == 413:
            found = too_large(self.request.command or "POST", self.request.path or "/", _waitress_headers(self.request))
            payload = found["body"].encode() if isinstance(found["body"], str) else found["body"]
            answer(self, int(found["statusCode"]), dict(found["headers"]), payload)
            return
        refuse(self, *WAITRESS_ERRORS.get(self.request.error.code, (400, "invalid_request")))


class ContractTask(WSGITask):  # type: ignore[misc]
    """A parsed request: to the app, unless its HTTP version is one this server does not speak.
    A bodiless answer (204, 304) keeps an HTTP/1.1 connection open, as API Gateway's does."""

    _bodiless_keep_alive = False

    def execute(self) -> None:
        if self.request.version not in SUPPORTED_VERSIONS:
            # waitress would answer HTTP/2.0 or HTTP/0.9 requests as HTTP/1.0 ones.
            refuse(self, 400, "invalid_request")
            return
        super().execute()

    def build_response_header(self) -> bytes:
        # waitress 3.0.2 closes the connection after any answer without a Content-Length, 204 and 304
        # included, which never carry one (RFC 9110 8.6): every keep-alive client (keystoneauth1, the
        # bench) would reconnect after each such answer. Their end is their header's end.
        self._bodiless_keep_alive = (not self.has_body and not self.close_on_finish and self.version == "1.1"
                                     and self.request.headers.get("CONNECTION", "").lower() != "close")
        try:
            return super().build_response_header()  # type: ignore[no-any-return]
        finally:
            self._bodiless_keep_alive = False

    def set_close_on_finish(self) -> None:
        if not self._bodiless_keep_alive:
            super().set_close_on_finish()


class ContractChannel(HTTPChannel):  # type: ignore[misc]
    task_class = ContractTask
    error_task_class = ContractErrorTask


def request_headers(environ: dict[str, Any]) -> dict[str, str]:
    """The request's headers from a WSGI environ (waitress joins repeated ones with ", ")."""
    headers = {"Content-Type": environ.get("CONTENT_TYPE"), "Content-Length": environ.get("CONTENT_LENGTH")}
    headers.update(
        (name[5:].replace("_", "-").title(), value) for name, value in environ.items() if name.startswith("HTTP_")
    )
    return {name: value for name, value in headers.items() if value}


def wsgi_app(gateway: Any) -> Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]:
    """The gateway as a WSGI application: the raw request target (not waitress's decoded path)."""

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length > 0 else None
        response = gateway.handle(method, environ["REQUEST_URI"], request_headers(environ), body)
        payload = response.get("body") or b""
        if isinstance(payload, str):
            payload = payload.encode("utf-8")
        given = {name.lower(): value for name, value in (response.get("headers") or {}).items()}
        headers = [(name, value) for name, value in (response.get("headers") or {}).items()
                   if name.lower() not in ("content-length", "connection")]
        # A HEAD answer's length is its GET answer's (the app states it); any other's is its body's.
        stated = given.get("content-length") if method == "HEAD" else None
        headers.append(("Content-Length", stated or str(len(payload))))
        start_response(status_line(int(response["statusCode"])), headers)
        return [b"" if method == "HEAD" else payload]

    return application


class JsonLineFormatter(logging.Formatter):
    """One JSON object per line; a traceback goes inside it, as a string."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {"level": record.levelname, "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            line["exception"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        return json.dumps(line)


def configure_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLineFormatter())
    logger = logging.getLogger("waitress")
    logger.handlers[:] = [handler]
    logger.propagate = False
    # INFO would log every client that disconnects while it is being served: not a problem here.
    logger.setLevel(logging.WARNING)


def make_server(gateway: Any, port: int, limits: Limits) -> Any:
    """A waitress server on 127.0.0.1:port (0: the kernel picks; see `.effective_port`), not yet running."""
    configure_logging()
    server = create_server(
        wsgi_app(gateway),
        host="127.0.0.1",
        port=port,
        threads=limits.threads,
        connection_limit=limits.connection_limit,
        backlog=limits.backlog,
        channel_timeout=limits.channel_timeout,
        # Silent connections are looked for this often; the timeout is then at most twice its value.
        cleanup_interval=max(1, min(30, int(limits.channel_timeout))),
        max_request_header_size=GATEWAY_MAX_HEADER,
        # waitress refuses a body of max_request_body_size bytes or more; the gateway takes 10 MB.
        max_request_body_size=GATEWAY_MAX_BODY + 1,
        asyncore_use_poll=True,  # select() fails past 1024 open descriptors
        ident="",  # no Server header, as API Gateway
        expose_tracebacks=False,
        clear_untrusted_proxy_headers=True,
    )
    server.channel_class = ContractChannel
    return server
