"""Keystone token validation for Placement (issue 16): who an `X-Auth-Token` speaks for.

`KeystoneValidator.validate(token)` asks Keystone (`GET <auth_url>/v3/auth/tokens?nocatalog`, the token
in `X-Subject-Token`, the service's own token in `X-Auth-Token`) and answers a `Credential`: user,
project, domains, roles, system scope and expiry. The service authenticates with the same OpenStack
settings the commitment sync uses (`RP_OPENSTACK_*`, or the `RP_COMMITMENTS_SECRET_ID` secret), through
keystoneauth1, which is imported on first use only: nothing here loads at `import app`.

- An answer is cached at most `RP_AUTH_CACHE_SECONDS` (capped at 60) and never past the token's
  `expires_at`; a refusal (Keystone's 404) is cached as long, so a revoked or expired token is 401 once
  that bound has passed, and a burst of bad tokens costs one call each per bound.
- Keystone unreachable, answering 5xx, or refusing the service itself (401 twice, 403: the service's
  account lacks the `service` role) is `KeystoneUnavailable` (503), never a pass, and never cached.
- The service's own token is renewed once when Keystone answers 401 to it.
- Tokens and passwords are never logged, never in an exception and never in a repr: cache keys are
  SHA-256 digests, keystoneauth's request logging is off for these calls (it would log Keystone's
  404 body, which names the token), and failures carry only what kind of failure it was.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from chalicelib.auth.principals import Principal
from chalicelib.config import ConfigurationError, Env, Settings, env_str
from chalicelib.errors import Unauthorized, Unavailable

if TYPE_CHECKING:
    from chalicelib.commitments.upstream import OpenStackConfig

log = logging.getLogger(__name__)

MAX_CACHE_SECONDS = 60
_MAX_ENTRIES = 4096
DEFAULT_TIMEOUT = 5.0  # seconds per call: Placement's caller waits behind it (API Gateway gives 29 s in all)

PLACEMENT_KEY_ROLES = ("admin", "service", "member", "reader")
PLACEMENT_KEY_PROJECT = "placement-keys"


class KeystoneUnavailable(Unavailable):
    """Keystone could not say whether the token is valid: 503, the caller repeats the request."""

    default_code = "keystone_unavailable"


@dataclass(frozen=True)
class Credential:
    """Whom a validated token speaks for, as Placement's policy reads it."""

    user_id: str
    user_domain_id: str | None
    project_id: str | None
    project_domain_id: str | None
    domain_id: str | None  # set for a domain-scoped token only
    roles: tuple[str, ...]
    system_scope: str | None  # "all" for a system-scoped token
    expires_at: datetime | None  # None: a Placement key, which does not expire (it is revoked)
    user_name: str | None = None
    project_name: str | None = None

    def policy_values(self) -> dict[str, Any]:
        """What oslo.context's `to_policy_values()` gives oslo.policy, for chalicelib.placement.policy."""
        return {
            "user_id": self.user_id, "user_domain_id": self.user_domain_id, "system_scope": self.system_scope,
            "domain_id": self.domain_id, "project_id": self.project_id, "project_domain_id": self.project_domain_id,
            "roles": list(self.roles), "is_admin_project": True, "service_user_id": None,
            "service_user_domain_id": None, "service_project_id": None, "service_project_domain_id": None,
            "service_roles": [],
        }


def placement_key_credential(name: str = "placement") -> Credential:
    """A Placement key as policy sees it in either auth mode: project-scoped, with every role Placement's
    defaults name, so a key can do all it could before (reshape included)."""
    return Credential(user_id=name, user_domain_id="default", project_id=PLACEMENT_KEY_PROJECT,
                      project_domain_id="default", domain_id=None, roles=PLACEMENT_KEY_ROLES, system_scope=None,
                      expires_at=None, user_name=name)


# --- the answer ----------------------------------------------------------------------------------------


class _Malformed(Exception):
    pass


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _instant(raw: Any) -> datetime:
    """Keystone's `2026-12-01T21:00:00.000000Z` (fraction optional; an offset accepted)."""
    if not isinstance(raw, str):
        raise _Malformed()
    try:
        parsed = datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith("Z") else raw)
    except ValueError:
        raise _Malformed() from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def credential_from_token(body: Any) -> Credential:
    """The credential in Keystone v3's token document (`{"token": {...}}`); _Malformed if it is not one."""
    token = body.get("token") if isinstance(body, dict) else None
    if not isinstance(token, dict):
        raise _Malformed()
    user = token.get("user")
    if not isinstance(user, dict) or _text(user.get("id")) is None:
        raise _Malformed()
    roles = token.get("roles", [])
    if not isinstance(roles, list) or not all(isinstance(r, dict) and _text(r.get("name")) for r in roles):
        raise _Malformed()
    project = token.get("project")
    domain = token.get("domain")
    system = token.get("system")
    if project is not None and (not isinstance(project, dict) or _text(project.get("id")) is None):
        raise _Malformed()
    if domain is not None and (not isinstance(domain, dict) or _text(domain.get("id")) is None):
        raise _Malformed()

    def domain_of(holder: Any) -> str | None:
        found = holder.get("domain") if isinstance(holder, dict) else None
        return _text(found.get("id")) if isinstance(found, dict) else None

    return Credential(
        user_id=str(user["id"]), user_domain_id=domain_of(user), user_name=_text(user.get("name")),
        project_id=_text(project.get("id")) if project else None, project_domain_id=domain_of(project),
        project_name=_text(project.get("name")) if project else None,
        domain_id=_text(domain.get("id")) if domain and not project else None,
        roles=tuple(str(r["name"]) for r in roles),
        system_scope="all" if isinstance(system, dict) and system.get("all") is True and not project else None,
        expires_at=_instant(token.get("expires_at")),
    )


def identity_v3_url(auth_url: str) -> str:
    base = auth_url.rstrip("/")
    return base if base.endswith("/v3") else f"{base}/v3"


# --- the validator -------------------------------------------------------------------------------------


class KeystoneValidator:
    """Validates tokens against one Keystone as one service account; thread-safe."""

    def __init__(self, config: OpenStackConfig, ttl_seconds: float, *, clock: Callable[[], float] = time.time,
                 timeout: float = DEFAULT_TIMEOUT, session: Any = None) -> None:
        self._config = config
        self._ttl = max(0.0, min(float(ttl_seconds), MAX_CACHE_SECONDS))
        self._clock = clock
        self._timeout = timeout
        self._session = session  # a keystoneauth Session; built on first use when None
        self._session_lock = threading.Lock()
        self._auth_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._cache: OrderedDict[str, tuple[float, Credential | None]] = OrderedDict()
        self.hits = 0
        self.misses = 0  # validations that asked Keystone

    @classmethod
    def from_env(cls, env: Env | None = None, *, secrets_client: Any = None, **options: Any) -> KeystoneValidator:
        """Keystone and the service's credentials as the commitment sync reads them: the
        RP_COMMITMENTS_SECRET_ID secret when set (deployed), else RP_OPENSTACK_*; the cache bound from
        RP_AUTH_CACHE_SECONDS."""
        env = os.environ if env is None else env
        from botocore.exceptions import BotoCoreError, ClientError

        from chalicelib.commitments.upstream import (
            ConfigError,
            OpenStackConfig,
            config_from_secret,
            secrets_manager_client,
        )

        secret = env_str(env, "RP_COMMITMENTS_SECRET_ID")
        try:
            if secret:
                client = secrets_client if secrets_client is not None else secrets_manager_client()
                config = config_from_secret(client, secret)
            else:
                config = OpenStackConfig.from_env(env)
        except ConfigError as error:
            where = "the RP_COMMITMENTS_SECRET_ID secret" if secret else "RP_OPENSTACK_*"
            raise ConfigurationError(f"Keystone token validation needs {where}: {error}") from None
        except (BotoCoreError, ClientError) as error:  # the secret could not be read now: a transient failure
            log.error("could not read the OpenStack secret for token validation",
                      extra={"failure": type(error).__name__})
            raise KeystoneUnavailable() from None
        return cls(config, Settings.from_env(env).auth_cache_seconds, **options)

    def __repr__(self) -> str:
        return f"KeystoneValidator(auth_url={self._config.auth_url!r}, ttl_seconds={self._ttl:g})"

    # --- validation ----------------------------------------------------------------------------------

    def validate(self, token: str | None) -> Credential:
        """The credential the token speaks for; Unauthorized (401) for an unknown, expired or revoked
        token; KeystoneUnavailable (503) when Keystone cannot tell."""
        if not token:
            raise Unauthorized()
        digest = hashlib.sha256(token.encode("utf-8")).hexdigest()
        now = self._clock()
        with self._cache_lock:
            cached = self._cache.get(digest)
            if cached is not None and now < cached[0]:
                self.hits += 1
                self._cache.move_to_end(digest)
                credential = cached[1]
            else:
                cached = None
        if cached is None:
            credential = self._ask_keystone(token)
            with self._cache_lock:
                self.misses += 1
                self._remember(digest, now, credential)
        if credential is None:
            raise Unauthorized()
        if credential.expires_at is not None and credential.expires_at.timestamp() <= self._clock():
            raise Unauthorized()
        return credential

    def _remember(self, digest: str, now: float, credential: Credential | None) -> None:
        if self._ttl <= 0:
            return
        until = now + self._ttl
        if credential is not None and credential.expires_at is not None:
            until = min(until, credential.expires_at.timestamp())
        if until <= now:
            return
        self._cache[digest] = (until, credential)
        self._cache.move_to_end(digest)
        while len(self._cache) > _MAX_ENTRIES:
            self._cache.popitem(last=False)

    def _ask_keystone(self, token: str) -> Credential | None:
        """Keystone's answer: the credential, or None for a token it does not know (or knows expired)."""
        session = self._keystone_session()
        service_token = self._service_token(session)
        response = self._get(session, token, service_token)
        if response.status_code == 401:  # the service's own token expired or was revoked: renew it once
            service_token = self._renewed(session, service_token)
            response = self._get(session, token, service_token)
        status = response.status_code
        if status == 404:
            return None
        if status in (401, 403):
            log.error("Keystone refused the service's own token for token validation",
                      extra={"status": status, "hint": "the service's account needs the service role"})
            raise KeystoneUnavailable()
        if status != 200:
            log.warning("Keystone did not validate a token", extra={"status": status})
            raise KeystoneUnavailable()
        try:
            credential = credential_from_token(response.json())
        except (ValueError, _Malformed):
            log.error("Keystone answered token validation with a document that is not a token")
            raise KeystoneUnavailable() from None
        if credential.expires_at is not None and credential.expires_at.timestamp() <= self._clock():
            return None
        return credential

    # --- keystoneauth ----------------------------------------------------------------------------------

    def _keystone_session(self) -> Any:
        if self._session is not None:
            return self._session
        with self._session_lock:
            if self._session is None:
                import requests
                from keystoneauth1 import session as ks_session
                from requests.adapters import HTTPAdapter

                from chalicelib.commitments.upstream import _auth_plugin

                http = requests.Session()
                adapter = HTTPAdapter(pool_connections=2, pool_maxsize=16)
                http.mount("http://", adapter)
                http.mount("https://", adapter)
                self._session = ks_session.Session(auth=_auth_plugin(self._config), session=http,
                                                   timeout=self._timeout)
            return self._session

    def _service_token(self, session: Any) -> str:
        from keystoneauth1 import exceptions as ks_exceptions

        try:
            token = session.get_token()
        except ks_exceptions.ClientException as error:
            # The library's message can carry URLs and bodies; keep only what kind of failure it was.
            log.error("the service could not authenticate to Keystone", extra={"failure": type(error).__name__})
            raise KeystoneUnavailable() from None
        if not token:
            raise KeystoneUnavailable()
        return str(token)

    def _renewed(self, session: Any, refused: str) -> str:
        """A service token other than `refused`: the first caller to see it refused renews, the others
        take the renewed one."""
        with self._auth_lock:
            current = self._service_token(session)
            if current == refused:
                session.invalidate()
                current = self._service_token(session)
            return current

    def _get(self, session: Any, token: str, service_token: str) -> Any:
        from keystoneauth1 import exceptions as ks_exceptions

        url = f"{identity_v3_url(self._config.auth_url)}/auth/tokens?nocatalog"
        try:
            return session.get(url, headers={"X-Auth-Token": service_token, "X-Subject-Token": token,
                                             "Accept": "application/json"},
                               authenticated=False, raise_exc=False, log=False, connect_retries=1)
        except ks_exceptions.ClientException as error:
            log.warning("Keystone unreachable for token validation", extra={"failure": type(error).__name__})
            raise KeystoneUnavailable() from None


# --- Placement's callers in either RP_PLACEMENT_AUTH mode ---------------------------------------------


class PlacementCallers:
    """Who a Placement `X-Auth-Token` speaks for: a Placement key (both modes) as
    `placement_key_credential()`, else (with `keystone`, RP_PLACEMENT_AUTH=keystone) a Keystone token.

    `authenticate` is the service's key authenticator (`Authenticator.authenticate`, cached); a key of
    another kind (a Site or service key) is 401 without asking Keystone. `keystone` builds the validator
    on the first token that is no key (so a deployment whose callers all use keys never reads the
    OpenStack secret), once.
    """

    def __init__(self, authenticate: Callable[[str | None], Principal],
                 keystone: Callable[[], KeystoneValidator] | None = None) -> None:
        self._authenticate = authenticate
        self._keystone_factory = keystone
        self._keystone: KeystoneValidator | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"PlacementCallers(keystone={self._keystone_factory is not None})"

    def credential(self, token: str | None) -> Credential:
        credential = self.principal(token).credential
        assert isinstance(credential, Credential)
        return credential

    def principal(self, token: str | None) -> Principal:
        """The Placement family's principal of the token, kind `placement`, its credential attached for
        the policy: a Placement key keeps its grant and gets `placement_key_credential()`; a Keystone
        caller holds no grant, only the token's roles and scope."""
        try:
            principal = self._authenticate(token)
        except Unauthorized:
            if self._keystone_factory is None or not token:
                raise
            credential = self._validator().validate(token)
            return Principal("placement", credential.user_id, credential=credential)
        if principal.kind != "placement":
            raise Unauthorized()
        return replace(principal, credential=placement_key_credential(principal.name))

    @property
    def validator(self) -> KeystoneValidator | None:
        """The Keystone validator once built (its hit and miss counts), else None."""
        return self._keystone

    def _validator(self) -> KeystoneValidator:
        with self._lock:
            if self._keystone is None:
                assert self._keystone_factory is not None
                self._keystone = self._keystone_factory()
            return self._keystone
