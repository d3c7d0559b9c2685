"""The fake on a real HTTP server: 127.0.0.1, a free port, a thread per connection.

werkzeug's server closes every connection after its answer, so clients reconnect per call
(cheap on loopback; the bench's figures include it).
"""

from __future__ import annotations

import threading
from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from fakes.openstack.app import FakeOpenStackApp
from fakes.openstack.scenario import Scenario


class _QuietHandler(WSGIRequestHandler):
    """No access log line per call (a bench makes tens of thousands)."""

    def log_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class FakeOpenStack:
    """Start with `with FakeOpenStack(scenario) as fake:`; `fake.auth_url` is Keystone's v3 URL."""

    def __init__(self, scenario: Scenario, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = FakeOpenStackApp(scenario)
        self._server: BaseWSGIServer = make_server(host, port, self.app, threaded=True,
                                                   request_handler=_QuietHandler)
        self.url = f"http://{host}:{self._server.server_port}"
        self.app.base_url = self.url
        self._thread: threading.Thread | None = None

    @property
    def auth_url(self) -> str:
        return f"{self.url}/v3"

    def start(self) -> FakeOpenStack:
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-openstack", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> FakeOpenStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
