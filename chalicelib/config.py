"""Runtime settings, read once from the environment.

Every variable is documented in README.md ("Configuration"); defaults suit a
deployed stage, `make run` overrides what a laptop needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw not in (None, "") else default


def endpoint_from_env() -> str | None:
    """The DynamoDB endpoint an emulator or test sets; None means AWS itself."""
    return os.environ.get("AWS_ENDPOINT_URL_DYNAMODB") or os.environ.get("AWS_ENDPOINT_URL") or None


@dataclass(frozen=True)
class Settings:
    table_name: str
    region: str
    endpoint_url: str | None
    auth_cache_seconds: int
    idempotency_ttl_days: int
    connect_timeout: float
    read_timeout: float
    max_attempts: int

    @classmethod
    def from_env(cls) -> Settings:
        return cls(
            table_name=os.environ.get("RP_TABLE_NAME", "resource-provisioning"),
            region=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
            endpoint_url=endpoint_from_env(),
            # A revoked key must stop working within 60 s: the cache may never hold longer.
            auth_cache_seconds=min(_int("RP_AUTH_CACHE_SECONDS", 30), 60),
            # Saved request results must live at least 7 days.
            idempotency_ttl_days=max(_int("RP_IDEMPOTENCY_TTL_DAYS", 8), 7),
            connect_timeout=float(os.environ.get("RP_STORE_CONNECT_TIMEOUT", "2")),
            read_timeout=float(os.environ.get("RP_STORE_READ_TIMEOUT", "5")),
            max_attempts=_int("RP_STORE_MAX_ATTEMPTS", 3),
        )
