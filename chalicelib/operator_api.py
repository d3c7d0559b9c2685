"""Operator routes (the service key), answered in the compute API's error envelope.

Tenants: principals (tokens with grants) and registered Sites.
Fleet: a reconciler pass on demand, and the events it published.
Commitment sync: a pass on demand, its runs and reservations (chalicelib/commitments/api.py).

Handlers are named, not imported: each module loads on the first operator request that needs it.
"""

from __future__ import annotations

from typing import Any

from chalicelib.auth.principals import SERVICE_GRANT
from chalicelib.http.family import Route, lazy

TENANT = "/api/tenants/{tenant}"


def _h(name: str) -> Any:
    return lazy("chalicelib.operator_handlers", name)


def _c(name: str) -> Any:
    return lazy("chalicelib.commitments.api", name)


ROUTES: list[Route[Any]] = [
    Route("tenants.principals.issue", "POST", f"{TENANT}/principals", SERVICE_GRANT, _h("issue")),
    Route("tenants.principals.list", "GET", f"{TENANT}/principals", SERVICE_GRANT, _h("principals")),
    Route("tenants.principals.revoke", "DELETE", f"{TENANT}/principals/{{principal}}", SERVICE_GRANT, _h("revoke")),
    Route("tenants.sites.register", "POST", f"{TENANT}/sites", SERVICE_GRANT, _h("register_site")),
    Route("tenants.sites.list", "GET", f"{TENANT}/sites", SERVICE_GRANT, _h("sites")),
    Route("fleet.reconcile", "POST", "/api/fleet/reconcile", SERVICE_GRANT, _h("reconcile")),
    Route("fleet.events", "GET", "/api/fleet/events", SERVICE_GRANT, _h("fleet_events")),
    # --- commitment sync (issue 10) ---
    Route("commitments.sync", "POST", "/api/commitments/sync", SERVICE_GRANT, _c("sync_now")),
    Route("commitments.runs", "GET", "/api/commitments/runs", SERVICE_GRANT, _c("runs")),
    Route("commitments.reservations", "GET", "/api/commitments/reservations", SERVICE_GRANT,
          _c("reservations")),
    # --- end commitment sync ---
]
