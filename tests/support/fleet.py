"""Fleet tests' builders: a FleetConfig document, the compute API over HTTP, and the few calls every fleet test
makes (plan, apply, reconcile, events, a Placement inventory write through the Placement tier's builders).

The fixtures `bus` and `fleet` (tests/support/fleet_fixtures.py) hand these to a test."""

from __future__ import annotations

import json
from typing import Any

MODULES = ("providerAccounts", "pools", "ownerQuotas", "offers", "flavors", "sites")
ALL_GRANTS = [f"compute:{m}:admin@compute-{m}" for m in (*MODULES, "fleet")]
FLEET_GRANT = "compute:fleet:admin@compute-fleet"


def document(capacity: int = 64, flavors: int = 1) -> dict[str, Any]:
    return {
        "sites": [{"name": "k8s"}],
        "providerAccounts": [{"name": "main", "site": "k8s", "provider": "aws", "description": "the account"}],
        "pools": [{"name": "gpu", "site": "k8s", "account": "main", "class": "general", "owner": "team-a",
                   "availabilityZone": "az1", "capacity": {"VCPU": capacity, "MEMORY_MB": 4096}}],
        "ownerQuotas": [{"owner": "team-b", "pool": "gpu", "limits": {"VCPU": 8}}],
        "offers": [{"name": "to-b", "pool": "gpu", "to": "team-b", "limits": {"VCPU": 4}}],
        "flavors": [{"name": f"small-{i}", "pool": "gpu", "resources": {"VCPU": 2}, "description": ""}
                    for i in range(flavors)],
    }


class FleetHttp:
    """The compute API and the operator routes through chalice's test client, with a tenant token (`token`)."""

    def __init__(self, client: Any, keys: dict[str, str]) -> None:
        self._client = client
        self.keys = keys
        self.token = ""

    def call(self, method: str, path: str, body: Any = None, token: str | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, Any]:
        sent = {"content-type": "application/json", **(headers or {})}
        if token is not None:
            sent["authorization"] = f"Bearer {token}"
        payload = json.dumps(body).encode() if body is not None else b""
        response = self._client.http.request(method, path, headers=sent, body=payload)
        return response.status_code, (json.loads(response.body) if response.body else None)

    def rpc(self, method: str, body: Any, token: str) -> tuple[int, Any]:
        return self.call("POST", f"/api/compute/{method.replace('.', '/')}", body, token)

    def operator(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return self.call(method, path, body, self.keys["service"])

    def issue(self, tenant: str, principal: str, grants: list[str]) -> str:
        status, body = self.operator("POST", f"/api/tenants/{tenant}/principals",
                                     {"principal": principal, "grants": grants})
        assert status == 201, body
        return str(body["token"])


def plan(http: FleetHttp, doc: dict[str, Any], prune: bool = False) -> dict[str, Any]:
    status, body = http.rpc("fleet.plan", {"document": doc, "prune": prune}, http.token)
    assert status == 200, body
    return dict(body)


def apply(http: FleetHttp, doc: dict[str, Any], prune: bool = False, plan_hash: str | None = None,
          token: str | None = None) -> tuple[int, Any]:
    body: dict[str, Any] = {"document": doc, "prune": prune}
    if plan_hash is not None:
        body["planHash"] = plan_hash
    return http.rpc("fleet.apply", body, token or http.token)


def export(http: FleetHttp) -> dict[str, Any]:
    status, body = http.rpc("fleet.export", {}, http.token)
    assert status == 200, body
    return dict(body["document"])


def pool_id(http: FleetHttp) -> str:
    return str(http.rpc("pools.list", {}, http.token)[1]["items"][0]["id"])


def reconcile(http: FleetHttp) -> dict[str, int]:
    status, body = http.operator("POST", "/api/fleet/reconcile", {})
    assert status == 200, body
    return dict(body)


def events(http: FleetHttp) -> list[dict[str, Any]]:
    status, body = http.operator("GET", "/api/fleet/events?tenant=acme")
    assert status == 200, body
    return list(body["events"])


def change_inventory_through_placement(services: Any, pool: str, total: int) -> None:
    """`PUT /placement/resource_providers/{uuid}/inventories` setting VCPU's total, through the Placement API
    with a Placement key of its own (the Placement tier's builders), as an operator would."""
    from tests.integration.placement.helpers import placement_client, set_inventory_total

    answer = set_inventory_total(placement_client(services), pool, "VCPU", total)
    assert answer.status == 200, answer.body
