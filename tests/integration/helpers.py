"""Shortcuts for integration tests (over the `api` fixture)."""

from __future__ import annotations

from typing import Any

from tests.support import factories as f

EVENTS = "/api/resource-provisioning/events"


def reports_path(site: str = "k8s") -> str:
    return f"/resource-provisioning/{site}/reports"


def send(api: Any, body: dict[str, Any], site: str = "k8s", key: str | None = None) -> Any:
    return api.post(reports_path(site), body, key=key or site)


def bind(api: Any, ref: str = "wproj-1", project_id: str = f.PROJECT, binding_id: str = "b-1",
         state: str = "established", revision: int = 1) -> Any:
    answer = api.post(EVENTS, {"events": [f.binding_event(binding_id, ref, project_id, state, revision)]},
                      key="service")
    assert answer.status == 200, answer.body
    return answer


def allocation(api: Any, allocation_id: str, site: str = "k8s") -> Any:
    return api.get(f"/resource-provisioning/{site}/allocations/{allocation_id}", key=site)
