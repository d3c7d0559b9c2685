"""A Chalice application whose per-invocation state is thread-local.

Chalice keeps `current_request` on the app object. Lambda runs one invocation
per process at a time, but the local server and the concurrency tests run
many threads through one app, so each thread gets its own request.
"""

from __future__ import annotations

import threading
from typing import Any

from chalice import Chalice
from chalice.app import RestAPIEventHandler

_local = threading.local()


def _routable(routes: dict[str, dict[str, Any]], event: Any) -> Any:
    context = event.get("requestContext") or {}
    methods = routes.get(context.get("resourcePath") or "", {})
    if not methods or context.get("httpMethod") in methods:
        return event
    fallback = "GET" if "GET" in methods else next(iter(methods))
    return {**event, "requestContext": {**context, "httpMethod": fallback}}


class ThreadSafeChalice(Chalice):
    def __call__(self, event: Any, context: Any) -> dict[str, Any]:
        # As Chalice.__call__, except that a method no route registers (TRACE, QUERY, ...) is
        # routed to the path's own view, which authenticates first and then answers our 405,
        # never Chalice's MethodNotAllowedError body. The request keeps the real method; only
        # the route lookup is redirected.
        self.lambda_context = context
        handler = RestAPIEventHandler(
            self.routes, self.api, self.log, self.debug,
            middleware_handlers=self._get_middleware_handlers("http"),
        )
        self.current_request = handler.create_request_object(event, context)
        response: dict[str, Any] = handler(_routable(self.routes, event), context)
        return response

    @property
    def current_request(self) -> Any:
        return getattr(_local, "current_request", None)

    @current_request.setter
    def current_request(self, value: Any) -> None:
        _local.current_request = value

    @property
    def lambda_context(self) -> Any:
        return getattr(_local, "lambda_context", None)

    @lambda_context.setter
    def lambda_context(self, value: Any) -> None:
        _local.lambda_context = value
