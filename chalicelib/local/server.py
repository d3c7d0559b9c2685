"""`make run`: the API on http://127.0.0.1:$PORT over an embedded, in-memory DynamoDB.

Without AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL the store is moto's
server, started in this process on a free loopback port, so two servers side
by side each get their own empty store. With one of them set, that endpoint is
used (DynamoDB Local, LocalStack, AWS). The table is created if missing.

Keys: RP_SITE_KEY_K8S, RP_SITE_KEY_SLURM and RP_SERVICE_KEY, when set, are
registered as valid keys; any that is not set is generated and printed once.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from chalicelib.auth.keys import generate_key, hash_key, principal_for
from chalicelib.config import Settings, endpoint_from_env
from chalicelib.local.embedded import start_embedded_store
from chalicelib.local.gateway import GATEWAY_MAX_BODY, LocalGateway
from chalicelib.runtime import build_services, use_services
from chalicelib.store.schema import ensure_table

KEY_VARIABLES = {"k8s": "RP_SITE_KEY_K8S", "slurm": "RP_SITE_KEY_SLURM", "service": "RP_SERVICE_KEY"}


def use_local_credentials() -> None:
    # Emulators accept any credentials; a laptop may have none configured.
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


def register_keys(services: Any) -> dict[str, str]:
    """Register the configured keys; generate the missing ones. Returns the generated ones."""
    generated: dict[str, str] = {}
    for target, variable in KEY_VARIABLES.items():
        raw = os.environ.get(variable)
        if not raw:
            raw = generated[target] = generate_key()
        digest = hash_key(raw)
        if services.keys.find(digest) is None:
            services.keys.add(digest, principal_for(target).name)
    return generated


class LocalHTTPServer(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: a burst of new connections from many agents
    # (or the load test's 16 clients) would be reset by the kernel instead of waiting.
    request_queue_size = 128
    daemon_threads = True


def make_handler(gateway: Any) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0 or length > GATEWAY_MAX_BODY:
                # Refuse without reading it, as API Gateway does; the connection cannot be reused.
                self.close_connection = True
                self._send(400, {"Content-Type": "application/json"},
                           b'{"code":"too_large"}' if length > 0 else b'{"code":"invalid_request"}')
                return
            body = self.rfile.read(length) if length > 0 else None
            headers = {k: v for k, v in self.headers.items()}
            response = gateway.handle(self.command, self.path, headers, body)
            payload = response.get("body") or b""
            if isinstance(payload, str):
                payload = payload.encode("utf-8")
            self._send(int(response["statusCode"]), response.get("headers") or {}, payload)

        def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
            self.send_response(status)
            for name, value in headers.items():
                if name.lower() not in ("content-length", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def __getattr__(self, name: str) -> Any:
            # Every method reaches the gateway (http.server would answer others with a 501 page).
            if name.startswith("do_"):
                return self._serve
            raise AttributeError(name)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # the app logs each request as structured JSON

    return Handler


def main() -> int:
    from app import app
    port = int(os.environ.get("PORT", "8000"))
    use_local_credentials()
    embedded = None
    if not endpoint_from_env():
        embedded = start_embedded_store()
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = embedded.endpoint
    settings = Settings.from_env()
    services = build_services(settings)
    ensure_table(services.client, settings.table_name)
    use_services(services)
    generated = register_keys(services)

    httpd = LocalHTTPServer(("127.0.0.1", port), make_handler(LocalGateway(app)))
    print(f"store: {settings.endpoint_url or 'AWS'} table {settings.table_name}"
          f"{' (embedded, in memory)' if embedded else ''}", flush=True)
    for target, raw in generated.items():
        print(f"generated {KEY_VARIABLES[target]}={raw}", flush=True)
    # Last, so that whoever waits for this line has everything above it.
    print(f"Resource Provisioning listening on http://127.0.0.1:{httpd.server_port}", flush=True)

    def stop(*_: Any) -> None:
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
        if embedded is not None:
            embedded.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
