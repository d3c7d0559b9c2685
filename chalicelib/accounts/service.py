"""`POST /resource-provisioning/{site}/accounts` (placeholder until issue 3 lands)."""

from __future__ import annotations

from typing import Any

from chalicelib.errors import Unavailable
from chalicelib.runtime import Services


def submit_accounts(services: Services, site: str, data: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    raise Unavailable()
