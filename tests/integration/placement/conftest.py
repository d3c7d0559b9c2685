"""A Placement client over the app's Lambda path (API Gateway events through Chalice) and
DynamoDB Local (tests/conftest.py's store).

"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from chalicelib.auth.keys import generate_key, hash_key
from chalicelib.runtime import Services, build_services, use_services
from devkit.gateway import LocalGateway
from tests.conftest import make_settings


def placement_app() -> Any:
    from app import app

    return app


_GATEWAY: LocalGateway | None = None


def gateway() -> LocalGateway:
    global _GATEWAY
    if _GATEWAY is None:
        _GATEWAY = LocalGateway(placement_app())
    return _GATEWAY


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str]

    def header(self, name: str) -> str | None:
        lowered = {k.lower(): v for k, v in self.headers.items()}
        return lowered.get(name.lower())


class PlacementClient:
    def __init__(self, services: Services, key: str) -> None:
        self.services = services
        self.key = key

    def request(self, method: str, path: str, body: Any = None, *, version: str | None = None,
                token: str | None = "default", headers: dict[str, str] | None = None,
                raw: bytes | None = None) -> Answer:
        sent: dict[str, str] = {"accept": "application/json"}
        if token == "default":
            token = self.key
        if token is not None:
            sent["x-auth-token"] = token
        if version is not None:
            sent["openstack-api-version"] = f"placement {version}"
        payload = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        if payload:
            sent["content-type"] = "application/json"
        sent.update(headers or {})
        sent.setdefault("host", "127.0.0.1:8000")
        response = gateway().handle(method, path, sent, payload or None)
        raw_body = response.get("body") or ""
        if isinstance(raw_body, bytes):
            raw_body = raw_body.decode()
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        return Answer(response["statusCode"], json.loads(raw_body) if raw_body else None, headers)

    def get(self, path: str, **kw: Any) -> Answer:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Answer:
        return self.request("POST", path, body, **kw)

    def put(self, path: str, body: Any = None, **kw: Any) -> Answer:
        return self.request("PUT", path, body, **kw)

    def delete(self, path: str, **kw: Any) -> Answer:
        return self.request("DELETE", path, **kw)


@pytest.fixture
def placement_key(services: Services) -> str:
    raw = generate_key()
    services.keys.add(hash_key(raw), "placement")
    return raw


@pytest.fixture
def placement(services: Services, placement_key: str) -> Iterator[PlacementClient]:
    yield PlacementClient(services, placement_key)


@pytest.fixture
def other(services: Services, store_server: Any) -> Services:
    """A second process on the same table: the same store, its own caches (decisions 0050, 0051), as a second
    Lambda instance."""
    return build_services(make_settings(store_server.endpoint, services.table, **store_server.settings))


@contextlib.contextmanager
def serving(process: Services, home: Services) -> Iterator[None]:
    """Requests in this block are answered by `process` (the gateway serves the process's services)."""
    use_services(process)
    try:
        yield
    finally:
        use_services(home)
