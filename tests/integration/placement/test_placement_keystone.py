"""Placement behind Keystone, wired (issue 16), through the app's Lambda path: RP_PLACEMENT_AUTH=keystone,
the service account validating tokens at the fake Keystone over HTTP, the policy deciding each route by its
rule. Keys keep working; a reader cannot write; Keystone down is 503 in Placement's format and nothing of it
is cached; a cached validation costs no call to Keystone; no secret reaches a log, an answer or a repr."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from chalicelib.config import PlacementAuthSettings
from chalicelib.runtime import Services, use_services
from fakes.openstack import FakeOpenStack, Scenario
from tests.integration.placement.conftest import PlacementClient

PASSWORD = "placement-Pw9!never-logged"
PATH = "/placement/resource_providers"


def scenario(**extra: Any) -> Scenario:
    return Scenario.from_dict({"users": [{"name": "placement", "domain": "Default", "password": PASSWORD,
                                          "project": "service", "project_domain": "Default", "roles": ["service"],
                                          "id": "u-placement"}], **extra})


@pytest.fixture
def keystone_placement(services: Services, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
                       ) -> Iterator[tuple[Services, FakeOpenStack]]:
    extra = getattr(request, "param", {})
    with FakeOpenStack(scenario(**extra)) as fake:
        for name, value in (("AUTH_URL", fake.auth_url), ("USERNAME", "placement"), ("PASSWORD", PASSWORD),
                            ("PROJECT_NAME", "service")):
            monkeypatch.setenv(f"RP_OPENSTACK_{name}", value)
        monkeypatch.delenv("RP_COMMITMENTS_SECRET_ID", raising=False)
        wired = replace(services, placement_auth_settings=PlacementAuthSettings("keystone", "secure", None),
                        _built={}, _lock=threading.Lock())
        use_services(wired)
        try:
            yield wired, fake
        finally:
            use_services(services)


def token(fake: FakeOpenStack, roles: str, project: str | None = "p-1", system: bool = False) -> str:
    headers = {"x-roles": roles, "x-user-id": "u-1"}
    if system:
        headers["openstack-system-scope"] = "all"
    elif project:
        headers["x-project-id"] = project
    return fake.app.mint_token_for_headers(headers)


def test_roles_decide_each_route_by_its_rule_and_keys_keep_working(
        keystone_placement: tuple[Services, FakeOpenStack], placement: PlacementClient) -> None:
    _, fake = keystone_placement
    service = token(fake, "service")
    created = placement.post(PATH, {"name": "by-service"}, version="1.20", token=service)
    assert created.status == 200, created.body
    reader = placement.post(PATH, {"name": "by-reader"}, version="1.20", token=token(fake, "reader,member"))
    assert reader.status == 403
    assert reader.body["errors"][0]["detail"].strip().endswith(
        "Policy does not allow placement:resource_providers:create to be performed.")
    # Project-scoped rules: a system-scoped admin is refused whatever its roles.
    assert placement.get(PATH, version="1.20", token=token(fake, "admin", system=True)).status == 403
    assert placement.get(PATH, version="1.20", token=token(fake, "admin")).status == 200
    # GET /usages: a project's reader sees its own project, no other.
    assert placement.get("/placement/usages?project_id=p-1", version="1.9", token=token(fake, "reader")).status == 200
    assert placement.get("/placement/usages?project_id=p-2", version="1.9", token=token(fake, "reader")).status == 403
    assert placement.get(PATH, version="1.20", token="no-such-token").status == 401
    # A wrong method is 405 for any caller Placement accepts, before any policy.
    assert placement.request("PATCH", PATH, token=token(fake, "reader")).status == 405
    assert placement.post(PATH, {"name": "by-key"}, version="1.20").status == 200  # the Placement key


def test_a_cached_validation_asks_keystone_once(keystone_placement: tuple[Services, FakeOpenStack],
                                                placement: PlacementClient) -> None:
    wired, fake = keystone_placement
    service = token(fake, "service")
    before = fake.app.stats["keystone.validate"]
    for _ in range(3):
        assert placement.get(PATH, version="1.20", token=service).status == 200
    assert fake.app.stats["keystone.validate"] - before == 1
    validator = wired.placement_callers.validator
    assert validator is not None and (validator.hits, validator.misses) == (2, 1)


@pytest.mark.parametrize("keystone_placement", [{"faults": [{"endpoint": "keystone.validate", "calls": [1],
                                                             "status": 503}]}], indirect=True)
def test_keystone_unavailable_is_503_in_placements_format_and_not_cached(
        keystone_placement: tuple[Services, FakeOpenStack], placement: PlacementClient) -> None:
    _, fake = keystone_placement
    service = token(fake, "service")
    down = placement.get(PATH, version="1.23", token=service)
    assert down.status == 503
    error = down.body["errors"][0]
    assert error["status"] == 503 and error["title"] == "Service Unavailable" and error["request_id"].startswith("req-")
    assert placement.get(PATH, version="1.23", token=service).status == 200  # the retry passes


def test_no_secret_in_debug_logs_answers_or_reprs(keystone_placement: tuple[Services, FakeOpenStack],
                                                  placement: PlacementClient, caplog: pytest.LogCaptureFixture) -> None:
    wired, fake = keystone_placement
    caplog.set_level(logging.DEBUG)
    good, reader = token(fake, "service"), token(fake, "reader")
    unknown = "unknown-token-" + "y" * 40
    answers = [placement.get(PATH, version="1.20", token=good),
               placement.post(PATH, {"name": "x"}, version="1.20", token=reader),
               placement.get(PATH, version="1.20", token=unknown),
               placement.get(PATH, version="1.20")]
    assert [a.status for a in answers] == [200, 403, 401, 200]
    seen = caplog.text + "".join(repr(a) for a in answers) + repr(wired.placement_callers)
    seen += repr(wired.placement_callers.validator) + repr(wired.placement_callers.principal(good))
    assert caplog.records, "DEBUG logging was captured"
    assert [s for s in (PASSWORD, placement.key, unknown, *fake.app.tokens_issued) if s in seen] == []
