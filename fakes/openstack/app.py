"""The fake's WSGI application: Keystone v3, Nova 2.61 and Limes shapes as research/commitments.md §2 gives them.

URLs under one base: identity `<base>/v3`, compute `<base>/compute/v2.1`, Limes `<base>/limes`.
Every call is counted per endpoint (`stats`), so tests and the bench can see what a client did.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from werkzeug.exceptions import HTTPException, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from fakes.openstack import keystone
from fakes.openstack.scenario import Fault, Scenario

NOVA_MAX_MICROVERSION = (2, 96)
UNAUTHORIZED = {"error": {"code": 401, "message": "The request you have made requires authentication.",
                          "title": "Unauthorized"}}

URLS = Map([
    Rule("/", endpoint="versions"),
    Rule("/_fake/stats", endpoint="fake_stats", methods=["GET"]),
    Rule("/v3", endpoint="identity_version", strict_slashes=False),
    Rule("/v3/auth/tokens", endpoint="auth_tokens", methods=["POST"]),
    Rule("/v3/auth/tokens", endpoint="validate_token", methods=["GET"]),
    Rule("/v3/auth/tokens", endpoint="revoke_token", methods=["DELETE"]),
    Rule("/_fake/tokens", endpoint="fake_tokens", methods=["POST"]),
    Rule("/v3/projects", endpoint="projects", methods=["GET"]),
    Rule("/compute/v2.1/flavors/detail", endpoint="flavors", methods=["GET"]),
    Rule("/compute/v2.1/servers/detail", endpoint="servers", methods=["GET"]),
    Rule("/limes/v1/domains/<domain_id>/projects/<project_id>/commitments", endpoint="commitments",
         methods=["GET"]),
])


@dataclass
class _Token:
    project: dict[str, Any]
    expires_at: datetime
    uses_left: int | None
    identity: keystone.Identity | None = None  # whom it speaks for (fakes/openstack/keystone.py)
    issued_at: datetime | None = None


class FakeOpenStackApp:
    """One scenario, its tokens and its call counts; thread-safe (the server runs a thread per connection)."""

    def __init__(self, scenario: Scenario, base_url: str = "") -> None:
        self.scenario = scenario
        self.base_url = base_url.rstrip("/")
        self.stats: Counter[str] = Counter()
        self.tokens_issued: list[str] = []  # so tests can look for them where they must never be
        self.tokens_presented: list[str] = []  # every X-Auth-Token a call carried (valid or not)
        self.in_flight = 0
        self.max_in_flight = 0  # the most calls served at once: what a client's concurrency bound looks like
        self._tokens: dict[str, _Token] = {}
        self._lock = threading.Lock()
        self._holds: dict[int, threading.Barrier] = {}  # per fault (by position) with hold_until
        self._index()

    def _index(self) -> None:
        s = self.scenario
        self._project_list = sorted(s.projects, key=lambda p: p["id"])
        self._projects_by_id = {p["id"]: p for p in s.projects}
        self._flavors_by_name = {f["name"]: f for f in s.flavors}
        self._servers_by_project: dict[str, list[dict[str, Any]]] = {}
        for server in sorted(s.servers, key=lambda v: v["id"]):
            self._servers_by_project.setdefault(server["tenant_id"], []).append(server)

    def reload(self, scenario: Scenario) -> None:
        """Swap the world (tokens stay valid), as when a test changes upstream between passes."""
        with self._lock:
            self.scenario = scenario
            self._index()

    def expire_tokens(self) -> None:
        """Every token issued so far answers 401 from now on (what a token expiry mid-fetch looks like)."""
        with self._lock:
            self._tokens.clear()

    def total_calls(self) -> int:
        return sum(self.stats.values())

    # --- WSGI ---------------------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return self._serve(environ, start_response)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _serve(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request = Request(environ)
        try:
            endpoint, args = URLS.bind_to_environ(environ).match()
        except HTTPException as error:
            return error(environ, start_response)
        handler = getattr(self, f"_{endpoint}")
        fault_name = _fault_endpoint(endpoint)
        project = args.get("project_id") or request.args.get("tenant_id")
        faults: list[Fault] = []
        if fault_name is not None:
            with self._lock:
                self.stats[fault_name] += 1
                number = self.stats[fault_name]
            faults = [f for f in self.scenario.faults if f.applies(fault_name, number, project)]
        if any(f.ignore_microversion for f in faults):
            environ["fake.ignore_microversion"] = True
        if any(f.ignore_tenant_filter for f in faults):
            environ["fake.ignore_tenant_filter"] = True
        for fault in faults:
            if fault.hold_until is not None:
                self._hold(fault)
        delay_ms = self.scenario.latency_ms + sum(f.latency_ms for f in faults)
        if delay_ms:
            time.sleep(delay_ms / 1000)  # the fake's own behaviour: a slow upstream
        status = next((f.status for f in faults if f.status is not None), None)
        if status is not None:
            response = _json({"error": {"code": status, "message": "injected fault"}}, status)
        else:
            response = handler(request, **args)
        truncate = next((f.truncate for f in faults if f.truncate is not None), None)
        if truncate is not None:
            response = _truncated(response, truncate)
        return response(environ, start_response)

    def _hold(self, fault: Fault) -> None:
        """Wait until `hold_until` calls of this fault have arrived; then (once) expire every token."""
        with self._lock:
            barrier = self._holds.get(id(fault))
            if barrier is None:
                barrier = threading.Barrier(fault.hold_until or 1, action=self.expire_tokens if fault.expire_tokens
                                            else None, timeout=10)
                self._holds[id(fault)] = barrier
        # Not all arrived in time: answer anyway (the test that set it up sees the difference).
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()

    def _next_url(self, path: str, request: Request, marker: str) -> str:
        base = (self.scenario.next_link_base or self.base_url).rstrip("/")
        return f"{base}{path}?{urlencode({**request.args, 'marker': marker})}"

    def _fake_stats(self, request: Request) -> Response:
        """Calls per endpoint and the most served at once, for a bench running the fake in another process."""
        with self._lock:
            return _json({"calls": dict(self.stats), "maxInFlight": self.max_in_flight,
                          "tokensIssued": len(self.tokens_issued)})

    # --- Keystone -----------------------------------------------------------------------------------

    def _versions(self, request: Request) -> Response:
        return _json({"versions": {"values": [self._v3()]}}, 300)

    def _identity_version(self, request: Request) -> Response:
        return _json({"version": self._v3()})

    def _v3(self) -> dict[str, Any]:
        return {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
                "links": [{"rel": "self", "href": f"{self.base_url}/v3/"}],
                "media-types": [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}]}

    def _auth_tokens(self, request: Request) -> Response:
        try:
            identity = request.get_json(force=True)["auth"]["identity"]
            found = self._authenticate(identity, request.get_json(force=True)["auth"].get("scope"))
        except (KeyError, TypeError, ValueError):
            found = None
        if found is None:
            return _json(UNAUTHORIZED, 401)
        project, record = found
        who = keystone.password_identity(record, project, identity["methods"])
        token = self.mint_token(who, uses=self.scenario.token_max_uses)
        issued = self._tokens[token]
        body = {"token": keystone.token_body(who, issued.issued_at or datetime.now(UTC), issued.expires_at,
                                             self._catalog())}
        response = _json(body, 201)
        response.headers["X-Subject-Token"] = token
        return response

    def _authenticate(self, identity: dict[str, Any], scope: dict[str, Any] | None
                      ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The project the credentials are scoped to and the scenario's record of them."""
        methods = identity["methods"]
        if methods == ["password"]:
            user = identity["password"]["user"]
            scoped = (scope or {}).get("project") or {}
            for known in self.scenario.users:
                if (secrets.compare_digest(str(user.get("password", "")), str(known["password"]))
                        and user.get("name") == known["name"]
                        and (user.get("domain") or {}).get("name") == known.get("domain", "Default")
                        and scoped.get("name") == known["project"]
                        and (scoped.get("domain") or {}).get("name") == known.get("project_domain", "Default")):
                    return self._admin_project(known["project"]), known
        elif methods == ["application_credential"]:
            credential = identity["application_credential"]
            for known in self.scenario.application_credentials:
                if credential.get("id") == known["id"] and secrets.compare_digest(
                        str(credential.get("secret", "")), str(known["secret"])):
                    return self._admin_project(known.get("project", "admin")), known
        return None

    def _admin_project(self, name: str) -> dict[str, Any]:
        return {"id": f"id-{name}", "name": name, "domain_id": "default"}

    def _catalog(self) -> list[dict[str, Any]]:
        def service(kind: str, name: str, path: str) -> dict[str, Any]:
            url = f"{self.base_url}{path}"
            return {"type": kind, "name": name, "id": name, "endpoints": [
                {"interface": "internal", "region": "r1", "region_id": "r1", "url": "http://internal.invalid" + path},
                {"interface": "public", "region": "r1", "region_id": "r1", "url": url},
            ]}

        extra = [{"type": str(entry["type"]), "name": str(entry.get("name", entry["type"])),
                  "id": str(entry.get("name", entry["type"])), "endpoints": [
                      {"interface": interface, "region": "r1", "region_id": "r1", "url": str(entry["url"])}
                      for interface in ("internal", "public")]}
                 for entry in self.scenario.services]
        return [service("identity", "keystone", "/v3"), service("compute", "nova", "/compute/v2.1"),
                service("resources", "limes", "/limes"), *extra]

    # --- Keystone tokens (fakes/openstack/keystone.py) -----------------------------------------------

    def mint_token(self, identity: keystone.Identity, ttl_seconds: int | None = None, uses: int | None = None) -> str:
        """A token for the identity, as if Keystone had issued it (tests: roles and scope of their choosing)."""
        token = secrets.token_hex(16)
        issued = datetime.now(UTC)
        expires = issued + timedelta(seconds=self.scenario.token_ttl_seconds if ttl_seconds is None else ttl_seconds)
        project = {"id": identity.project_id or "", "name": identity.project_name or identity.project_id or "",
                   "domain_id": identity.project_domain_id}
        with self._lock:
            self._tokens[token] = _Token(project, expires, uses, identity, issued)
            self.tokens_issued.append(token)
        return token

    def mint_token_for_headers(self, headers: dict[str, str]) -> str:
        """A token for a gabbit's header set (x-roles, x-project-id, x-user-id, openstack-system-scope)."""
        return self.mint_token(keystone.identity_for_headers(headers))

    def revoke_token(self, token: str) -> bool:
        with self._lock:
            return self._tokens.pop(token, None) is not None

    def live_token(self, token: str) -> _Token | None:
        """The token if it is known and unexpired (a look-up: it uses none of its answers)."""
        with self._lock:
            found = self._tokens.get(token)
        return found if found is not None and found.expires_at > datetime.now(UTC) else None

    def identity_of(self, token: _Token) -> keystone.Identity:
        if token.identity is not None:
            return token.identity
        return keystone.Identity(user_id="u-syncer", roles=("admin",), project_id=token.project["id"])

    def _validate_token(self, request: Request) -> Response:
        return keystone.validate(self, request)

    def _revoke_token(self, request: Request) -> Response:
        return keystone.revoke(self, request)

    def _fake_tokens(self, request: Request) -> Response:
        return keystone.mint(self, request)

    def _check_token(self, request: Request) -> _Token | None:
        presented = request.headers.get("X-Auth-Token", "")
        with self._lock:
            if presented:
                self.tokens_presented.append(presented)
            token = self._tokens.get(presented)
            if token is None or token.expires_at <= datetime.now(UTC):
                return None
            if token.uses_left is not None:
                if token.uses_left <= 0:
                    return None
                token.uses_left -= 1
            return token

    def _projects(self, request: Request) -> Response:
        if self._check_token(request) is None:
            return _json(UNAUTHORIZED, 401)
        page, following = _page(self._project_list, request, self.scenario.page_size.get("projects", 0),
                                self.scenario.page_overlap.get("projects", 0))
        next_url = None
        if following is not None:
            next_url = self._next_url("/v3/projects", request, following)
        projects = [{"id": p["id"], "name": p.get("name", p["id"]), "domain_id": p.get("domain_id", "default"),
                     "parent_id": p.get("parent_id", p.get("domain_id", "default")), "enabled": True,
                     "is_domain": False, "description": "", "tags": [], "options": {},
                     "links": {"self": f"{self.base_url}/v3/projects/{p['id']}"}} for p in page]
        return _json({"projects": projects,
                      "links": {"self": f"{self.base_url}/v3/projects", "next": next_url, "previous": None}})

    # --- Nova ---------------------------------------------------------------------------------------

    def _flavors(self, request: Request) -> Response:
        if self._check_token(request) is None:
            return _json(UNAUTHORIZED, 401)
        version = _microversion(request)
        if version is None:
            return _json({"computeFault": {"code": 406, "message": "Version not supported"}}, 406)
        wanted = request.args.get("is_public", "true").lower()
        flavors = sorted(self.scenario.flavors, key=lambda f: f["id"])
        if wanted != "none":
            flavors = [f for f in flavors if bool(f.get("is_public", True)) == (wanted in ("true", "1", "yes"))]
        page, following = _page(flavors, request, self.scenario.page_size.get("flavors", 0))
        body: dict[str, Any] = {"flavors": [_flavor(f, version) for f in page]}
        if following is not None:
            body["flavors_links"] = [{"rel": "next", "href": self._next_url("/compute/v2.1/flavors/detail", request,
                                                                            following)}]
        return _json(body)

    def _servers(self, request: Request) -> Response:
        token = self._check_token(request)
        if token is None:
            return _json(UNAUTHORIZED, 401)
        version = _microversion(request)
        if version is None:
            return _json({"computeFault": {"code": 406, "message": "Version not supported"}}, 406)
        # Nova honours tenant_id only together with all_tenants; without it, the token's own project.
        if request.args.get("all_tenants", "").lower() in ("true", "1", "yes"):
            tenant = request.args.get("tenant_id")
            if tenant is None or request.environ.get("fake.ignore_tenant_filter"):
                servers = [v for group in self._servers_by_project.values() for v in group]
            else:
                servers = self._servers_by_project.get(tenant, [])
        else:
            servers = self._servers_by_project.get(token.project["id"], [])
        page, following = _page(servers, request, self.scenario.page_size.get("servers", 0),
                                self.scenario.page_overlap.get("servers", 0))
        body: dict[str, Any] = {"servers": [self._server(v, version) for v in page]}
        if following is not None:
            body["servers_links"] = [{"rel": "next", "href": self._next_url("/compute/v2.1/servers/detail", request,
                                                                            following)}]
        return _json(body)

    def _server(self, server: dict[str, Any], version: tuple[int, int]) -> dict[str, Any]:
        flavor = self._flavors_by_name.get(server["flavor"], {"name": server["flavor"], "id": "gone",
                                                               "vcpus": 1, "ram": 512, "disk": 1})
        if version >= (2, 47):
            embedded: dict[str, Any] = {"original_name": flavor["name"], "vcpus": flavor["vcpus"],
                                        "ram": flavor["ram"], "disk": flavor["disk"],
                                        "ephemeral": flavor.get("ephemeral", 0), "swap": flavor.get("swap", 0),
                                        "extra_specs": dict(flavor.get("extra_specs") or {})}
        else:
            embedded = {"id": flavor["id"], "links": []}
        return {"id": server["id"], "name": server.get("name", server["id"]),
                "status": server.get("status", "ACTIVE"), "tenant_id": server["tenant_id"],
                "user_id": "u-1", "OS-EXT-AZ:availability_zone": server.get("availability_zone", ""),
                "flavor": embedded, "created": "2026-01-01T00:00:00Z", "hostId": "", "metadata": {}}

    # --- Limes --------------------------------------------------------------------------------------

    def _commitments(self, request: Request, domain_id: str, project_id: str) -> Response:
        if self._check_token(request) is None:
            return Response("unauthorized\n", 401, content_type="text/plain")
        project = self._projects_by_id.get(project_id)
        if project is None or project_id in self.scenario.limes_unknown_projects:
            return Response(f"no such project (if it was just created, try to POST /domains/{domain_id}/projects/"
                            "discover)\n", 404, content_type="text/plain")
        if project.get("domain_id", "default") != domain_id:
            return Response("no such domain (if it was just created, try to POST /domains/discover)\n", 404,
                            content_type="text/plain")
        commitments = sorted(self.scenario.commitments.get(project_id, []), key=lambda c: c["id"])
        for key, field in (("service", "service_type"), ("resource", "resource_name"), ("area", "area")):
            if key in request.args:
                commitments = [c for c in commitments if c.get(field) == request.args[key]]
        return _json({"commitments": commitments})


def _fault_endpoint(endpoint: str) -> str | None:
    return {"versions": "keystone.discovery", "identity_version": "keystone.discovery",
            "auth_tokens": "keystone.tokens", "validate_token": "keystone.validate",
            "projects": "keystone.projects", "flavors": "nova.flavors",
            "servers": "nova.servers", "commitments": "limes"}.get(endpoint)


def _microversion(request: Request) -> tuple[int, int] | None:
    """The requested compute microversion; absent = 2.1; above the maximum = None (406)."""
    if request.environ.get("fake.ignore_microversion"):
        return (2, 1)
    raw = request.headers.get("OpenStack-API-Version", "")
    value = raw.split()[1] if raw.startswith("compute ") and len(raw.split()) == 2 else ""
    value = value or request.headers.get("X-OpenStack-Nova-API-Version", "2.1")
    if value == "latest":
        return NOVA_MAX_MICROVERSION
    try:
        major, minor = (int(part) for part in value.split("."))
    except ValueError:
        return None
    return (major, minor) if (major, minor) <= NOVA_MAX_MICROVERSION else None


def _flavor(flavor: dict[str, Any], version: tuple[int, int]) -> dict[str, Any]:
    body = {"id": flavor["id"], "name": flavor["name"], "ram": flavor["ram"], "vcpus": flavor["vcpus"],
            "disk": flavor["disk"], "OS-FLV-EXT-DATA:ephemeral": flavor.get("ephemeral", 0),
            "OS-FLV-DISABLED:disabled": False, "swap": flavor.get("swap", ""),
            "os-flavor-access:is_public": bool(flavor.get("is_public", True)), "rxtx_factor": 1.0,
            "description": flavor.get("description"), "links": []}
    if version >= (2, 61):
        body["extra_specs"] = dict(flavor.get("extra_specs") or {})
    return body


def _page(items: list[dict[str, Any]], request: Request, size: int,
          overlap: int = 0) -> tuple[list[dict[str, Any]], str | None]:
    """One page after `marker` (an id); the marker of the next page, or None on the last. With `overlap`,
    the next page starts that many entries early (a list that changed between two page reads)."""
    limit = int(request.args.get("limit", 0)) or size
    marker = request.args.get("marker")
    start = 0
    if marker is not None:
        ids = [item["id"] for item in items]
        if marker not in ids:
            raise NotFound()
        start = ids.index(marker) + 1
    if not limit:
        return items[start:], None
    page = items[start:start + limit]
    back = min(overlap, len(page) - 1)
    following = page[-1 - back]["id"] if start + limit < len(items) else None
    return page, following


def _json(body: Any, status: int = 200) -> Response:
    return Response(json.dumps(body), status, content_type="application/json")


def _truncated(response: Response, mode: str) -> Response:
    data = response.get_data()
    half = data[: len(data) // 2]
    cut = Response(half, response.status_code, content_type=response.content_type)
    for name, value in response.headers.items():
        if name.lower() not in ("content-length", "content-type"):
            cut.headers[name] = value
    if mode == "connection":
        # Promise the whole body, send half, then close: the client sees the connection end early.
        cut.headers["Content-Length"] = str(len(data))
        cut.headers["Connection"] = "close"
    return cut
