"""Shared fixtures: one store server per session (over HTTP), a fresh table per test."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.auth.keys import generate_key, hash_key
from chalicelib.auth.principals import principal_for
from chalicelib.config import Settings
from chalicelib.runtime import Services, build_services, use_services
from chalicelib.store.schema import ensure_table
from tests.support.stores import StoreServer, describe_selection, start_store

pytest_plugins = ["tests.support.fleet_fixtures"]  # `bus`, `fleet`: the fleet tests' EventBridge and compute API

os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")


def pytest_report_header() -> str:
    return describe_selection()  # which store the integration tier uses, and why (one line)


@pytest.fixture(scope="session")
def store_server() -> Iterator[StoreServer]:
    server = start_store()
    yield server
    server.stop()


def make_settings(endpoint: str, table: str, **overrides: Any) -> Settings:
    base = Settings.from_env()
    values = {**base.__dict__, "endpoint_url": endpoint, "table_name": table, **overrides}
    return Settings(**values)


@pytest.fixture
def services(store_server: StoreServer) -> Iterator[Services]:
    table = f"rp-test-{uuid.uuid4().hex[:12]}"
    svc = build_services(make_settings(store_server.endpoint, table, **store_server.settings))
    ensure_table(svc.client, table)
    use_services(svc)
    yield svc
    use_services(None)
    with contextlib.suppress(Exception):  # a fault test may have stopped the store
        svc.client.delete_table(TableName=table)


@pytest.fixture
def keys(services: Services) -> dict[str, str]:
    issued = {}
    for target in ("k8s", "slurm", "service"):
        raw = generate_key()
        services.keys.add(hash_key(raw), principal_for(target).name)
        issued[target] = raw
    return issued


@pytest.fixture
def api(services: Services, keys: dict[str, str]) -> Iterator[Any]:
    from chalice.test import Client

    from app import app
    from tests.support.api import ApiClient

    with Client(app) as client:
        yield ApiClient(client, app, keys)
