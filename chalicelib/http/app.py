"""A Chalice application whose per-invocation state is thread-local.

Chalice keeps `current_request` on the app object. Lambda runs one invocation
per process at a time, but the local server and the concurrency tests run
many threads through one app, so each thread gets its own request.
"""

from __future__ import annotations

import threading
from typing import Any

from chalice import Chalice

_local = threading.local()


class ThreadSafeChalice(Chalice):
    @property  # type: ignore[override]
    def current_request(self) -> Any:
        return getattr(_local, "current_request", None)

    @current_request.setter
    def current_request(self, value: Any) -> None:
        _local.current_request = value

    @property  # type: ignore[override]
    def lambda_context(self) -> Any:
        return getattr(_local, "lambda_context", None)

    @lambda_context.setter
    def lambda_context(self, value: Any) -> None:
        _local.lambda_context = value
