"""Tenant principals and Sites (operator routes), and the compute API's envelope, registry and grants."""

import json

import pytest

from chalicelib.auth.keys import hash_key
from chalicelib.auth.service import Authenticator
from chalicelib.tenants.rules import principal_resolver

SITES_GRANT = "compute:sites:admin@compute-sites"
FLEET_GRANT = "compute:fleet:admin@compute-fleet"


@pytest.fixture
def http(services, keys):
    from chalice.test import Client

    from app import app

    class Http:
        def __init__(self, client):
            self._client = client
            self.keys = keys

        def call(self, method, path, body=None, token=None, raw=None):
            headers = {"content-type": "application/json"}
            if token is not None:
                headers["authorization"] = f"Bearer {token}"
            payload = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
            response = self._client.http.request(method, path, headers=headers, body=payload)
            parsed = json.loads(response.body) if response.body else None
            return response.status_code, parsed, response.headers

        def issue(self, tenant, principal, grants):
            status, body, _ = self.call("POST", f"/api/tenants/{tenant}/principals",
                                        {"principal": principal, "grants": grants}, self.keys["service"])
            assert status == 201, body
            return body["token"]

    with Client(app) as client:
        yield Http(client)


def _error(body):
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    return body["error"]


def test_issue_answers_the_token_once_and_stores_only_its_hash(http, services):
    status, body, _ = http.call("POST", "/api/tenants/acme/principals",
                                {"principal": "alice", "grants": [SITES_GRANT, FLEET_GRANT]}, http.keys["service"])
    assert status == 201
    assert {k: body[k] for k in ("tenant", "principal", "grants")} == {
        "tenant": "acme", "principal": "alice", "grants": sorted([SITES_GRANT, FLEET_GRANT])}
    token = body["token"]
    dump = repr(services.client.scan(TableName=services.table)["Items"])
    assert token not in dump and hash_key(token) in dump
    status, listed, _ = http.call("GET", "/api/tenants/acme/principals", token=http.keys["service"])
    assert status == 200 and token not in json.dumps(listed)
    assert listed["items"] == [{"tenant": "acme", "principal": "alice", "grants": sorted([SITES_GRANT, FLEET_GRANT])}]


def test_reissue_gives_a_new_token_keeps_the_old_one_and_replaces_grants(http, services):
    first = http.issue("acme", "alice", [SITES_GRANT])
    second = http.issue("acme", "alice", [FLEET_GRANT])
    assert first != second
    fresh = Authenticator(services.keys, 30, resolve=principal_resolver(services.tenants.principal))
    for token in (first, second):
        principal = fresh.authenticate(token)
        assert (principal.kind, principal.tenant, principal.name) == ("tenant", "acme", "alice")
        assert set(principal.grants) == {FLEET_GRANT}


def test_revoke_stops_every_token_and_a_new_principal_of_that_name_does_not_revive_them(http, services):
    old = http.issue("acme", "alice", [SITES_GRANT])
    status, body, _ = http.call("DELETE", "/api/tenants/acme/principals/alice", token=http.keys["service"])
    assert (status, body) == (204, None)
    fresh = Authenticator(services.keys, 30, resolve=principal_resolver(services.tenants.principal))
    with pytest.raises(Exception, match="unauthorized"):
        fresh.authenticate(old)
    new = http.issue("acme", "alice", [SITES_GRANT])
    fresh = Authenticator(services.keys, 30, resolve=principal_resolver(services.tenants.principal))
    assert fresh.authenticate(new).tenant == "acme"
    with pytest.raises(Exception, match="unauthorized"):
        fresh.authenticate(old)
    status, body, _ = http.call("DELETE", "/api/tenants/acme/principals/bob", token=http.keys["service"])
    assert status == 404 and _error(body)["code"] == "NOT_FOUND"


def test_a_revocation_holds_at_once_in_the_container_that_made_it(http):
    token = http.issue("acme", "alice", [SITES_GRANT])
    assert http.call("POST", "/api/compute/sites/list", {}, token)[0] == 200  # now in the key cache
    assert http.call("DELETE", "/api/tenants/acme/principals/alice", token=http.keys["service"])[0] == 204
    status, body, _ = http.call("POST", "/api/compute/sites/list", {}, token)
    assert status == 401 and _error(body)["code"] == "UNAUTHENTICATED"


def test_new_grants_hold_at_once_for_the_old_tokens_in_the_container_that_issued_them(http):
    token = http.issue("acme", "alice", [SITES_GRANT])
    other = http.issue("acme", "bob", [SITES_GRANT])
    for each in (token, other):
        assert http.call("POST", "/api/compute/sites/list", {}, each)[0] == 200  # now in the key cache
    http.issue("acme", "alice", [FLEET_GRANT])
    status, body, _ = http.call("POST", "/api/compute/sites/list", {}, token)
    assert status == 403 and _error(body)["code"] == "PERMISSION_DENIED"
    assert http.call("POST", "/api/compute/sites/list", {}, other)[0] == 200  # another principal's stay


def test_sites_register_and_list(http):
    token = http.issue("acme", "alice", [SITES_GRANT])
    status, body, _ = http.call("POST", "/api/tenants/acme/sites", {"name": "k8s", "kind": "kubernetes"},
                                http.keys["service"])
    assert (status, body) == (201, {"tenant": "acme", "name": "k8s", "kind": "kubernetes"})
    status, body, _ = http.call("POST", "/api/tenants/acme/sites", {"name": "k8s", "kind": "slurm"},
                                http.keys["service"])
    assert status == 409 and _error(body)["code"] == "ALREADY_EXISTS"
    status, body, _ = http.call("POST", "/api/compute/sites/list", {}, token)
    assert (status, body) == (200, {"items": [{"id": "k8s", "name": "k8s", "kind": "kubernetes"}]})
    # Another tenant sees none of them.
    other = http.issue("globex", "bob", [SITES_GRANT])
    assert http.call("POST", "/api/compute/sites/list", {}, other)[1] == {"items": []}


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/tenants/acme/sites", {"name": "k8s", "kind": "mainframe"}, "/kind"),
        ("/api/tenants/acme/sites", {"name": "K8S", "kind": "slurm"}, "/name"),
        ("/api/tenants/acme/sites", {"name": "k8s", "kind": "slurm", "colour": "red"}, "/colour"),
        ("/api/tenants/Acme/sites", {"name": "k8s", "kind": "slurm"}, "/tenant"),
        ("/api/tenants/acme/principals", {"principal": "alice", "grants": "x"}, "/grants"),
        ("/api/tenants/acme/principals", {"principal": "alice", "grants": ["no-scope"]}, "/grants/0"),
        ("/api/tenants/acme/principals", {"principal": "-alice", "grants": []}, "/principal"),
        ("/api/tenants/acme/principals", {"grants": []}, "/principal"),
    ],
)
def test_invalid_operator_input_points_at_the_field(http, path, body, field):
    status, answer, _ = http.call("POST", path, body, http.keys["service"])
    assert status == 400
    error = _error(answer)
    assert (error["code"], error["details"]["field"]) == ("INVALID_ARGUMENT", field)


def test_errors_never_echo_input(http):
    marker = "echo-marker-4242"
    status, answer, _ = http.call("POST", "/api/tenants/acme/sites", {"name": marker, "kind": marker.upper()},
                                  http.keys["service"])
    assert status == 400 and marker.upper() not in json.dumps(answer)


def test_a_bad_principal_path_points_at_it(http):
    status, answer, _ = http.call("DELETE", "/api/tenants/acme/principals/Alice", token=http.keys["service"])
    assert status == 400 and _error(answer)["details"]["field"] == "/principal"


def test_each_family_accepts_only_its_own_principals(http, services):
    token = http.issue("acme", "alice", [SITES_GRANT])
    placement = "rp_placement_key_for_this_test_0000"
    services.keys.add(hash_key(placement), "placement")
    for key in (http.keys["k8s"], http.keys["service"], placement):
        status, body, headers = http.call("POST", "/api/compute/sites/list", {}, key)
        assert status == 401 and _error(body)["code"] == "UNAUTHENTICATED"
        assert headers.get("WWW-Authenticate") == "Bearer"
    status, body, _ = http.call("GET", "/api/tenants/acme/principals", token=token)
    assert status == 401 and _error(body)["code"] == "UNAUTHENTICATED"
    status, body, _ = http.call("GET", "/resource-provisioning/k8s/projects/wp", token=token)
    assert (status, body) == (401, {"code": "unauthorized"})


def test_a_missing_grant_is_permission_denied_naming_method_and_permission(http):
    token = http.issue("acme", "alice", [FLEET_GRANT])
    status, body, _ = http.call("POST", "/api/compute/sites/list", {}, token)
    assert status == 403
    error = _error(body)
    assert error["code"] == "PERMISSION_DENIED"
    assert error["details"] == {"method": "compute.sites.list", "permission": SITES_GRANT}


def test_methods_list_is_the_registry_for_any_tenant_principal(http):
    token = http.issue("acme", "nobody", [])
    status, body, _ = http.call("POST", "/api/compute/methods/list", {}, token)
    assert status == 200
    names = [item["name"] for item in body["items"]]
    assert "compute.sites.list" in names and names == sorted(names)
    for item in body["items"]:
        assert set(item) == {"name", "path", "kind", "authorization", "module", "phase", "composite"}
        module, method = item["name"].split(".")[1:]
        assert item["path"] == f"/api/compute/{module}/{method}"
        assert item["authorization"] == f"compute:{module}:admin@compute-{module}"
        assert item["kind"] in ("read", "mutation") and isinstance(item["composite"], bool)
    assert http.call("POST", "/api/compute/methods/list", {}, http.keys["service"])[0] == 401
    assert http.call("POST", "/api/compute/methods/list", {})[0] == 401


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_any_method_but_post_is_not_found_after_authentication(http, method):
    token = http.issue("acme", "alice", [SITES_GRANT])
    status, body, _ = http.call(method, "/api/compute/sites/list", token=token)
    assert status == 404 and _error(body)["code"] == "NOT_FOUND"
    assert http.call(method, "/api/compute/sites/list")[0] == 401


def test_unknown_module_or_method_is_not_found_after_authentication(http):
    token = http.issue("acme", "alice", [])
    for path in ("/api/compute/nope/list", "/api/compute/sites/nope"):
        status, body, _ = http.call("POST", path, {}, token)
        assert status == 404 and _error(body)["code"] == "NOT_FOUND"
        assert http.call("POST", path, {})[0] == 401


@pytest.mark.parametrize("raw", [b"{", b"[]", b"null", b'{"a":1,"a":2}', b"\xff"])
def test_a_body_that_is_not_one_json_object_is_invalid_argument(http, raw):
    token = http.issue("acme", "alice", [SITES_GRANT])
    status, body, _ = http.call("POST", "/api/compute/sites/list", token=token, raw=raw)
    assert status == 400 and _error(body)["code"] == "INVALID_ARGUMENT"


def test_unknown_input_fields_are_refused(http):
    token = http.issue("acme", "alice", [SITES_GRANT])
    status, body, _ = http.call("POST", "/api/compute/sites/list", {"colour": "red"}, token)
    assert status == 400 and _error(body)["details"]["field"] == "/colour"


def test_unknown_paths_under_compute_answer_in_its_envelope_locally():
    from app import app
    from devkit.gateway import LocalGateway

    response = LocalGateway(app).handle("POST", "/api/compute/a/b/c", {}, b"{}")
    assert response["statusCode"] == 404 and json.loads(response["body"])["error"]["code"] == "NOT_FOUND"
