"""Reading a credential out of request headers (pure).

A request must carry exactly one credential header: two `Authorization`
headers (or two `X-Auth-Token`) are ambiguous, and a proxy that reads the
first one would see another caller than we do, so they are refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_TOKEN_LENGTH = 512
# RFC 6750 b64token: a value joined from two headers ("a, Bearer b") never matches.
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


class AmbiguousCredential(Exception):
    """More than one credential header."""


def _single(values: Sequence[str]) -> str | None:
    if len(values) > 1:
        raise AmbiguousCredential()
    return values[0] if values else None


def _token(raw: str) -> str | None:
    raw = raw.strip()
    if not raw or len(raw) > MAX_TOKEN_LENGTH or not _TOKEN.fullmatch(raw):
        return None
    return raw


def bearer_token(values: Sequence[str]) -> str | None:
    """The token of the one `Authorization: Bearer <token>` header; None if absent or malformed."""
    header = _single(values)
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return _token(token)


def header_token(values: Sequence[str]) -> str | None:
    """The token of the one `X-Auth-Token: <token>` header (the OpenStack convention)."""
    header = _single(values)
    return _token(header) if header else None
