"""moto's DynamoDB server, in this process, one request at a time.

moto's backends are not thread-safe: concurrent TransactWriteItems copy a table
while another request changes it (500 "dictionary changed size during
iteration", and lost updates). DynamoDB applies each request atomically, so
running each request (its body included) under one lock is the faithful
emulation; connections stay concurrent.

moto also keeps every model object it ever made for its dashboard, including the
whole-table copy each TransactWriteItems makes (1 GB and a 10 s exit after one
500-event batch): that registry is dropped after each request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devkit.moto_transactions import install as install_fast_transactions

STOP_TIMEOUT = 10.0


@dataclass
class EmbeddedStore:
    endpoint: str
    stop: Callable[[], None]


def start_embedded_store() -> EmbeddedStore:
    """Start on 127.0.0.1 and a kernel-chosen port, in memory."""
    from moto.core.model_instances import reset_model_data
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    install_fast_transactions()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's per-request access log
    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def one_at_a_time(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        with lock:
            response = app(environ, start_response)
            try:
                return list(response)
            finally:
                close = getattr(response, "close", None)
                if close is not None:
                    close()
                reset_model_data()  # the dashboard's registry only; the backends keep their state

    server = make_server("127.0.0.1", 0, one_at_a_time, threaded=True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, name="embedded-store", daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=STOP_TIMEOUT)

    return EmbeddedStore(f"http://127.0.0.1:{server.server_port}", stop)
