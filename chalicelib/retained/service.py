"""`GET /resource-provisioning/{site}/retained-accounts` (placeholder until issue 3 lands)."""

from __future__ import annotations

from typing import Any

from chalicelib.errors import Unavailable
from chalicelib.runtime import Services


def get_retained_accounts(services: Services, site: str) -> dict[str, Any]:
    raise Unavailable()
