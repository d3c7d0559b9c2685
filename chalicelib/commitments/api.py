"""The operator routes' handlers for the commitment sync (rows in chalicelib/operator_api.py).

`POST /api/commitments/sync` runs a pass now and answers 200 with its run record, whatever
the outcome; `GET /api/commitments/runs` lists recent runs, newest first;
`GET /api/commitments/reservations?projectId=&status=&nextToken=` pages reservations
(at most 100 a page), each with its store revision. Errors are the compute envelope's; they
never echo input. Every parameter is read by a bounded parser: ASCII digits only for `limit`
(`str.isdigit` accepts "²", which `int` refuses), and a token is checked for its exact shape
before anything decodes it (store.decode_token), so no input reaches an unbounded decoder.
"""

from __future__ import annotations

import re
from typing import Any

from chalicelib.commitments.service import STATUSES, reservation_body, sync
from chalicelib.commitments.store import PAGE_LIMIT, TOKEN_MAX_CHARS, CommitmentStore, InvalidToken
from chalicelib.compute.errors import InvalidArgument
from chalicelib.http.family import Reply, Request
from chalicelib.store.table import TableAccess

RUNS_DEFAULT, RUNS_MAX = 20, 100
_PROJECT = re.compile(r"^[A-Za-z0-9_.:@-]{1,255}$")  # Keystone ids are hex; be generous, never echo it
_LIMIT = re.compile(r"[0-9]{1,3}")  # ASCII digits only (re's [0-9], never \d or isdigit: both take Unicode digits)
_TOKEN = re.compile(rf"[A-Za-z0-9_=-]{{1,{TOKEN_MAX_CHARS}}}")


def _one(request: Request, name: str) -> str | None:
    values = request.query.get(name) or []
    if len(values) > 1:
        raise InvalidArgument(name, "The parameter is given more than once.")
    return values[0] if values else None


def sync_now(svc: TableAccess, request: Request) -> Reply:
    return Reply(200, sync(svc))


def runs(svc: TableAccess, request: Request) -> Reply:
    raw = _one(request, "limit")
    limit = RUNS_DEFAULT
    if raw is not None:
        if not _LIMIT.fullmatch(raw) or not 1 <= int(raw) <= RUNS_MAX:
            raise InvalidArgument("limit", f"limit is an integer from 1 to {RUNS_MAX}.")
        limit = int(raw)
    return Reply(200, {"items": CommitmentStore(svc.client, svc.table).runs(limit)})


def reservations(svc: TableAccess, request: Request) -> Reply:
    project = _one(request, "projectId")
    status = _one(request, "status")
    token = _one(request, "nextToken")
    if project is not None and not _PROJECT.fullmatch(project):
        raise InvalidArgument("projectId", "projectId is not a project id.")
    if status is not None and status not in STATUSES:
        raise InvalidArgument("status", f"status is one of {', '.join(STATUSES)}.")
    if token is not None and not _TOKEN.fullmatch(token):
        raise InvalidArgument("nextToken", "nextToken is not a token this listing gave.")
    try:
        stored, next_token = CommitmentStore(svc.client, svc.table).reservation_page(project, status, token,
                                                                                      PAGE_LIMIT)
    except InvalidToken:
        raise InvalidArgument("nextToken", "nextToken is not a token this listing gave.") from None
    body: dict[str, Any] = {"items": [reservation_body(s) for s in stored]}
    if next_token is not None:
        body["nextToken"] = next_token
    return Reply(200, body)
