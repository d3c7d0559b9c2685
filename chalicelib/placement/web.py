"""What every Placement handler does with HTTP: the microversion, JSON bodies validated with
`jsonschema` (details as Placement words them), media types, URLs and cache headers."""

from __future__ import annotations

import json
import uuid as uuidlib
from email.utils import formatdate
from typing import Any
from urllib.parse import urlsplit

import jsonschema

from chalicelib.http.family import Reply, Request
from chalicelib.placement import errors, microversion

PREFIX = "/placement"
JSON = "application/json"

FORMAT_CHECKER = jsonschema.FormatChecker()


@FORMAT_CHECKER.checks("uuid")
def _uuid_like(instance: object) -> bool:
    """Placement accepts any spelling uuid.UUID accepts (dashless included), as oslo's is_uuid_like."""
    return not isinstance(instance, str) or normal_uuid(instance) is not None


def normal_uuid(value: str) -> str | None:
    """The canonical dashed form, or None when `value` is not a UUID."""
    try:
        parsed = uuidlib.UUID(value)
    except (ValueError, AttributeError, TypeError):
        return None
    stripped = value.lower().replace("urn:", "").replace("uuid:", "").strip("{}").replace("-", "")
    return str(parsed) if parsed.hex == stripped else None


def version(request: Request) -> tuple[int, int]:
    return microversion.negotiate(request.headers)


def require_json(request: Request) -> None:
    """415 unless the body is declared application/json (Placement's require_content)."""
    declared = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if declared != JSON:
        raise errors.PlacementError(
            415, f"The media type {declared or 'None'} is not supported, use {JSON}")


def check_accept(request: Request) -> None:
    """406 when an Accept header is sent that does not admit application/json."""
    accept = request.headers.get("accept")
    if not accept:
        return
    offers = [part.split(";", 1)[0].strip().lower() for part in accept.split(",")]
    if not any(o in (JSON, "application/*", "*/*") for o in offers):
        raise errors.PlacementError(406, f"Only {JSON} is provided")


_VALIDATORS: dict[int, Any] = {}


def _validator(schema: dict[str, Any]) -> Any:
    """One checked validator per schema (jsonschema.validate re-checks the schema on every call)."""
    found = _VALIDATORS.get(id(schema))
    if found is None:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        found = _VALIDATORS[id(schema)] = cls(schema, format_checker=FORMAT_CHECKER)
    return found


def _validate(data: Any, schema: dict[str, Any], prefix: str) -> None:
    """As jsonschema.validate: the best-matching error, worded by jsonschema."""
    error = jsonschema.exceptions.best_match(_validator(schema).iter_errors(data))
    if error is not None:
        raise errors.bad_request(f"{prefix}: {error}")


def validate(data: Any, schema: dict[str, Any]) -> None:
    _validate(data, schema, "JSON does not validate")


def json_body(request: Request, schema: dict[str, Any]) -> Any:
    require_json(request)
    try:
        data = json.loads(request.body.decode("utf-8") if request.body else "")
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"Malformed JSON: {exc}") from None
    _validate(data, schema, "JSON does not validate")
    return data


def query(request: Request, schema: dict[str, Any]) -> dict[str, str]:
    """The query string as Placement validates it: one value per name (the last one)."""
    values = {name: vals[-1] for name, vals in request.query.items() if vals}
    _validate(values, schema, "Invalid query string parameters")
    return values


def _base_path(request: Request) -> str:
    return urlsplit(request.url_root).path.rstrip("/") + PREFIX


def href(request: Request, path: str) -> str:
    """A link as Placement writes it behind a mount point: the path with the prefix."""
    return _base_path(request) + path


def absolute(request: Request, path: str) -> str:
    """An absolute URL (Location), including the stage and the /placement prefix."""
    return request.url_root.rstrip("/") + PREFIX + path


def http_date(epoch: float | None) -> str:
    return formatdate(epoch, usegmt=True)


def reply(request: Request, status: int, body: Any = None, *, last_modified: float | None = None,
          headers: dict[str, str] | None = None, cache: bool = True) -> Reply:
    """A success answer; from 1.15 an answer with a body carries no-cache and last-modified."""
    out = dict(headers or {})
    if body is not None and cache and version(request) >= (1, 15):
        out["cache-control"] = "no-cache"
        out["last-modified"] = http_date(last_modified or None)
    return Reply(status=status, body=body, headers=out)


def no_content(request: Request, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=204, body=None, headers=dict(headers or {}))
