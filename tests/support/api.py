"""A test client over the real handler stack that checks every answer against the contract."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from devkit.gateway import LocalGateway
from tests.support.contract import assert_conforms

_OPERATIONS = [
    (re.compile(r"/resource-provisioning/[^/]+/reports"), "report"),
    (re.compile(r"/resource-provisioning/[^/]+/accounts"), "reportAccounts"),
    (re.compile(r"/resource-provisioning/[^/]+/allocations/[^/]+"), "getAllocation"),
    (re.compile(r"/resource-provisioning/[^/]+/projects/[^/]+"), "getProject"),
    (re.compile(r"/resource-provisioning/[^/]+/members/[^/]+"), "getMember"),
    (re.compile(r"/resource-provisioning/[^/]+/retained-accounts"), "getRetainedAccounts"),
]


def operation_for(path: str) -> str | None:
    bare = path.split("?", 1)[0]
    for pattern, name in _OPERATIONS:
        if pattern.fullmatch(bare):
            return name
    return None


INTAKE_PATH = "/api/resource-provisioning/events"


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str]


class ApiClient:
    """Requests go through chalice.test.Client (the Lambda handler path), or through our
    local gateway for paths no route matches (API Gateway's own answers)."""

    def __init__(self, chalice_client: Any, app: Any, keys: dict[str, str]) -> None:
        self._client = chalice_client
        self._gateway = LocalGateway(app)
        self.keys = keys

    def request(
        self, method: str, path: str, *, key: str | None = None, json_body: Any = None,
        body: bytes | None = None, headers: dict[str, str] | None = None, check: bool = True,
    ) -> Answer:
        sent = {"content-type": "application/json"}
        if key is not None:
            sent["authorization"] = f"Bearer {self.keys.get(key, key)}"
        sent.update(headers or {})
        if json_body is not None:
            body = json.dumps(json_body).encode()
        if operation_for(path) is None and path.split("?", 1)[0] != INTAKE_PATH:
            raw = self._gateway.handle(method, path, sent, body)
            status, payload, out_headers = raw["statusCode"], raw.get("body") or b"", raw.get("headers") or {}
        else:
            response = self._client.http.request(method, path, headers=sent, body=body or b"")
            status, payload, out_headers = response.status_code, response.body, dict(response.headers)
        parsed = json.loads(payload) if payload else None
        if check and path.split("?", 1)[0] != INTAKE_PATH:
            assert_conforms(operation_for(path), status, parsed)
        elif check:
            assert status in (200, 400, 401, 404, 405, 503), status
            if status != 200:
                assert set(parsed) == {"code"}, parsed
        return Answer(status, parsed, out_headers)

    def post(self, path: str, json_body: Any = None, **kw: Any) -> Answer:
        return self.request("POST", path, json_body=json_body, **kw)

    def get(self, path: str, **kw: Any) -> Answer:
        return self.request("GET", path, **kw)
