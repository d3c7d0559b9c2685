"""The process-wide wiring: settings, the DynamoDB client and the repositories built on it.

Built lazily on first use (so importing `app.py` costs nothing and a cold start
pays for one client), and resettable for tests that point the service at
another store.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from chalicelib.auth.repository import KeyRepository
from chalicelib.auth.service import Authenticator
from chalicelib.config import Settings
from chalicelib.store.client import RoundTripCounter, make_client
from chalicelib.tenants.rules import principal_resolver
from chalicelib.tenants.store import TenantStore


@dataclass
class Services:
    settings: Settings
    client: Any
    round_trips: RoundTripCounter
    keys: KeyRepository
    authenticator: Authenticator
    tenants: TenantStore

    @property
    def table(self) -> str:
        return self.settings.table_name


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
