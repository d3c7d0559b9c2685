"""One authenticator for every family, with a short cache so a steady caller costs no store read per request.

Positive and negative answers are cached for `auth_cache_seconds` (at most
60), which is how long a revoked key may keep working and how long a newly
issued key may be refused. A tenant principal revoked or re-granted through
this container is forgotten here at once (`forget_tenant_principal`); other
containers' entries age out.
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

# (the principal name a key record stores, the record's epoch) -> whom the key speaks for; None: nobody.
# The default knows the key principals only; the composition root hands one that also opens tenant
# principals (chalicelib/tenants/rules.py `principal_resolver`).
PrincipalResolver = Callable[[str, str | None], Principal | None]


def key_principals_only(stored_name: str, _epoch: str | None) -> Principal | None:
    return key_principal(stored_name)


_MAX_ENTRIES = 1024


class Authenticator:
    def __init__(
        self, keys: KeyRepository, ttl_seconds: float, clock: Callable[[], float] = time.monotonic,
        resolve: PrincipalResolver = key_principals_only,
    ) -> None:
        self._keys = keys
        self._resolve = resolve
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

    def forget_tenant_principal(self, tenant: str, name: str) -> None:
        """Drops this container's cached answers for one tenant principal, so that its revocation or its new
        grants hold here from the next request on."""
        with self._lock:
            stale = [digest for digest, (_, principal) in self._cache.items()
                     if principal is not None and principal.kind == "tenant"
                     and (principal.tenant, principal.name) == (tenant, name)]
            for digest in stale:
                del self._cache[digest]

    def _lookup(self, digest: str) -> Principal | None:
        record = self._keys.find(digest)
        if record is None or not record.active or not same_hash(record.key_hash, digest):
            return None
        return self._resolve(record.principal, record.epoch)
