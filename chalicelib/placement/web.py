"""What every Placement handler does with HTTP: the negotiated microversion, JSON bodies validated
with `jsonschema` (details as Placement words them), media types, URLs and cache headers, and
`HttpError`, the answers only the HTTP edge gives (406, 415, a route gated by the microversion)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.utils import formatdate
from typing import Any
from urllib.parse import urlsplit

from chalicelib.http.family import Reply, Request
from chalicelib.placement import errors, microversion
from chalicelib.placement.microversion import Features, Version
from chalicelib.placement.uuids import normal_uuid as normal_uuid  # the handlers' spelling: web.normal_uuid

PREFIX = "/placement"
JSON = "application/json"

# Where the family keeps the request's negotiated microversion (PlacementFamily.begin sets it once).
VERSION_KEY = "placement.microversion"
VARY_KEY = "placement.vary"


class HttpError(Exception):
    """An answer of the HTTP edge itself, in Placement's error format (status, detail, code).

    `vary`: whether the answer carries `vary: openstack-api-version`. Upstream adds it in its microversion
    middleware to every response its handlers give, an error a handler raises included; an error that
    escapes the handlers (no such route, a not-found its handler does not catch, a policy refusal, a body
    without a content type) passes that middleware as an exception and gets the version header only. So by
    default a 404 and a 403 have none; `answering_not_found` and a route's microversion gate give one."""

    def __init__(self, status: int, detail: str = "", code: str = errors.UNDEFINED,
                 headers: dict[str, str] | None = None, extra: dict[str, Any] | None = None,
                 vary: bool | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code
        self.headers = headers or {}
        self.extra = extra or {}
        self.vary = status not in (403, 404) if vary is None else vary


def bad_request(detail: str, code: str = errors.UNDEFINED) -> HttpError:
    return HttpError(400, detail, code)


@contextmanager
def answering_not_found(*, except_for: type[errors.NotFound] | None = None) -> Iterator[None]:
    """A not-found the handler answers itself, as upstream's handler catches it and raises its own 404
    (which then carries `vary`, see HttpError); `except_for`: a kind it lets escape."""
    try:
        yield
    except errors.NotFound as exc:
        if except_for is not None and isinstance(exc, except_for):
            raise
        raise HttpError(404, exc.detail, exc.code, vary=True) from None


def _uuid_like(instance: object) -> bool:
    """Placement accepts any spelling uuid.UUID accepts in bodies (dashless included), as oslo's is_uuid_like."""
    return not isinstance(instance, str) or normal_uuid(instance) is not None


def keep_version(request: Request, version: Version) -> None:
    """Once per request, before anything else (the context is the request's own mapping)."""
    context = request.context
    assert isinstance(context, dict)
    context[VERSION_KEY] = version


def keep_vary(request: Request, vary: bool) -> None:
    """Whether the request's error answer carries `vary` (not when the error escaped upstream's handlers: HttpError)."""
    context = request.context
    assert isinstance(context, dict)
    context[VARY_KEY] = vary


def sends_vary(request: Request) -> bool:
    return bool(request.context.get(VARY_KEY, True))


def negotiated(request: Request) -> Version | None:
    """The request's microversion; None when negotiation failed (or has not happened)."""
    found = request.context.get(VERSION_KEY)
    return found if isinstance(found, tuple) else None


def version(request: Request) -> Version:
    found = negotiated(request)
    assert found is not None, "PlacementFamily.begin negotiates the microversion before any handler"
    return found


def introduced(request: Request, since: Version) -> Version:
    """The request's microversion, for a route that exists only from `since` (404 before, as Placement)."""
    found = version(request)
    if found < since:
        raise HttpError(404, vary=True)  # upstream's version_handler raises it inside the handler
    return found


def features(request: Request) -> Features:
    return microversion.features(version(request))


def require_json(request: Request) -> None:
    """415 unless the body is declared application/json (Placement's require_content)."""
    declared = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if declared != JSON:
        raise HttpError(415, f"The media type {declared or 'None'} is not supported, use {JSON}")


def check_accept(request: Request) -> None:
    """406 when an Accept header is sent that does not admit application/json."""
    accept = request.headers.get("accept")
    if not accept:
        return
    offers = [part.split(";", 1)[0].strip().lower() for part in accept.split(",")]
    if not any(o in (JSON, "application/*", "*/*") for o in offers):
        raise HttpError(406, f"Only {JSON} is provided")


_CHECKERS: dict[bool, Any] = {}
# Per schema and query flag: jsonschema's validator (decides and words refusals) and the compiled check
# (fastjsonschema, says only that a document is valid: decision 0054).
_VALIDATORS: dict[tuple[int, bool], tuple[Any, Callable[[Any], Any]]] = {}


def _checker(query: bool) -> Any:
    """Placement's format checkers: in bodies its own `uuid` (any spelling), in query strings jsonschema's
    default (dashed uuids only: `?uuid=` with 32 hex digits is 400 there)."""
    found = _CHECKERS.get(query)
    if found is None:
        import jsonschema

        found = jsonschema.FormatChecker()
        if not query:
            found.checks("uuid")(_uuid_like)
        _CHECKERS[query] = found
    return found


def _validators(schema: dict[str, Any], query: bool) -> tuple[Any, Callable[[Any], Any]]:
    """The schema, checked once (jsonschema.validate re-checks it on every call), as jsonschema's validator
    and compiled by fastjsonschema with the same `uuid` format, filling in no defaults."""
    found = _VALIDATORS.get((id(schema), query))
    if found is None:
        import fastjsonschema  # on the first Placement request that validates, not at `import app`
        import jsonschema

        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        checker = _checker(query)
        compiled = fastjsonschema.compile(
            schema, formats={"uuid": lambda value: checker.conforms(value, "uuid")}, use_default=False)
        found = _VALIDATORS[(id(schema), query)] = (cls(schema, format_checker=checker), compiled)
    return found


def _validate(data: Any, schema: dict[str, Any], prefix: str, *, query: bool = False) -> None:
    """As jsonschema.validate: the best-matching error, worded by jsonschema."""
    import fastjsonschema
    import jsonschema

    validator, compiled = _validators(schema, query)
    try:
        compiled(data)
        return
    except fastjsonschema.JsonSchemaException:
        pass  # jsonschema decides: it refuses in its own words (or, where the two differ, accepts)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        raise bad_request(f"{prefix}: {error}")


def validate(data: Any, schema: dict[str, Any]) -> None:
    _validate(data, schema, "JSON does not validate")


def json_body(request: Request, schema: dict[str, Any]) -> Any:
    require_json(request)
    try:
        data = json.loads(request.body.decode("utf-8") if request.body else "")
    except (ValueError, UnicodeDecodeError) as exc:
        raise bad_request(f"Malformed JSON: {exc}") from None
    _validate(data, schema, "JSON does not validate")
    return data


def query(request: Request, schema: dict[str, Any]) -> dict[str, str]:
    """The query string as Placement validates it: one value per name (the last one)."""
    values = {name: vals[-1] for name, vals in request.query.items() if vals}
    _validate(values, schema, "Invalid query string parameters", query=True)
    return values


def _base_path(request: Request) -> str:
    return urlsplit(request.url_root).path.rstrip("/") + PREFIX


def href(request: Request, path: str) -> str:
    """A link as Placement writes it behind a mount point: the path with the prefix."""
    return _base_path(request) + path


def absolute(request: Request, path: str) -> str:
    """An absolute URL (Location), including the stage and the /placement prefix."""
    return request.url_root.rstrip("/") + PREFIX + path


NOT_MODIFIED = -1.0  # `last_modified` of an answer Placement sends without the header (no inventories)


def http_date(epoch: float | None) -> str:
    return formatdate(epoch, usegmt=True)


CACHE_HEADERS_SINCE = (1, 15)


def sends_cache_headers(request: Request) -> bool:
    """From 1.15 answers carry `cache-control` and `last-modified` (what to read for the latter, too)."""
    return version(request) >= CACHE_HEADERS_SINCE


def cache_headers(request: Request, last_modified: float | None) -> dict[str, str]:
    """From 1.15, `cache-control: no-cache` and `last-modified` (None or 0: now; NOT_MODIFIED: none)."""
    if not sends_cache_headers(request):
        return {}
    found = {"cache-control": "no-cache"}
    if last_modified != NOT_MODIFIED:
        found["last-modified"] = http_date(last_modified or None)
    return found


def reply(request: Request, status: int, body: Any = None, *, last_modified: float | None = None,
          headers: dict[str, str] | None = None, cache: bool = True) -> Reply:
    """A success answer; from 1.15 an answer with a body carries no-cache and last-modified."""
    out = dict(headers or {})
    if body is not None and cache:
        out.update(cache_headers(request, last_modified))
    return Reply(status=status, body=body, headers=out)


def no_content(request: Request, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=204, body=None, headers=dict(headers or {}))
