"""The DynamoDB client (boto3's, or the direct transport over it: decision 0052) and the round-trip counter
hooked into botocore's events."""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from typing import Any

import boto3
from botocore.config import Config

from chalicelib.config import Settings


def make_client(settings: Settings) -> Any:
    config = Config(
        region_name=settings.region,
        connect_timeout=settings.connect_timeout,
        read_timeout=settings.read_timeout,
        retries={"mode": "standard", "max_attempts": settings.max_attempts},
        max_pool_connections=50,
        tcp_keepalive=True,
    )
    session = boto3.session.Session()
    client = session.client("dynamodb", endpoint_url=settings.endpoint_url, config=config)
    if settings.store_transport == "botocore":
        for operation in RAW_READS:  # the direct transport parses its answers itself
            client.meta.events.register(f"before-parse.dynamodb.{operation}", read_answer_as_json)
        return client
    from chalicelib.store.direct_client import DirectClient

    return DirectClient(client, session.get_credentials(), connect_timeout=settings.connect_timeout,
                        read_timeout=settings.read_timeout, max_attempts=settings.max_attempts)


# The reads whose answers are taken as DynamoDB sent them (see `read_answer_as_json`).
RAW_READS = ("GetItem", "BatchGetItem", "Query")
BINARY_TAGS = (b'"B"', b'"BS"')  # an answer holding either may carry binary values (base64 on the wire)


def read_answer_as_json(response_dict: dict[str, Any], customized_response_dict: dict[str, Any],
                        **_: Any) -> None:
    """A successful read's answer, loaded once as JSON instead of by botocore's model-driven parser.

    That parser walks every attribute value of every item against the model and builds the same dicts
    the JSON holds (a read of a thousand providers spent more time there than in DynamoDB). botocore's
    `before-parse` event lets a handler supply the parsed fields (`customized_response_dict`, merged
    over the parser's); the body left to the parser is then empty. The one field whose wire form
    differs from the parsed one is binary (base64 on the wire, bytes parsed): an answer that may hold
    one, and every error, is left to botocore. The CRC32 check reads the HTTP response, not this body.
    """
    body = response_dict.get("body")
    if response_dict.get("status_code") != 200 or not body or any(tag in body for tag in BINARY_TAGS):
        return
    customized_response_dict.update(json.loads(body))
    response_dict["body"] = b"{}"


class RoundTripCounter:
    """Counts HTTP requests (retries included) and consumed capacity, per operation.

    Hooks `before-send` (one event per HTTP attempt) and `after-call` (the
    parsed response, for ConsumedCapacity). Thread-safe; used by `make bench`,
    the metrics and the tests that pin round-trip budgets.
    """

    def __init__(self, client: Any) -> None:
        self._lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.capacity: defaultdict[str, float] = defaultdict(float)
        client.meta.events.register("before-send.dynamodb", self._on_send)
        client.meta.events.register("after-call.dynamodb", self._on_after_call)

    def _on_send(self, request: Any, **_: Any) -> None:
        target = request.headers.get("X-Amz-Target", b"")
        if isinstance(target, bytes):
            target = target.decode()
        with self._lock:
            self.calls[target.rsplit(".", 1)[-1]] += 1

    def _on_after_call(self, parsed: Any, model: Any, **_: Any) -> None:
        consumed = parsed.get("ConsumedCapacity") if isinstance(parsed, dict) else None
        if not consumed:
            return
        entries = consumed if isinstance(consumed, list) else [consumed]
        units = sum(float(e.get("CapacityUnits", 0) or 0) for e in entries)
        with self._lock:
            self.capacity[model.name] += units

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.capacity.clear()

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.calls.values())

    @property
    def total_capacity(self) -> float:
        with self._lock:
            return sum(self.capacity.values())
