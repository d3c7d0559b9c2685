"""Stored credentials (pure)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KeyRecord:
    key_id: str
    principal: str  # `site:<site>`, `service`, `placement` or `tenant:<tenant>/<principal>`
    created_at: int
    revoked_at: int | None
    key_hash: str
    epoch: str | None = None  # tenant tokens: the principal's epoch they were issued in

    @property
    def active(self) -> bool:
        return self.revoked_at is None
