"""Message builders for tests: valid by default, overridable field by field."""

from __future__ import annotations

import uuid
from typing import Any

PROJECT = "11111111-1111-4111-8111-111111111111"
OTHER_PROJECT = "22222222-2222-4222-8222-222222222222"


def uid() -> str:
    return str(uuid.uuid4())


def resource(**overrides: Any) -> dict[str, Any]:
    base = {
        "resourceRef": "res-1",
        "offeringRef": "off-1",
        "providerProjectRef": "wproj-1",
        "providerState": "OK",
        "paused": False,
        "nativeScope": "ns-1",
        "configured": {"cpu": 2000, "memory": 4294967296},
        "applied": {"cpu": 2000, "memory": 4294967296},
        "observedAt": "2026-03-01T10:00:00Z",
    }
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def report(request_id: str | None = None, **overrides: Any) -> dict[str, Any]:
    return {"requestId": request_id or f"req-{uuid.uuid4().hex}", "resource": resource(**overrides)}


def binding_event(binding_id: str, ref: str, project_id: str = PROJECT, state: str = "established",
                  revision: int = 1) -> dict[str, Any]:
    return {"type": "project_binding", "bindingId": binding_id, "projectId": project_id,
            "providerProjectRef": ref, "state": state, "revision": revision}


def project_event(project_id: str = PROJECT, state: str = "active", management_generation: int = 1,
                  revision: int = 1) -> dict[str, Any]:
    return {"type": "project", "projectId": project_id, "state": state,
            "managementGeneration": management_generation, "revision": revision}
