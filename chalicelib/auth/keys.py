"""Key material and principals (pure).

Keys are 256-bit random tokens, so a plain SHA-256 is a sufficient one-way
store form (no salt or slow hash needed for high-entropy secrets); the hash is
also the lookup key. The raw key exists only in the caller's hands and in the
output of the command that issued it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from chalicelib.contract.types import SITES

SERVICE = "service"


@dataclass(frozen=True)
class Principal:
    """Who a key speaks for: `site:<name>` or `service`."""

    name: str

    @property
    def site(self) -> str | None:
        return self.name.split(":", 1)[1] if self.name.startswith("site:") else None

    @property
    def is_service(self) -> bool:
        return self.name == SERVICE


def principal_for(target: str) -> Principal:
    """`k8s`, `slurm` or `service` as an operator names it."""
    if target == SERVICE:
        return Principal(SERVICE)
    if target in SITES:
        return Principal(f"site:{target}")
    raise ValueError(f"unknown principal {target!r}; expected one of {', '.join((*SITES, SERVICE))}")


def generate_key() -> str:
    return "rp_" + secrets.token_urlsafe(32)


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def same_hash(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def bearer_token(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (scheme case-insensitive)."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 512:
        return None
    return token
