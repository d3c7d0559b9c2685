"""The composition root: settings, the DynamoDB client, every store adapter and service, built once per
Lambda container, and each API family's blueprint with what its handlers need.

Nothing below this module knows how the service is wired: the family framework
(`chalicelib.http.family`) is handed a `Wiring` per family, services are handed
their store adapters. What a family needs is built on that family's first
request (so the agent contract's cold start does not pay for Placement or fleet),
and the whole wiring can be replaced by tests that point the service at another
store (`use_services`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from chalice import Blueprint

from chalicelib.api import ROUTES as CONTRACT_ROUTES
from chalicelib.api import ContractDeps
from chalicelib.auth.principals import Principal
from chalicelib.auth.repository import KeyRepository
from chalicelib.auth.service import Authenticator
from chalicelib.config import PlacementCandidateSettings, Settings
from chalicelib.http.contract import CONTRACT
from chalicelib.http.family import Family, Route, Wiring, build_blueprint
from chalicelib.store.client import RoundTripCounter, make_client
from chalicelib.tenants.rules import principal_resolver
from chalicelib.tenants.store import TenantStore

if TYPE_CHECKING:
    from chalicelib.auth.keystone import PlacementCallers
    from chalicelib.compute_api import ComputeDeps
    from chalicelib.config import PlacementAuthSettings
    from chalicelib.placement.policy import PlacementPolicy
    from chalicelib.placement.service import PlacementService

T = TypeVar("T")


@dataclass
class Services:
    """The process's wiring. Store adapters are cheap to build; what a family alone needs is built on first
    use, once (`_once`)."""

    settings: Settings
    client: Any
    round_trips: RoundTripCounter
    keys: KeyRepository
    authenticator: Authenticator
    tenants: TenantStore
    # How Placement authenticates and authorizes; None: read from the environment on first use.
    placement_auth_settings: PlacementAuthSettings | None = None
    _built: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def table(self) -> str:
        return self.settings.table_name

    def _once(self, name: str, build: Callable[[], T]) -> T:
        if name not in self._built:
            with self._lock:
                if name not in self._built:
                    self._built[name] = build()
        value: T = self._built[name]
        return value

    @property
    def contract(self) -> ContractDeps:
        return self._once("contract", lambda: ContractDeps(self, self.settings.idempotency_ttl_days))

    @property
    def placement(self) -> PlacementService:
        """Placement's service (its schemas and handlers load with it, on the first Placement request)."""
        def build() -> PlacementService:
            from chalicelib.placement.deps import placement_service

            return placement_service(self.client, self.table, PlacementCandidateSettings.from_env())

        return self._once("placement", build)

    @property
    def placement_auth(self) -> PlacementAuthSettings:
        from chalicelib.config import PlacementAuthSettings

        return self.placement_auth_settings or self._once("placement_auth", PlacementAuthSettings.from_env)

    @property
    def placement_callers(self) -> PlacementCallers:
        """Who a Placement X-Auth-Token speaks for: Placement keys, and with RP_PLACEMENT_AUTH=keystone
        Keystone tokens, validated by a validator built on the first token that is no key."""
        auth = self.placement_auth  # read before `_once` takes the lock (it is not reentrant)

        def build() -> PlacementCallers:
            from chalicelib.auth.keystone import KeystoneValidator, PlacementCallers

            keystone = KeystoneValidator.from_env if auth.keystone else None
            return PlacementCallers(self.authenticator.authenticate, keystone)

        return self._once("placement_callers", build)

    @property
    def placement_policy(self) -> PlacementPolicy:
        """Placement's policy (RP_PLACEMENT_POLICY, RP_PLACEMENT_POLICY_FILE), read once."""
        auth = self.placement_auth

        def build() -> PlacementPolicy:
            from chalicelib.placement.policy import load_policy

            return load_policy(auth)

        return self._once("placement_policy", build)


def build_services(settings: Settings | None = None, client: Any = None) -> Services:
    settings = settings or Settings.from_env()
    client = client or make_client(settings)
    keys = KeyRepository(client, settings.table_name)
    tenants = TenantStore(client, settings.table_name)
    return Services(
        settings=settings,
        client=client,
        round_trips=RoundTripCounter(client),
        keys=keys,
        authenticator=Authenticator(keys, settings.auth_cache_seconds, resolve=principal_resolver(tenants.principal)),
        tenants=tenants,
    )


_lock = threading.Lock()
_services: Services | None = None


def services() -> Services:
    global _services
    if _services is None:
        with _lock:
            if _services is None:
                _services = build_services()
    return _services


def use_services(value: Services | None) -> None:
    """Install (or with None, drop) the wiring; tests and the local server call this."""
    global _services
    with _lock:
        _services = value


# --- the families' blueprints ----------------------------------------------------------------------

def _authenticate(token: str | None) -> Principal:
    return services().authenticator.authenticate(token)


def _blueprint(family: Family, routes: list[Route[T]], deps: Callable[[], T]) -> Blueprint:
    return build_blueprint(family, routes, Wiring(deps=deps, authenticate=_authenticate))


def contract_blueprint() -> Blueprint:
    return _blueprint(CONTRACT, CONTRACT_ROUTES, lambda: services().contract)


def operator_blueprint() -> Blueprint:
    from chalicelib.http.compute import OPERATOR
    from chalicelib.operator_api import ROUTES

    return _blueprint(OPERATOR, ROUTES, services)


def compute_blueprint() -> Blueprint:
    from chalicelib.compute_api import compute_deps, compute_registry, compute_routes
    from chalicelib.http.compute import COMPUTE

    def deps() -> ComputeDeps:
        svc = services()
        return svc._once("compute", lambda: compute_deps(svc, svc.tenants))

    return _blueprint(COMPUTE, compute_routes(compute_registry()), deps)


def placement_blueprint() -> Blueprint:
    from chalicelib.placement.family import PlacementFamily
    from chalicelib.placement.handler import ROUTES

    family = PlacementFamily(policy=lambda: services().placement_policy)
    wiring = Wiring(deps=lambda: services().placement, authenticate=_placement_caller)
    return build_blueprint(family, ROUTES, wiring)


def _placement_caller(token: str | None) -> Principal:
    return services().placement_callers.principal(token)


# --- scheduled functions and event sources -----------------------------------------------------------

def fleet_drift() -> dict[str, int]:
    """One pass of the fleet drift reconciler over every tenant with an applied document."""
    from chalicelib.fleet.eventbridge import eventbridge_publisher
    from chalicelib.fleet.reconciler import reconcile
    from chalicelib.fleet.store import FleetStore

    svc = services()
    return reconcile(FleetStore(svc.client, svc.table), eventbridge_publisher())


def commitments_sync() -> dict[str, Any]:
    """One commitment sync pass (the lease makes an overlapping run `skipped`)."""
    from chalicelib.commitments.service import sync

    return sync(services())


def view_events(event: dict[str, Any]) -> dict[str, Any]:
    """Beto's events from SQS, as a partial batch response: only the messages that failed go back."""
    from chalicelib.view.sqs import consume_event

    return consume_event(services(), event).response()
