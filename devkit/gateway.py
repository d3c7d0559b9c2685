"""A minimal API Gateway stand-in: HTTP request -> Lambda proxy event -> the Chalice app.

It uses Chalice's own route matcher and event converter, so the app runs
exactly the code path it runs in Lambda. What API Gateway answers by itself
is answered here the way the deployed gateway is configured to (see
infra/): an unknown path is 404 `not_found`, an oversized body 400 `too_large` (under /placement,
400 in Placement's error format with a request id, as Placement clients read errors: decision 0024).
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from chalice.local import LambdaContext, LambdaEventConverter, MatchResult, RouteMatcher

from chalicelib.http.family import Request, family_for_path, unknown_route

# API Gateway refuses payloads over 10 MB before Lambda sees them.
GATEWAY_MAX_BODY = 10 * 1024 * 1024
TOO_LARGE_DETAIL = f"The request body is larger than {GATEWAY_MAX_BODY} bytes, the most this gateway accepts."


def _error(status: int, code: str) -> dict[str, Any]:
    # The same bytes as the app's own `{"code": ...}` answers (and API Gateway's configured responses).
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"code": code}, separators=(",", ":")),
    }


def too_large(method: str, path: str, headers: dict[str, str]) -> dict[str, Any]:
    """The answer to a body over GATEWAY_MAX_BODY: the contract's `{"code":"too_large"}`, except under
    /placement, where it is Placement's 400 (its error body, microversion and request id headers)."""
    bare = path.split("?", 1)[0]
    family = family_for_path(bare)
    if family is None or family.name != "placement":
        return _error(400, "too_large")
    from chalicelib.placement.web import HttpError

    lowered = {k.lower(): v for k, v in headers.items()}
    request = Request(method=method.upper(), path=bare, params={}, query={}, headers=lowered,
                      header_values={k: [v] for k, v in lowered.items()}, body=b"", url_root="",
                      request_id=str(uuid.uuid4()), context={})
    try:
        family.begin(request)
        reply = family.render(request, HttpError(400, TOO_LARGE_DETAIL))
    except Exception as exc:  # noqa: BLE001 - a bad microversion is answered as Placement answers it
        reply = family.render(request, exc)
    response = family.encode(family.finish(request, reply))
    return {"statusCode": response.status_code, "headers": dict(response.headers), "body": response.body}


class IndexedRouteMatcher(RouteMatcher):
    """Chalice's route matcher with its routes indexed by their number of segments: the same first match in
    the same (sorted) order, without comparing a path against every route of the app (about 150, a tenth
    of a request's CPU here). The parameters are the matched route's only, as API Gateway passes them
    (Chalice's loop keeps those a route that failed further on had captured)."""

    def __init__(self, route_urls: list[str]) -> None:
        super().__init__(route_urls)
        self._by_length: dict[int, list[tuple[str, list[str]]]] = {}
        for route_url in self.route_urls:
            parts = route_url.split("/")
            self._by_length.setdefault(len(parts), []).append((route_url, parts))

    def match_route(self, url: str) -> MatchResult:
        parsed = urlparse(url)  # as Chalice's matcher parses it (a `;params` tail is not the path's)
        query_params = parse_qs(parsed.query, keep_blank_values=True)
        path = parsed.path
        if path != "/" and path.endswith("/"):
            path = path[:-1]  # as API Gateway (and Chalice's matcher)
        parts = path.split("/")
        for route_url, route_parts in self._by_length.get(len(parts), ()):
            captured = {}
            for given, expected in zip(parts, route_parts, strict=True):
                if expected.startswith("{") and expected.endswith("}"):
                    captured[expected[1:-1]] = given
                elif given != expected:
                    break
            else:
                return MatchResult(route_url, captured, query_params)
        raise ValueError(f"No matching route found for: {url}")


class LocalGateway:
    def __init__(self, app: Any) -> None:
        self._app = app
        self._converter = LambdaEventConverter(IndexedRouteMatcher(list(app.routes)), app.api.binary_types)

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes | None) -> dict[str, Any]:
        if body is not None and len(body) > GATEWAY_MAX_BODY:
            return too_large(method, path, headers)
        try:
            event = self._converter.create_lambda_event(method, path, headers, body)
        except ValueError:
            return unknown_route(method, path, headers)
        event["requestContext"]["requestId"] = str(uuid.uuid4())
        # API Gateway hands Lambda percent-decoded path parameters.
        event["pathParameters"] = {k: unquote(v) for k, v in (event.get("pathParameters") or {}).items()}
        context = LambdaContext("resource-provisioning", 1024, max_runtime_ms=30000)
        response: dict[str, Any] = self._app(event, context)
        if response.get("isBase64Encoded") and response.get("body"):
            response["body"] = base64.b64decode(response["body"])
        return response
