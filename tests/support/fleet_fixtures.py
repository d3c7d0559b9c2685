"""Fixtures of the fleet tests (loaded by tests/conftest.py): a recording EventBridge and the compute API with a
tenant `acme`, its Site `k8s` and a principal holding every fleet grant."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.eventbridge import RecordingEventBridge
from tests.support.fleet import ALL_GRANTS, FleetHttp


@pytest.fixture
def bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingEventBridge]:
    with RecordingEventBridge() as fake:
        monkeypatch.setenv("RP_FLEET_EVENTS_ENDPOINT", fake.endpoint)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
        yield fake


@pytest.fixture
def fleet(services: Any, keys: dict[str, str], bus: RecordingEventBridge) -> Iterator[FleetHttp]:
    from chalice.test import Client

    from app import app

    with Client(app) as client:
        http = FleetHttp(client, keys)
        assert http.operator("POST", "/api/tenants/acme/sites", {"name": "k8s", "kind": "kubernetes"})[0] == 201
        http.token = http.issue("acme", "alice", ALL_GRANTS)
        yield http
