"""One authenticator for every family, with a short cache so a steady caller costs no store read per request.

Positive and negative answers are cached for `auth_cache_seconds` (at most
60), which is how long a revoked key may keep working and how long a newly
issued key may be refused.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from chalicelib.auth.keys import hash_key, same_hash
from chalicelib.auth.principals import Principal, key_principal
from chalicelib.auth.repository import KeyRepository
from chalicelib.errors import Unauthorized
from chalicelib.tenants.models import TenantPrincipal
from chalicelib.tenants.rules import parse_stored_name, principal_of

TenantLookup = Callable[[str, str], TenantPrincipal | None]

_MAX_ENTRIES = 1024


class Authenticator:
    def __init__(
        self, keys: KeyRepository, ttl_seconds: float, clock: Callable[[], float] = time.monotonic,
        tenant_principal: TenantLookup | None = None,
    ) -> None:
        self._keys = keys
        self._tenant_principal = tenant_principal
        self._ttl = ttl_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, tuple[float, Principal | None]] = OrderedDict()

    def authenticate(self, token: str | None) -> Principal:
        """The principal a raw token speaks for; Unauthorized when there is none."""
        if token is None:
            raise Unauthorized()
        digest = hash_key(token)
        now = self._clock()
        with self._lock:
            cached = self._cache.get(digest)
        if cached is not None and now - cached[0] < self._ttl:
            principal = cached[1]
        else:
            principal = self._lookup(digest)
            with self._lock:
                self._cache[digest] = (now, principal)
                self._cache.move_to_end(digest)
                while len(self._cache) > _MAX_ENTRIES:
                    self._cache.popitem(last=False)
        if principal is None:
            raise Unauthorized()
        return principal

    def _lookup(self, digest: str) -> Principal | None:
        record = self._keys.find(digest)
        if record is None or not record.active or not same_hash(record.key_hash, digest):
            return None
        tenant_name = parse_stored_name(record.principal)
        if tenant_name is None:
            return key_principal(record.principal)
        if self._tenant_principal is None:
            return None
        # A second read: the principal's grants and epoch, so a revocation or re-grant applies to every token.
        return principal_of(self._tenant_principal(*tenant_name), record.epoch)
