"""Until the app's family framework is on this branch: dispatch a request to the route table
the way build_blueprint will (begin -> authenticate -> 405/404 -> handler -> finish).

Tests use it through `PlacementClient`; once `app.py` registers `placement_blueprint`, the
fixture switches to the real app and this module goes.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from chalicelib import errors as service_errors
from chalicelib.auth.keys import hash_key
from chalicelib.placement.family import PlacementFamily
from chalicelib.placement.framework import PLACEMENT_GRANT, Principal, Request
from chalicelib.placement.handler import ROUTES


class _Headers(dict):
    def get(self, name: str, default: Any = None) -> Any:  # case-insensitive
        return super().get(name.lower(), default)


def _pattern(template: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)) + "$")


_TABLE = [(_pattern(r.path), r) for r in ROUTES]
_FAMILY = PlacementFamily()


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str]


def dispatch(svc: Any, method: str, target: str, headers: dict[str, str], body: bytes,
             url_root: str = "http://127.0.0.1:8000") -> Answer:
    parts = urlsplit(target)
    query = {k: v for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    lowered = _Headers({k.lower(): v for k, v in headers.items()})
    routes = [(m, r) for p, r in _TABLE if (m := p.match(parts.path))]
    params = {k: unquote(v) for k, v in routes[0][0].groupdict().items()} if routes else {}
    request = Request(method=method, path=parts.path, params=params, query=query, headers=lowered, body=body,
                      url_root=url_root, request_id=str(uuid.uuid4()))
    try:
        _FAMILY.begin(request)
        wanted = "GET" if method == "HEAD" else method
        serving = [r for _m, r in routes if r.method == wanted]
        if not routes:
            raise service_errors.NotFound()
        if not serving or serving[0].grant is not None:
            _authenticate(svc, request)
        if not serving:
            error = service_errors.MethodNotAllowed()
            error.allowed = sorted({r.method for _m, r in routes})  # type: ignore[attr-defined]
            raise error
        reply = serving[0].handler(svc, request)
    except Exception as exc:  # noqa: BLE001 - the family renders every error
        reply = _FAMILY.render(request, exc)
    reply = _FAMILY.finish(request, reply)
    out_headers = dict(reply.headers)
    raw = None
    if reply.body is not None:
        out_headers["content-type"] = "application/json"
        raw = json.dumps(reply.body)
    if method == "HEAD":
        raw = None
    return Answer(reply.status, raw, out_headers)


def _authenticate(svc: Any, request: Request) -> Principal:
    token = _FAMILY.credential(request)
    record = svc.keys.find(hash_key(token)) if token else None
    if record is None or not record.active or record.principal != "placement":
        raise service_errors.Unauthorized()
    return Principal(kind="placement", name="placement", grants=frozenset({PLACEMENT_GRANT}))
