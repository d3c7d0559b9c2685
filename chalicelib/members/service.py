"""`GET /resource-provisioning/{site}/members/{username}` (placeholder until issue 3 lands)."""

from __future__ import annotations

from typing import Any

from chalicelib.errors import Unavailable
from chalicelib.runtime import Services


def get_member(services: Services, site: str, username: str, provider_project_ref: str | None) -> dict[str, Any]:
    raise Unavailable()
