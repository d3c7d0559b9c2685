"""Store faults for tests: a store that is not there, and calls that fail on the wire.

Nothing of ours is mocked: the service runs unchanged against a real endpoint,
and faults are injected where botocore sends HTTP requests.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from botocore.awsrequest import AWSResponse
from botocore.exceptions import EndpointConnectionError

from chalicelib.runtime import Services, build_services
from chalicelib.store.direct_client import ResponseBody


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


@contextlib.contextmanager
def answer_lost(client: Any, operation: str, skip: int = 0) -> Iterator[list[int]]:
    """Every `operation` call after the first `skip` reaches the store and is applied, then its answer is lost
    (the connection drops before the response is read): the caller cannot tell it from a request lost."""
    seen = [0]
    lock = threading.Lock()

    def lose(http_response: Any = None, **_: Any) -> None:
        with lock:
            seen[0] += 1
            if seen[0] <= skip:
                return
        raise EndpointConnectionError(endpoint_url=str(getattr(http_response, "url", "") or "dynamodb"))

    event = f"after-call.dynamodb.{operation}"
    client.meta.events.register(event, lose)
    try:
        yield seen
    finally:
        client.meta.events.unregister(event, lose)


THROTTLED = ("ProvisionedThroughputExceededException", "ThrottlingException")


@contextlib.contextmanager
def store_answers(client: Any, operation: str, code: str, status: int = 400,
                  skip: int = 0, times: int | None = None) -> Iterator[list[int]]:
    """`operation` requests after the first `skip` (the next `times` of them, or all) are answered
    on the wire by DynamoDB's error `code` (HTTP `status`, DynamoDB's JSON error body) instead of
    reaching the store: botocore parses and retries them exactly as real answers.
    Yields [requests seen]."""
    seen = [0]
    lock = threading.Lock()
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": "injected"}).encode()

    def answer(request: Any, **_: Any) -> AWSResponse | None:
        with lock:
            seen[0] += 1
            if seen[0] <= skip or (times is not None and seen[0] > skip + times):
                return None
        headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "injected-fault",
                   "Content-Length": str(len(body))}
        return AWSResponse(str(request.url), status, headers, ResponseBody(body))

    event = f"before-send.dynamodb.{operation}"
    client.meta.events.register(event, answer)
    try:
        yield seen
    finally:
        client.meta.events.unregister(event, answer)


@contextlib.contextmanager
def unprocessed_batch_reads(client: Any, times: int | None = None) -> Iterator[list[int]]:
    """The first `times` BatchGetItem requests (or all) are answered as DynamoDB answers a batch
    it could not serve (throttled): HTTP 200, nothing found, every key back in UnprocessedKeys.
    Yields [requests answered so]."""
    seen = [0]
    lock = threading.Lock()

    def answer(request: Any, **_: Any) -> AWSResponse | None:
        with lock:
            if times is not None and seen[0] >= times:
                return None
            seen[0] += 1
        asked = json.loads(request.body)["RequestItems"]
        body = json.dumps({"Responses": {table: [] for table in asked}, "UnprocessedKeys": asked}).encode()
        headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "injected-unprocessed",
                   "Content-Length": str(len(body))}
        return AWSResponse(str(request.url), 200, headers, ResponseBody(body))

    event = "before-send.dynamodb.BatchGetItem"
    client.meta.events.register(event, answer)
    try:
        yield seen
    finally:
        client.meta.events.unregister(event, answer)
