"""Real Nova (`nova==33.0.2`) and neutron-lib (`neutron-lib==5.0.1`) against `make run`'s server:
Nova's SchedulerReportClient as nova-compute, the scheduler, the conductor, nova-api and
nova-status drive it, and neutron-lib's PlacementAPIClient as Neutron's agents and segments
plugin do (devkit/placement/clients_flow.py; their own venv, devkit/placement/clients.py).
One test per step; the steps that fail today are listed in expected.yaml (failing.nova/neutron).

Nova's flow runs twice: with `auth_type = admin_token` and the Placement key (`nova`), and configured
the standard way (`nova-keystone`, issue 16): `auth_type = password` with the fake Keystone's URL and
Nova's service user (role `service`), Placement found in the catalog, its token validated by the
service. A user token with only `reader` cannot write.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from devkit.placement import clients
from devkit.placement.clients_flow import NEUTRON_STEPS, NOVA_STEPS
from devkit.placement.service import PlacementService
from fakes.openstack import FakeOpenStack
from tests.placement_conformance import expectations
from tests.placement_conformance.conftest import (
    NOVA_PASSWORD,
    NOVA_USER,
    READER_PASSWORD,
    READER_PROJECT,
    READER_USER,
    SERVICE_PROJECT,
)

EXPECTED = expectations.load()
expectations.check_names(EXPECTED, None, {"nova": list(NOVA_STEPS), "neutron": list(NEUTRON_STEPS),
                                          "nova-keystone": list(NOVA_STEPS)})
STEPS = [("nova", name) for name in NOVA_STEPS] + [("neutron", name) for name in NEUTRON_STEPS]
KEYSTONE_STEPS = [("nova-keystone", name) for name in NOVA_STEPS]
expectations.OBSERVED.collect("nova", "nova", list(NOVA_STEPS))
expectations.OBSERVED.collect("neutron", "neutron", list(NEUTRON_STEPS))
expectations.OBSERVED.collect("nova-keystone", "nova-keystone", list(NOVA_STEPS))


@pytest.fixture(scope="module")
def flow(placement_service: PlacementService) -> Iterator[dict[tuple[str, str], clients.Step]]:
    yield {(step.kind, step.name): step for step in clients.run_flow(placement_service.base, placement_service.key)}


@pytest.fixture(scope="module")
def keystone_flow(placement_service: PlacementService, fake_keystone: FakeOpenStack
                  ) -> Iterator[dict[tuple[str, str], clients.Step]]:
    steps = clients.run_nova_flow_with_password(fake_keystone.auth_url, NOVA_USER, NOVA_PASSWORD, SERVICE_PROJECT)
    yield {("nova-keystone", step.name): step for step in steps}


def judge(flow: dict[tuple[str, str], clients.Step], kind: str, name: str) -> None:
    step = flow.get((kind, name))
    status, detail = ("failed", "the flow did not report this step") if step is None else (
        ("passed", "") if step.ok else ("failed", step.detail))
    expectations.judge(kind, kind, name, status, detail, EXPECTED.step_fails(kind, name),
                       lambda text: text.strip().splitlines()[0][:300] if text.strip() else text)


@pytest.mark.parametrize(("kind", "name"), STEPS, ids=[f"{kind}: {name}" for kind, name in STEPS])
def test_step(flow: dict[tuple[str, str], clients.Step], kind: str, name: str) -> None:
    judge(flow, kind, name)


@pytest.mark.parametrize(("kind", "name"), KEYSTONE_STEPS, ids=[f"{kind}: {name}" for kind, name in KEYSTONE_STEPS])
def test_step_with_keystone_password_auth(keystone_flow: dict[tuple[str, str], clients.Step], kind: str,
                                          name: str) -> None:
    judge(keystone_flow, kind, name)


def password_token(fake: FakeOpenStack, user: str, password: str, project: str) -> str:
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"name": "Default"}, "password": password}}},
        "scope": {"project": {"name": project, "domain": {"name": "Default"}}}}}
    answer = requests.post(f"{fake.auth_url}/auth/tokens", json=body, timeout=10)
    assert answer.status_code == 201, answer.status_code
    return answer.headers["X-Subject-Token"]


def test_a_reader_token_cannot_write_and_a_service_token_can(placement_service: PlacementService,
                                                             fake_keystone: FakeOpenStack) -> None:
    reader = password_token(fake_keystone, READER_USER, READER_PASSWORD, READER_PROJECT)
    service = password_token(fake_keystone, NOVA_USER, NOVA_PASSWORD, SERVICE_PROJECT)
    headers = {"openstack-api-version": "placement 1.20", "content-type": "application/json"}
    body = {"name": "reader-cannot-write"}
    url = f"{placement_service.base}/resource_providers"

    refused = requests.post(url, json=body, headers={**headers, "x-auth-token": reader}, timeout=30)
    assert refused.status_code == 403, refused.text
    assert refused.json()["errors"][0]["detail"].strip().endswith(
        "Policy does not allow placement:resource_providers:create to be performed.")
    assert requests.get(url, headers={**headers, "x-auth-token": reader}, timeout=30).status_code == 403

    created = requests.post(url, json=body, headers={**headers, "x-auth-token": service}, timeout=30)
    assert created.status_code == 200, created.text
    uuid = created.json()["uuid"]
    gone = requests.delete(f"{url}/{uuid}", headers={**headers, "x-auth-token": reader}, timeout=30)
    assert gone.status_code == 403
    assert requests.delete(f"{url}/{uuid}", headers={**headers, "x-auth-token": service}, timeout=30).status_code == 204


def test_an_unknown_token_is_401_and_a_token_without_scope_is_refused(placement_service: PlacementService) -> None:
    answer = requests.get(f"{placement_service.base}/resource_providers", headers={"x-auth-token": "no-such-token"},
                          timeout=30)
    assert answer.status_code == 401
    assert "no-such-token" not in answer.text
