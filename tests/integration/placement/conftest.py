"""A Placement client over the real handlers and DynamoDB Local (tests/conftest.py's store).

Until the app registers `placement_blueprint`, requests go through `direct.dispatch` (the
same route table, family and handlers, without Chalice); then they go through the app.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from chalicelib.auth.keys import generate_key, hash_key
from chalicelib.runtime import Services
from tests.integration.placement.direct import dispatch


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
        answer = dispatch(self.services, method, path, sent, payload)
        return Answer(answer.status, json.loads(answer.body) if answer.body else None, answer.headers)

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
