"""The agent contract's route table: each operation's method, path, grant and service function.

The composition root (`chalicelib.runtime`) builds the blueprint from it with the
contract's dependencies; everything HTTP-specific (credentials, bodies, errors)
is in `chalicelib.http`, everything else in the capability packages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.accounts.service import submit_accounts
from chalicelib.allocations.service import get_allocation
from chalicelib.auth.principals import SERVICE_GRANT, SITE_GRANT
from chalicelib.errors import BadRequest
from chalicelib.http.bodies import decode_json_object
from chalicelib.http.family import Reply, Request, Route
from chalicelib.members.service import get_member
from chalicelib.reports.service import submit_report
from chalicelib.retained.service import get_retained_accounts
from chalicelib.store.table import TableAccess
from chalicelib.view.intake import ViewIntake, parse_batch
from chalicelib.view.projects import get_project

SITE_PATH = "/resource-provisioning/{site}"


@dataclass(frozen=True)
class ContractDeps:
    """What the agent contract's handlers use: the table, and how long saved results live."""

    db: TableAccess
    idempotency_ttl_days: int


def _json(request: Request) -> dict[str, Any]:
    return decode_json_object(request.body, request.headers.get("content-type"))


def _query(request: Request) -> dict[str, str]:
    """Query parameters, each given at most once: a proxy reading the first of two values would see another request."""
    if any(len(values) != 1 for values in request.query.values()):
        raise BadRequest()
    return {name: values[0] for name, values in request.query.items()}


def _report(deps: ContractDeps, request: Request) -> Reply:
    return Reply(*submit_report(deps.db, request.params["site"], _json(request), deps.idempotency_ttl_days))


def _accounts(deps: ContractDeps, request: Request) -> Reply:
    return Reply(*submit_accounts(deps.db, request.params["site"], _json(request), deps.idempotency_ttl_days))


def _member(deps: ContractDeps, request: Request) -> Reply:
    ref = _query(request).get("providerProjectRef")
    return Reply(200, get_member(deps.db, request.params["site"], request.params["username"], ref))


def _retained(deps: ContractDeps, request: Request) -> Reply:
    return Reply(200, get_retained_accounts(deps.db, request.params["site"]))


def _allocation(deps: ContractDeps, request: Request) -> Reply:
    return Reply(200, get_allocation(deps.db, request.params["site"], request.params["allocationId"]))


def _project(deps: ContractDeps, request: Request) -> Reply:
    return Reply(200, get_project(deps.db, request.params["providerProjectRef"]))


def _events(deps: ContractDeps, request: Request) -> Reply:
    batch = parse_batch(_json(request))
    return Reply(200, ViewIntake(deps.db.client, deps.db.table).apply_batch(batch).body())


ROUTES: list[Route[ContractDeps]] = [
    Route("report", "POST", f"{SITE_PATH}/reports", SITE_GRANT, _report),
    Route("reportAccounts", "POST", f"{SITE_PATH}/accounts", SITE_GRANT, _accounts),
    Route("getMember", "GET", f"{SITE_PATH}/members/{{username}}", SITE_GRANT, _member),
    Route("getRetainedAccounts", "GET", f"{SITE_PATH}/retained-accounts", SITE_GRANT, _retained),
    Route("getAllocation", "GET", f"{SITE_PATH}/allocations/{{allocationId}}", SITE_GRANT, _allocation),
    Route("getProject", "GET", f"{SITE_PATH}/projects/{{providerProjectRef}}", SITE_GRANT, _project),
    Route("intakeEvents", "POST", "/api/resource-provisioning/events", SERVICE_GRANT, _events),
]
