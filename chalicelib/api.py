"""The route table: each operation's method, audience and service function.

`app.py` maps paths to these; everything HTTP-specific (auth, bodies, errors)
is in `chalicelib.http`, everything else in the capability packages.
"""

from __future__ import annotations

from typing import Any

from chalicelib.accounts.service import submit_accounts
from chalicelib.allocations.service import get_allocation
from chalicelib.http.bodies import decode_json_object
from chalicelib.http.dispatch import SERVICE, SITE, Operation
from chalicelib.members.service import get_member
from chalicelib.reports.service import submit_report
from chalicelib.retained.service import get_retained_accounts
from chalicelib.runtime import Services
from chalicelib.view.intake import ViewIntake, parse_batch
from chalicelib.view.projects import get_project


def _json(request: Any) -> dict[str, Any]:
    return decode_json_object(request.raw_body, request.headers.get("content-type"))


def _report(svc: Services, request: Any, p: dict[str, str]) -> tuple[int, dict[str, Any]]:
    return submit_report(svc, p["site"], _json(request))


def _accounts(svc: Services, request: Any, p: dict[str, str]) -> tuple[int, dict[str, Any]]:
    return submit_accounts(svc, p["site"], _json(request))


def _member(svc: Services, request: Any, p: dict[str, str]) -> tuple[int, dict[str, Any]]:
    query = request.query_params or {}
    return 200, get_member(svc, p["site"], p["username"], query.get("providerProjectRef"))


def _retained(svc: Services, request: Any, p: dict[str, str]) -> tuple[int, dict[str, Any]]:
    return 200, get_retained_accounts(svc, p["site"])


def _allocation(svc: Services, request: Any, p: dict[str, str]) -> tuple[int, dict[str, Any]]:
    return 200, get_allocation(svc, p["site"], p["allocationId"])


def _project(svc: Services, request: Any, p: dict[str, str]) -> tuple[int, dict[str, Any]]:
    return 200, get_project(svc, p["providerProjectRef"])


def _events(svc: Services, request: Any, p: dict[str, str]) -> tuple[int, dict[str, Any]]:
    batch = parse_batch(_json(request))
    return 200, ViewIntake(svc.client, svc.table).apply_batch(batch).body()


REPORT = Operation("report", "POST", SITE, _report)
REPORT_ACCOUNTS = Operation("reportAccounts", "POST", SITE, _accounts)
GET_MEMBER = Operation("getMember", "GET", SITE, _member)
GET_RETAINED_ACCOUNTS = Operation("getRetainedAccounts", "GET", SITE, _retained)
GET_ALLOCATION = Operation("getAllocation", "GET", SITE, _allocation)
GET_PROJECT = Operation("getProject", "GET", SITE, _project)
INTAKE_EVENTS = Operation("intakeEvents", "POST", SERVICE, _events)
