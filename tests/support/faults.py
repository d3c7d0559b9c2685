"""Store faults for tests: a store that is not there, and calls that fail on the wire.

Nothing of ours is mocked: the service runs unchanged against a real endpoint,
and faults are injected where botocore sends HTTP requests.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from botocore.exceptions import EndpointConnectionError

from chalicelib.runtime import Services, build_services


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unreachable(good: Services) -> Services:
    """The same wiring (and the same key cache) over a store at a closed loopback port."""
    settings = replace(good.settings, endpoint_url=f"http://127.0.0.1:{closed_port()}", max_attempts=1,
                       connect_timeout=1.0, read_timeout=1.0)
    return replace(build_services(settings), keys=good.keys, authenticator=good.authenticator)


@contextlib.contextmanager
def failing(client: Any, operation: str, skip: int = 0) -> Iterator[list[int]]:
    """Every `operation` call after the first `skip` fails as if the connection dropped (retries included)."""
    seen = [0]
    lock = threading.Lock()

    def fail(request: Any, **_: Any) -> None:
        with lock:
            seen[0] += 1
            if seen[0] <= skip:
                return
        raise EndpointConnectionError(endpoint_url=str(request.url))

    event = f"before-send.dynamodb.{operation}"
    client.meta.events.register(event, fail)
    try:
        yield seen
    finally:
        client.meta.events.unregister(event, fail)
