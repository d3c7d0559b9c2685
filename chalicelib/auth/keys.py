"""Key material (pure).

Keys are 256-bit random tokens, so a plain SHA-256 is a sufficient one-way
store form (no salt or slow hash needed for high-entropy secrets); the hash is
also the lookup key. The raw key exists only in the caller's hands and in the
output of the command that issued it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets


def generate_key() -> str:
    return "rp_" + secrets.token_urlsafe(32)


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def same_hash(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())
