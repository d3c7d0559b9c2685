"""The fake OpenStack itself, over HTTP: the shapes other tests rely on, faults, scenario files, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from fakes.openstack import FakeOpenStack, Scenario, load_scenario

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fakes" / "openstack" / "scenarios" / "small.yaml"
NOVA = {"OpenStack-API-Version": "compute 2.61", "X-OpenStack-Nova-API-Version": "2.61"}


@pytest.fixture
def fake() -> Iterator[FakeOpenStack]:
    scenario = load_scenario(SMALL)
    scenario.faults = []
    with FakeOpenStack(scenario) as running:
        yield running


def token(fake: FakeOpenStack, body: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    body = body or {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "syncer", "domain": {"name": "Default"}, "password": "local-password"}}},
        "scope": {"project": {"name": "cloud_admin", "domain": {"name": "Default"}}}}}
    answer = requests.post(f"{fake.auth_url}/auth/tokens", json=body, timeout=5)
    assert answer.status_code == 201, answer.text
    return answer.headers["X-Subject-Token"], answer.json()


def test_version_discovery_and_catalog(fake) -> None:
    root = requests.get(fake.url + "/", timeout=5)
    assert root.status_code == 300
    assert root.json()["versions"]["values"][0]["links"][0]["href"] == f"{fake.url}/v3/"
    _, body = token(fake)
    public = {s["type"]: [e["url"] for e in s["endpoints"] if e["interface"] == "public"]
              for s in body["token"]["catalog"]}
    assert public == {"identity": [f"{fake.url}/v3"], "compute": [f"{fake.url}/compute/v2.1"],
                      "resources": [f"{fake.url}/limes"]}


def test_refused_credentials_are_401(fake) -> None:
    bad = {"auth": {"identity": {"methods": ["application_credential"],
                                 "application_credential": {"id": "local-app-cred", "secret": "wrong"}}}}
    assert requests.post(f"{fake.auth_url}/auth/tokens", json=bad, timeout=5).status_code == 401
    assert requests.get(f"{fake.auth_url}/projects", headers={"X-Auth-Token": "nope"}, timeout=5).status_code == 401


def test_nova_shapes_follow_the_microversion(fake) -> None:
    tok, _ = token(fake)
    url = f"{fake.url}/compute/v2.1/servers/detail?tenant_id=p-alpha&all_tenants=true"
    new = requests.get(url, headers={"X-Auth-Token": tok, **NOVA}, timeout=5).json()["servers"][0]
    old = requests.get(url, headers={"X-Auth-Token": tok}, timeout=5).json()["servers"][0]
    assert new["flavor"]["original_name"] == "m1.small" and new["OS-EXT-AZ:availability_zone"] == "az-1"
    assert "original_name" not in old["flavor"]
    # Without all_tenants, tenant_id is ignored: only the token's own project (which has none).
    mine = requests.get(f"{fake.url}/compute/v2.1/servers/detail?tenant_id=p-alpha",
                        headers={"X-Auth-Token": tok, **NOVA}, timeout=5).json()
    assert mine["servers"] == []
    flavors = requests.get(f"{fake.url}/compute/v2.1/flavors/detail", headers={"X-Auth-Token": tok, **NOVA},
                           timeout=5).json()["flavors"]
    assert [f["name"] for f in flavors] == ["m1.small"]  # public only unless is_public=None


def test_limes_filters_and_404s(fake) -> None:
    tok, _ = token(fake)
    base = f"{fake.url}/limes/v1/domains"
    headers = {"X-Auth-Token": tok}
    assert len(requests.get(f"{base}/d-1/projects/p-alpha/commitments", headers=headers, timeout=5)
               .json()["commitments"]) == 1
    assert requests.get(f"{base}/d-1/projects/p-alpha/commitments?service=network", headers=headers,
                        timeout=5).json() == {"commitments": []}
    assert requests.get(f"{base}/d-2/projects/p-alpha/commitments", headers=headers, timeout=5).status_code == 404
    assert requests.get(f"{base}/d-1/projects/p-new/commitments", headers=headers, timeout=5).status_code == 404
    assert requests.get(f"{base}/d-1/projects/p-none/commitments", headers=headers, timeout=5).status_code == 404


def test_faults_by_call_number_and_project() -> None:
    raw = {"users": [{"name": "u", "password": "p", "project": "a"}], "projects": [{"id": "p1", "domain_id": "d"}],
           "faults": [{"endpoint": "limes", "calls": [2], "status": 503},
                      {"endpoint": "limes", "project": "p2", "status": 500}]}
    with FakeOpenStack(Scenario.from_dict(raw)) as fake:
        tok, _ = token(fake, {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": "u", "domain": {"name": "Default"}, "password": "p"}}},
            "scope": {"project": {"name": "a", "domain": {"name": "Default"}}}}})
        url = f"{fake.url}/limes/v1/domains/d/projects/p1/commitments"
        codes = [requests.get(url, headers={"X-Auth-Token": tok}, timeout=5).status_code for _ in range(3)]
        other = requests.get(url.replace("p1", "p2"), headers={"X-Auth-Token": tok}, timeout=5).status_code
    assert codes == [200, 503, 200]
    assert other == 500


@pytest.mark.parametrize(("raw", "message"), [
    ({"nonsense": 1}, "unknown scenario keys"),
    ({"faults": [{"endpoint": "glance"}]}, "unknown fault endpoint"),
    ({"faults": [{"endpoint": "limes", "truncate": "half"}]}, "unknown truncation"),
])
def test_scenario_mistakes_are_refused(raw, message) -> None:
    with pytest.raises(ValueError, match=message):
        Scenario.from_dict(raw)


def test_a_json_scenario_loads_like_yaml(tmp_path) -> None:
    import yaml

    path = tmp_path / "s.json"
    path.write_text(json.dumps(yaml.safe_load(SMALL.read_text())))
    assert load_scenario(path) == load_scenario(SMALL)


def test_the_command_prints_its_url_and_serves() -> None:
    process = subprocess.Popen([sys.executable, "-m", "fakes.openstack", "--scenario", str(SMALL), "--port", "0"],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = line.split("listening on ")[1].split()[0]
        assert requests.get(url + "/v3", timeout=5).json()["version"]["id"] == "v3.14"
    finally:
        process.terminate()
        process.wait(timeout=10)
