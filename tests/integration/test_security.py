"""Keys: a Site's key opens only its own Site's paths; the service key only /api routes."""

import pytest

from chalicelib.auth.keys import generate_key, hash_key
from chalicelib.auth.service import Authenticator
from chalicelib.config import Settings
from chalicelib.errors import Unauthorized
from tests.integration.helpers import EVENTS
from tests.support import factories as f

SITE_PATHS = [
    ("POST", "/resource-provisioning/{site}/reports"),
    ("POST", "/resource-provisioning/{site}/accounts"),
    ("GET", "/resource-provisioning/{site}/allocations/6f1b2a52-4c8e-5d0a-9b7e-3a1c2d4e5f60"),
    ("GET", "/resource-provisioning/{site}/projects/wp-1"),
    ("GET", "/resource-provisioning/{site}/members/alice?providerProjectRef=wp-1"),
    ("GET", "/resource-provisioning/{site}/retained-accounts"),
]


def _ask(api, method, path, key, body=None):
    return api.request(method, path, key=key, json_body=body if body is not None else f.report())


@pytest.mark.parametrize(("method", "path"), SITE_PATHS)
@pytest.mark.parametrize(
    ("key", "site"),
    [
        (None, "k8s"),
        ("wrong-key", "k8s"),
        ("slurm", "k8s"),  # another Site's key
        ("k8s", "slurm"),
        ("service", "k8s"),  # the service key never opens Site paths
        ("k8s", "openstack"),  # unknown Site
    ],
)
def test_site_paths_refuse_foreign_keys(api, method, path, key, site):
    answer = _ask(api, method, path.format(site=site), key)
    assert (answer.status, answer.body) == (401, {"code": "unauthorized"})


@pytest.mark.parametrize("key", [None, "k8s", "slurm", "nonsense"])
def test_intake_refuses_all_but_the_service_key(api, key):
    answer = api.post(EVENTS, {"events": []}, key=key)
    assert (answer.status, answer.body) == (401, {"code": "unauthorized"})


def test_authentication_comes_before_the_body_and_the_method(api):
    assert api.request("POST", "/resource-provisioning/k8s/reports", key="slurm", body=b"{garbage").status == 401
    assert api.request("DELETE", "/resource-provisioning/k8s/reports", key=None).status == 401
    assert api.request("GET", "/api/resource-provisioning/events", key="k8s").status == 401


@pytest.mark.parametrize("header", ["Basic abc", "Bearer", "Bearer  ", "bearer{}", "Token {}"])
def test_malformed_authorization_headers(api, header):
    raw = header.format(api.keys["k8s"])
    answer = api.request("POST", "/resource-provisioning/k8s/reports", json_body=f.report(),
                         headers={"authorization": raw})
    assert answer.status == 401


def test_scheme_is_case_insensitive(api):
    answer = api.request("GET", "/resource-provisioning/k8s/projects/wp-1",
                         headers={"authorization": f"bEaReR {api.keys['k8s']}"})
    assert answer.status == 404  # authenticated; simply no such Project


def test_several_keys_per_site_for_rotation(api, services):
    second = generate_key()
    services.keys.add(hash_key(second), "site:k8s")
    assert api.get("/resource-provisioning/k8s/projects/wp-1", key=second).status == 404
    assert api.get("/resource-provisioning/k8s/projects/wp-1", key="k8s").status == 404


def test_revoked_key_stops_working_within_60_seconds(services):
    now = [1000.0]
    auth = Authenticator(services.keys, services.settings.auth_cache_seconds, clock=lambda: now[0])
    raw = generate_key()
    record = services.keys.add(hash_key(raw), "site:k8s")
    assert auth.authenticate(raw).site == "k8s"
    assert services.keys.revoke(record.key_id)
    now[0] += 60.0  # the cache's clock moves on; no waiting in real time
    with pytest.raises(Unauthorized):
        auth.authenticate(raw)


def test_default_cache_never_exceeds_60_seconds(services, monkeypatch):
    monkeypatch.setenv("RP_AUTH_CACHE_SECONDS", "3600")
    assert Settings.from_env().auth_cache_seconds <= 60


def test_keys_are_stored_hashed(services, keys):
    stored = services.client.scan(TableName=services.table)["Items"]
    dump = repr(stored)
    for raw in keys.values():
        assert raw not in dump
    assert any(i["sk"]["S"] == hash_key(keys["k8s"]) for i in stored)
