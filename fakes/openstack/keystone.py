"""The fake's Keystone tokens: who a token speaks for, minting one for tests, and validating one.

A token records an `Identity`: user, roles, and one scope (a project, a domain, the system, or none).
Password and application-credential authentication (`POST /v3/auth/tokens`) issue one for the
scenario's user, with the user's `roles` (default `[admin]`) and `id` (default `u-syncer`):

    users:
      - {name: placement, password: pw, project: service, roles: [service], id: u-placement}

Validation is Keystone v3's: `GET /v3/auth/tokens` with `X-Auth-Token` (the caller) and
`X-Subject-Token` (the token asked about) answers 200 with the token's body (no catalog with
`?nocatalog`) and `X-Subject-Token`; 404 for an unknown, expired or revoked subject token; 401 for an
unknown caller; 403 unless the caller holds the `service` role (what `identity:validate_token` asks of
a service). `DELETE /v3/auth/tokens` revokes the subject token (the service or the token itself).

Test-only minting, `POST /_fake/tokens`: a token for an identity given as JSON
(`{"roles": [...], "project_id", "user_id", "domain_id", "system_scope": "all", "ttl_seconds"}`) or, with
no body, as the headers Placement's gabbits send (`x-roles`, `x-project-id`, `x-user-id`,
`openstack-system-scope`, and `x-auth-token` read as upstream's test middleware reads it); 201 with
`{"token": ..., "expires_at": ...}`. In-process, `FakeOpenStackApp.mint_token(identity)` does the same.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from werkzeug.wrappers import Request, Response

if TYPE_CHECKING:
    from fakes.openstack.app import FakeOpenStackApp

SERVICE_ROLE = "service"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"

FORBIDDEN = {"error": {"code": 403, "title": "Forbidden",
                       "message": "You are not authorized to perform the requested action: identity:validate_token."}}
UNAUTHORIZED = {"error": {"code": 401, "message": "The request you have made requires authentication.",
                          "title": "Unauthorized"}}


@dataclass(frozen=True)
class Identity:
    """Whom a token speaks for. Exactly one of project, domain and system (or none: unscoped)."""

    user_id: str
    user_name: str | None = None
    user_domain_id: str = "default"
    roles: tuple[str, ...] = ()
    project_id: str | None = None
    project_name: str | None = None
    project_domain_id: str = "default"
    domain_id: str | None = None  # a domain-scoped token
    system: bool = False  # a system-scoped token (`system: {all: true}`)
    methods: tuple[str, ...] = ("password",)
    audit_id: str = field(default_factory=lambda: secrets.token_urlsafe(16)[:22])

    def __post_init__(self) -> None:
        if sum((self.project_id is not None, self.domain_id is not None, self.system)) > 1:
            raise ValueError("a token has one scope: a project, a domain or the system")


def password_identity(record: Mapping[str, Any], project: Mapping[str, Any], methods: list[str]) -> Identity:
    """The identity of a scenario user (or application credential, whose `id` is its own) that
    authenticated: its `roles` (default admin) and user `id` (`user_id` for a credential)."""
    credential = "secret" in record
    return Identity(
        user_id=str(record.get("user_id" if credential else "id", "u-syncer")),
        user_name="svc" if credential else str(record.get("name", "svc")),
        roles=tuple(str(role) for role in record.get("roles", ["admin"])),
        project_id=str(project["id"]), project_name=str(project.get("name", project["id"])),
        project_domain_id=str(project.get("domain_id", "default")), methods=tuple(methods))


def identity_for_headers(headers: Mapping[str, str]) -> Identity:
    """The identity a gabbit's header set stands for, as upstream's NoAuthMiddleware and oslo.context
    read it: `x-auth-token` is `user[:project]`; `x-user-id` and `x-project-id` win when present; roles
    from `x-roles` (comma-separated), else `admin` for the user `admin`, else none;
    `openstack-system-scope: all` makes it system-scoped (no project)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    token_user, _, token_project = lowered.get("x-auth-token", "user").partition(":")
    user = lowered.get("x-user-id") or token_user or "user"
    if "x-roles" in lowered:
        roles = tuple(role.strip() for role in lowered["x-roles"].split(",") if role.strip())
    else:
        roles = ("admin",) if user == "admin" else ()
    system = lowered.get("openstack-system-scope", "").strip().lower() == "all"
    project = None if system else (lowered.get("x-project-id") or token_project or user)
    return Identity(user_id=user, user_name=user, roles=roles, project_id=project, system=system,
                    methods=("token",))


def identity_for_json(body: Mapping[str, Any]) -> Identity:
    roles = body.get("roles", [])
    if isinstance(roles, str):
        roles = [role for role in roles.split(",") if role]
    system = str(body.get("system_scope") or "").lower() == "all"
    return Identity(user_id=str(body.get("user_id", "user")), user_name=body.get("user_name"),
                    user_domain_id=str(body.get("user_domain_id", "default")),
                    roles=tuple(str(role) for role in roles),
                    project_id=body.get("project_id"), project_name=body.get("project_name"),
                    project_domain_id=str(body.get("project_domain_id", "default")),
                    domain_id=body.get("domain_id"), system=system, methods=("token",))


def token_body(identity: Identity, issued_at: datetime, expires_at: datetime,
               catalog: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The `token` object Keystone v3 answers with (issue and validation alike)."""
    token: dict[str, Any] = {
        "methods": list(identity.methods),
        "user": {"id": identity.user_id, "name": identity.user_name or identity.user_id,
                 "domain": {"id": identity.user_domain_id, "name": identity.user_domain_id.capitalize()},
                 "password_expires_at": None},
        "audit_ids": [identity.audit_id],
        "expires_at": expires_at.strftime(TIME_FORMAT),
        "issued_at": issued_at.strftime(TIME_FORMAT),
        "roles": [{"id": f"r-{role}", "name": role} for role in identity.roles],
    }
    if identity.project_id is not None:
        token["project"] = {"id": identity.project_id, "name": identity.project_name or identity.project_id,
                            "domain": {"id": identity.project_domain_id,
                                       "name": identity.project_domain_id.capitalize()}}
        token["is_domain"] = False
    elif identity.domain_id is not None:
        token["domain"] = {"id": identity.domain_id, "name": identity.domain_id}
    elif identity.system:
        token["system"] = {"all": True}
    if catalog is not None and (identity.project_id is not None or identity.system or identity.domain_id):
        token["catalog"] = catalog
    return token


# --- the routes (FakeOpenStackApp delegates to these) ------------------------------------------------


def _json(body: Any, status: int) -> Response:
    return Response(json.dumps(body), status, content_type="application/json")


def _not_found(subject: str) -> Response:
    # Keystone names the token in its message: a validator must never pass this body on.
    return _json({"error": {"code": 404, "title": "Not Found", "message": f"Could not find token: {subject}"}}, 404)


def validate(app: FakeOpenStackApp, request: Request) -> Response:
    caller = app._check_token(request)
    if caller is None:
        return _json(UNAUTHORIZED, 401)
    if SERVICE_ROLE not in app.identity_of(caller).roles:
        return _json(FORBIDDEN, 403)
    subject_id = request.headers.get("X-Subject-Token", "")
    subject = app.live_token(subject_id)
    if subject is None:
        return _not_found(subject_id)
    catalog = None if "nocatalog" in request.args else app._catalog()
    body = token_body(app.identity_of(subject), subject.issued_at or datetime.now(UTC), subject.expires_at, catalog)
    response = _json({"token": body}, 200)
    response.headers["X-Subject-Token"] = subject_id
    return response


def revoke(app: FakeOpenStackApp, request: Request) -> Response:
    caller = app._check_token(request)
    if caller is None:
        return _json(UNAUTHORIZED, 401)
    subject_id = request.headers.get("X-Subject-Token", "")
    if SERVICE_ROLE not in app.identity_of(caller).roles and subject_id != request.headers.get("X-Auth-Token"):
        return _json(FORBIDDEN, 403)
    if not app.revoke_token(subject_id):
        return _not_found(subject_id)
    return Response(status=204)


def mint(app: FakeOpenStackApp, request: Request) -> Response:
    raw = request.get_data()
    try:
        body = json.loads(raw) if raw.strip() else None
        identity = identity_for_headers(dict(request.headers.items())) if body is None else identity_for_json(body)
        ttl = int(body.get("ttl_seconds", app.scenario.token_ttl_seconds)) if body else None
    except (ValueError, TypeError, AttributeError) as error:
        return _json({"error": {"code": 400, "title": "Bad Request", "message": str(error)}}, 400)
    token = app.mint_token(identity, ttl_seconds=ttl)
    expires = app.live_token(token)
    assert expires is not None
    response = _json({"token": token, "expires_at": expires.expires_at.strftime(TIME_FORMAT)}, 201)
    response.headers["X-Subject-Token"] = token
    return response
