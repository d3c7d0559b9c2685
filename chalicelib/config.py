"""Runtime settings: every environment variable the service reads, typed, in this one module.

Each variable is documented once, in docs/configuration.md. Defaults suit a
deployed stage; `make run` overrides what a laptop needs. A value that cannot
be read is a `ConfigurationError` naming the variable and what it must be
(never the value: some are secrets), raised where the settings are read.

Why not pydantic-settings: it adds about 150 ms to `import app` (its sources
pull in asyncio and its CLI machinery), a quarter of the cold-start budget;
the readers below give the same typed, named errors (decision 0037).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

# Raised here and where a setting is read outside this module (observability, the commitment sync).
from chalicelib.errors import ConfigurationError as ConfigurationError

Env = Mapping[str, str]


def _raw(env: Env, name: str) -> str | None:
    value = env.get(name)
    return value if value not in (None, "") else None


def env_str(env: Env, name: str, default: str | None = None) -> str | None:
    return _raw(env, name) or default


def env_int(env: Env, name: str, default: int, *, minimum: int | None = None) -> int:
    raw = _raw(env, name)
    if raw is None:
        return default
    # ASCII digits only: int() would also take "٣" or " 3_0 ".
    text = raw.strip()
    digits = text[1:] if text[:1] in "+-" else text
    if not (digits.isascii() and digits.isdigit()):
        raise ConfigurationError(f"{name} must be a whole number")
    value = int(text)
    if minimum is not None and value < minimum:
        raise ConfigurationError(f"{name} must be at least {minimum}")
    return value


def env_float(env: Env, name: str, default: float, *, positive: bool = False) -> float:
    raw = _raw(env, name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be a number (seconds)") from None
    if value != value or value in (float("inf"), float("-inf")) or (positive and value <= 0):
        raise ConfigurationError(f"{name} must be a {'positive ' if positive else ''}finite number")
    return value


def env_choice(env: Env, name: str, default: str, choices: tuple[str, ...]) -> str:
    value = _raw(env, name) or default
    if value not in choices:
        raise ConfigurationError(f"{name} must be one of: {', '.join(choices)}")
    return value


def endpoint_from_env(env: Env | None = None) -> str | None:
    """The DynamoDB endpoint an emulator or test sets; None means AWS itself."""
    env = os.environ if env is None else env
    return _raw(env, "AWS_ENDPOINT_URL_DYNAMODB") or _raw(env, "AWS_ENDPOINT_URL")


STORE_TRANSPORTS = ("direct", "botocore")


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
    # "direct" (chalicelib/store/direct_client.py, decision 0052) or "botocore": how data-plane calls are sent.
    store_transport: str = "direct"

    @classmethod
    def from_env(cls, env: Env | None = None) -> Settings:
        env = os.environ if env is None else env
        return cls(
            table_name=env_str(env, "RP_TABLE_NAME", "resource-provisioning") or "resource-provisioning",
            region=_raw(env, "AWS_REGION") or _raw(env, "AWS_DEFAULT_REGION") or "us-east-1",
            endpoint_url=endpoint_from_env(env),
            # A revoked key must stop working within 60 s: the cache may never hold longer.
            auth_cache_seconds=min(env_int(env, "RP_AUTH_CACHE_SECONDS", 30, minimum=0), 60),
            # Saved request results must live at least 7 days.
            idempotency_ttl_days=max(env_int(env, "RP_IDEMPOTENCY_TTL_DAYS", 8), 7),
            connect_timeout=env_float(env, "RP_STORE_CONNECT_TIMEOUT", 2.0, positive=True),
            read_timeout=env_float(env, "RP_STORE_READ_TIMEOUT", 5.0, positive=True),
            max_attempts=env_int(env, "RP_STORE_MAX_ATTEMPTS", 3, minimum=1),
            store_transport=env_choice(env, "RP_STORE_TRANSPORT", "direct", STORE_TRANSPORTS),
        )


@dataclass(frozen=True)
class FleetSettings:
    """The drift reconciler's: where its events go, and (under `make run`) how often it runs."""

    event_bus: str
    events_endpoint: str | None
    drift_interval_seconds: float

    @classmethod
    def from_env(cls, env: Env | None = None) -> FleetSettings:
        env = os.environ if env is None else env
        return cls(
            event_bus=env_str(env, "RP_FLEET_EVENT_BUS", "default") or "default",
            events_endpoint=env_str(env, "RP_FLEET_EVENTS_ENDPOINT"),
            drift_interval_seconds=env_float(env, "RP_DRIFT_INTERVAL_SECONDS", 900.0, positive=True),
        )


@dataclass(frozen=True)
class PlacementAuthSettings:
    """How Placement authenticates and authorizes (issue 16, docs/placement-keystone.md): Placement keys
    only, or Keystone tokens too; Placement's policy defaults, new or deprecated; an override file."""

    auth: str  # "keys" or "keystone"
    policy_mode: str  # "secure" or "legacy"
    policy_file: str | None

    @classmethod
    def from_env(cls, env: Env | None = None) -> PlacementAuthSettings:
        env = os.environ if env is None else env
        return cls(
            auth=env_choice(env, "RP_PLACEMENT_AUTH", "keys", ("keys", "keystone")),
            policy_mode=env_choice(env, "RP_PLACEMENT_POLICY", "secure", ("secure", "legacy")),
            policy_file=env_str(env, "RP_PLACEMENT_POLICY_FILE"),
        )

    @property
    def keystone(self) -> bool:
        return self.auth == "keystone"


@dataclass(frozen=True)
class PlacementCandidateSettings:
    """How GET /allocation_candidates bounds its work (docs/placement.md): at most `max_candidates` are
    generated (Placement's `max_allocation_candidates`, unbounded there; bounded here), walking the trees
    `depth-first` (every candidate of one tree before the next, as upstream's default) or `breadth-first`."""

    max_candidates: int
    strategy: str

    @classmethod
    def from_env(cls, env: Env | None = None) -> PlacementCandidateSettings:
        env = os.environ if env is None else env
        return cls(
            max_candidates=env_int(env, "RP_PLACEMENT_MAX_CANDIDATES", 1000, minimum=1),
            strategy=env_choice(env, "RP_PLACEMENT_CANDIDATE_STRATEGY", "depth-first",
                                ("depth-first", "breadth-first")),
        )


@dataclass(frozen=True)
class PlacementCacheSettings:
    """What a process keeps of what it read, to save a read next time: providers' inventories, to claim for
    new consumers without reading first (docs/decisions/0050-claims-on-known-inventories.md), and the
    providers each consumer holds, to read a consumer with its providers' generations in one call
    (docs/decisions/0051-consumers-read-with-their-providers.md). 0 keeps none of that kind."""

    known_inventories: int
    known_consumers: int

    @classmethod
    def from_env(cls, env: Env | None = None) -> PlacementCacheSettings:
        env = os.environ if env is None else env
        return cls(known_inventories=env_int(env, "RP_PLACEMENT_KNOWN_INVENTORIES", 4096, minimum=0),
                   known_consumers=env_int(env, "RP_PLACEMENT_KNOWN_CONSUMERS", 16384, minimum=0))


def read_every_setting(env: Env | None = None) -> None:
    """Reads each settings class of this module once, raising the first ConfigurationError: what `make run`
    checks before it starts. Deployed, each is read where it is used (a family's on its first request), so
    the agent contract's cold start does not read Placement's."""
    env = os.environ if env is None else env
    Settings.from_env(env)
    FleetSettings.from_env(env)
    PlacementAuthSettings.from_env(env)
    PlacementCandidateSettings.from_env(env)
    PlacementCacheSettings.from_env(env)
