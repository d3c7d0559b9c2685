"""Keystone tokens over real HTTP: the fake Keystone's issue, mint and validate, and the service's
validator against it (cache bounds, 401 and 503, renewal of its own token, secrets kept out of logs)."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from chalicelib.auth.keystone import (
    Credential,
    KeystoneUnavailable,
    KeystoneValidator,
    placement_key_credential,
)
from chalicelib.commitments.upstream import OpenStackConfig
from chalicelib.config import ConfigurationError
from chalicelib.errors import Unauthorized
from chalicelib.placement.policy import PlacementPolicy
from fakes.openstack import FakeOpenStack, Scenario
from fakes.openstack.keystone import Identity

PASSWORD = "svc-Pw9!never-logged"
READER_PASSWORD = "reader-Pw9!never-logged"


def scenario(**overrides: Any) -> Scenario:
    raw: dict[str, Any] = {"users": [
        {"name": "placement", "domain": "Default", "password": PASSWORD, "project": "service",
         "project_domain": "Default", "roles": ["service"], "id": "u-placement"},
        {"name": "nosy", "domain": "Default", "password": READER_PASSWORD, "project": "demo",
         "project_domain": "Default", "roles": ["reader"], "id": "u-nosy"},
    ]}
    raw.update(overrides)
    return Scenario.from_dict(raw)


@pytest.fixture
def fake() -> Iterator[FakeOpenStack]:
    with FakeOpenStack(scenario()) as running:
        yield running


def config(fake: FakeOpenStack, user: str = "placement", password: str = PASSWORD,
           project: str = "service") -> OpenStackConfig:
    return OpenStackConfig(auth_url=fake.auth_url, username=user, password=password, project_name=project)


class Clock:
    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def service_token(fake: FakeOpenStack, user: str = "placement", password: str = PASSWORD,
                  project: str = "service") -> str:
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"name": "Default"}, "password": password}}},
        "scope": {"project": {"name": project, "domain": {"name": "Default"}}}}}
    answer = requests.post(f"{fake.auth_url}/auth/tokens", json=body, timeout=5)
    assert answer.status_code == 201, answer.text
    return answer.headers["X-Subject-Token"]


def validations(fake: FakeOpenStack) -> int:
    return fake.app.stats["keystone.validate"]


# --- the fake Keystone -----------------------------------------------------------------------------------


def test_password_tokens_carry_the_users_roles_and_validate_as_keystone_answers(fake) -> None:
    caller = service_token(fake)
    subject = fake.app.mint_token(Identity(user_id="u-1", roles=("member", "reader"), project_id="p-1"))
    answer = requests.get(f"{fake.auth_url}/auth/tokens", timeout=5,
                          headers={"X-Auth-Token": caller, "X-Subject-Token": subject})
    assert answer.status_code == 200 and answer.headers["X-Subject-Token"] == subject
    token = answer.json()["token"]
    assert token["user"]["id"] == "u-1" and token["project"]["id"] == "p-1"
    assert [r["name"] for r in token["roles"]] == ["member", "reader"]
    assert token["expires_at"].endswith("Z") and "catalog" in token
    quiet = requests.get(f"{fake.auth_url}/auth/tokens?nocatalog", timeout=5,
                         headers={"X-Auth-Token": caller, "X-Subject-Token": subject}).json()["token"]
    assert "catalog" not in quiet
    # The service's own token validates too, with the roles the scenario gave its user.
    own = requests.get(f"{fake.auth_url}/auth/tokens?nocatalog", timeout=5,
                       headers={"X-Auth-Token": caller, "X-Subject-Token": caller}).json()["token"]
    assert own["user"]["id"] == "u-placement" and [r["name"] for r in own["roles"]] == ["service"]
    assert own["project"]["name"] == "service"


def test_minting_for_a_gabbit_header_set_over_http(fake) -> None:
    caller = service_token(fake)

    def minted(headers: dict[str, str], body: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = requests.post(f"{fake.url}/_fake/tokens", headers=headers, timeout=5,
                               data=json.dumps(body) if body is not None else b"")
        assert answer.status_code == 201, answer.text
        token = answer.json()["token"]
        validated = requests.get(f"{fake.auth_url}/auth/tokens?nocatalog", timeout=5,
                                 headers={"X-Auth-Token": caller, "X-Subject-Token": token})
        assert validated.status_code == 200
        return dict(validated.json()["token"])

    system = minted({"x-auth-token": "user", "x-roles": "admin,member,reader", "openstack-system-scope": "all"})
    assert system["system"] == {"all": True} and "project" not in system
    assert [r["name"] for r in system["roles"]] == ["admin", "member", "reader"]
    project = minted({"x-auth-token": "user", "x-roles": "reader", "x-project-id": "p-9"})
    assert project["project"]["id"] == "p-9" and project["user"]["id"] == "user"
    # As upstream's test middleware: no x-roles means admin for the user `admin`, nothing for others.
    admin = minted({"x-auth-token": "admin"})
    assert [r["name"] for r in admin["roles"]] == ["admin"] and admin["project"]["id"] == "admin"
    nobody = minted({"x-auth-token": "user:p-3", "x-user-id": "u-7"})
    assert nobody["roles"] == [] and nobody["project"]["id"] == "p-3" and nobody["user"]["id"] == "u-7"
    domain = minted({}, {"roles": ["admin"], "user_id": "u-d", "domain_id": "d-1"})
    assert domain["domain"] == {"id": "d-1", "name": "d-1"} and "project" not in domain


def test_validation_refusals(fake) -> None:
    caller = service_token(fake)
    reader = service_token(fake, "nosy", READER_PASSWORD, "demo")
    subject = fake.app.mint_token_for_headers({"x-roles": "admin", "x-project-id": "p-1"})
    url = f"{fake.auth_url}/auth/tokens"
    unknown = requests.get(url, headers={"X-Auth-Token": caller, "X-Subject-Token": "not-a-token"}, timeout=5)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == 404
    assert requests.get(url, headers={"X-Auth-Token": "nope", "X-Subject-Token": subject},
                        timeout=5).status_code == 401
    forbidden = requests.get(url, headers={"X-Auth-Token": reader, "X-Subject-Token": subject}, timeout=5)
    assert forbidden.status_code == 403 and "identity:validate_token" in forbidden.json()["error"]["message"]
    revoked = requests.delete(url, headers={"X-Auth-Token": caller, "X-Subject-Token": subject}, timeout=5)
    assert revoked.status_code == 204
    assert requests.get(url, headers={"X-Auth-Token": caller, "X-Subject-Token": subject},
                        timeout=5).status_code == 404


# --- the validator ---------------------------------------------------------------------------------------


def test_a_validation_is_a_typed_credential_and_a_cached_one_costs_no_round_trip(fake) -> None:
    clock = Clock()
    validator = KeystoneValidator(config(fake), 30, clock=clock)
    token = fake.app.mint_token_for_headers({"x-auth-token": "u-1", "x-roles": "member,reader",
                                             "x-project-id": "p-1"})
    credential = validator.validate(token)
    assert (credential.user_id, credential.project_id, credential.project_domain_id, credential.roles,
            credential.system_scope, credential.domain_id) == ("u-1", "p-1", "default", ("member", "reader"),
                                                               None, None)
    assert credential.expires_at is not None and credential.expires_at.timestamp() > clock.now
    first = validations(fake)
    clock.now += 29
    assert validator.validate(token) == credential
    assert validations(fake) == first and (validator.hits, validator.misses) == (1, 1)
    # Policy reads it: a project reader may see its own project's usages, not list providers.
    policy = PlacementPolicy()
    assert policy.enforce("placement:usages", credential, {"project_id": "p-1"})
    assert not policy.enforce("placement:resource_providers:list", credential, {"project_id": "p-1"})


def test_system_and_domain_scope(fake) -> None:
    validator = KeystoneValidator(config(fake), 30)
    system = validator.validate(fake.app.mint_token_for_headers({"x-roles": "admin", "openstack-system-scope": "all"}))
    assert (system.system_scope, system.project_id, system.domain_id) == ("all", None, None)
    domain = validator.validate(fake.app.mint_token(Identity(user_id="u-d", roles=("admin",), domain_id="d-1")))
    assert (domain.system_scope, domain.project_id, domain.domain_id) == (None, None, "d-1")
    assert not PlacementPolicy().enforce("placement:resource_providers:list", system, {})
    assert not PlacementPolicy().enforce("placement:resource_providers:list", domain, {})


def test_a_revoked_token_is_401_once_the_cache_bound_passes(fake) -> None:
    clock = Clock()
    validator = KeystoneValidator(config(fake), 20, clock=clock)
    token = fake.app.mint_token_for_headers({"x-roles": "admin", "x-project-id": "p-1"})
    validator.validate(token)
    assert fake.app.revoke_token(token)
    clock.now += 19.9
    validator.validate(token)  # within the bound: still the cached answer
    clock.now += 0.2
    with pytest.raises(Unauthorized):
        validator.validate(token)
    asked = validations(fake)
    with pytest.raises(Unauthorized):  # the refusal is cached as long
        validator.validate(token)
    assert validations(fake) == asked


def test_the_cache_never_holds_past_the_tokens_expiry_and_is_capped_at_60_seconds(fake) -> None:
    clock = Clock()
    validator = KeystoneValidator(config(fake), 3600, clock=clock)
    short = fake.app.mint_token(Identity(user_id="u-1", roles=("admin",), project_id="p-1"), ttl_seconds=5)
    long = fake.app.mint_token(Identity(user_id="u-1", roles=("admin",), project_id="p-1"))
    validator.validate(short)
    validator.validate(long)
    clock.now += 6  # past the short token's expires_at, which Keystone (on its own clock) still honours
    with pytest.raises(Unauthorized):
        validator.validate(short)
    asked = validations(fake)
    clock.now += 54.5  # 60.5 s after the first answers: past the 60 s cap
    validator.validate(long)
    assert validations(fake) == asked + 1


def test_an_unknown_token_is_401(fake) -> None:
    validator = KeystoneValidator(config(fake), 30)
    with pytest.raises(Unauthorized):
        validator.validate("no-such-token")
    with pytest.raises(Unauthorized):
        validator.validate("")


def test_keystone_unreachable_or_failing_is_503_never_a_pass_and_never_cached() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    unreachable = KeystoneValidator(OpenStackConfig(auth_url=f"http://127.0.0.1:{closed_port}/v3", username="u",
                                                    password=PASSWORD, project_name="p"), 30, timeout=2)
    with pytest.raises(KeystoneUnavailable) as raised:
        unreachable.validate("some-token")
    assert raised.value.status == 503
    with FakeOpenStack(scenario(faults=[{"endpoint": "keystone.validate", "calls": [1], "status": 502}])) as fake:
        validator = KeystoneValidator(config(fake), 30)
        token = fake.app.mint_token_for_headers({"x-roles": "admin", "x-project-id": "p-1"})
        with pytest.raises(KeystoneUnavailable):
            validator.validate(token)
        assert validator.validate(token).project_id == "p-1"  # the failure was not cached


def test_the_services_own_token_is_renewed_once_on_401(fake) -> None:
    validator = KeystoneValidator(config(fake), 30)
    first = fake.app.mint_token_for_headers({"x-roles": "admin", "x-project-id": "p-1"})
    validator.validate(first)
    own = [t for t in fake.app.tokens_issued if t != first]
    assert len(own) == 1 and fake.app.revoke_token(own[0])
    second = fake.app.mint_token_for_headers({"x-roles": "reader", "x-project-id": "p-2"})
    assert validator.validate(second).project_id == "p-2"
    assert fake.app.stats["keystone.tokens"] == 2


def test_keystone_refusing_the_service_twice_or_a_service_without_the_role_is_503() -> None:
    twice = [{"endpoint": "keystone.validate", "calls": [1, 2], "status": 401}]
    with FakeOpenStack(scenario(faults=twice)) as fake:
        with pytest.raises(KeystoneUnavailable):
            KeystoneValidator(config(fake), 30).validate(fake.app.mint_token_for_headers({"x-roles": "admin"}))
        assert fake.app.stats["keystone.tokens"] == 2
    with FakeOpenStack(scenario()) as fake:
        reader = KeystoneValidator(config(fake, "nosy", READER_PASSWORD, "demo"), 30)
        with pytest.raises(KeystoneUnavailable):
            reader.validate(fake.app.mint_token_for_headers({"x-roles": "admin"}))
    with FakeOpenStack(scenario()) as fake:
        wrong = KeystoneValidator(config(fake, password="wrong-password"), 30)
        with pytest.raises(KeystoneUnavailable):
            wrong.validate(fake.app.mint_token_for_headers({"x-roles": "admin"}))


def test_tokens_and_passwords_never_appear_in_logs_errors_or_reprs(fake, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    validator = KeystoneValidator(config(fake), 30)
    good = fake.app.mint_token_for_headers({"x-roles": "admin", "x-project-id": "p-1"})
    errors: list[BaseException] = []
    credential = validator.validate(good)
    for bad in ("unknown-token-" + "x" * 40, good + "0"):
        try:
            validator.validate(bad)
        except Unauthorized as error:
            errors.append(error)
    fake.app.revoke_token(fake.app.tokens_issued[1])  # the service's own: renewal path
    validator.validate(fake.app.mint_token_for_headers({"x-roles": "reader", "x-project-id": "p-3"}))
    wrong = KeystoneValidator(config(fake, password=PASSWORD + "-wrong"), 30)
    try:
        wrong.validate(good)
    except KeystoneUnavailable as error:
        errors.append(error)
    assert len(errors) == 3
    seen = caplog.text + "".join(f"{e!s}{e!r}{e.__cause__!r}{e.__context__!r}" for e in errors)
    seen += repr(validator) + repr(wrong) + repr(credential) + repr(config(fake))
    secrets_ = [PASSWORD, *fake.app.tokens_issued, "unknown-token-" + "x" * 40]
    assert caplog.records, "DEBUG logging was captured"
    assert [s for s in secrets_ if s in seen] == []


def test_from_env_reads_the_commitment_syncs_settings(fake) -> None:
    env = {"RP_OPENSTACK_AUTH_URL": fake.auth_url, "RP_OPENSTACK_USERNAME": "placement",
           "RP_OPENSTACK_PASSWORD": PASSWORD, "RP_OPENSTACK_PROJECT_NAME": "service", "RP_AUTH_CACHE_SECONDS": "600"}
    validator = KeystoneValidator.from_env(env)
    assert "ttl_seconds=60" in repr(validator)
    token = fake.app.mint_token_for_headers({"x-roles": "admin", "x-project-id": "p-1"})
    assert validator.validate(token).roles == ("admin",)

    class Secrets:
        def get_secret_value(self, SecretId: str) -> dict[str, str]:
            assert SecretId == "arn:secret"
            return {"SecretString": json.dumps({"auth_url": fake.auth_url, "username": "placement",
                                                "password": PASSWORD, "project_name": "service"})}

    from_secret = KeystoneValidator.from_env({"RP_COMMITMENTS_SECRET_ID": "arn:secret"}, secrets_client=Secrets())
    assert from_secret.validate(token).project_id == "p-1"
    with pytest.raises(ConfigurationError, match=r"RP_OPENSTACK_\*") as raised:
        KeystoneValidator.from_env({"RP_OPENSTACK_AUTH_URL": fake.auth_url, "RP_OPENSTACK_PASSWORD": PASSWORD})
    assert PASSWORD not in str(raised.value)


def test_a_placement_key_is_a_project_principal_with_every_role() -> None:
    key = placement_key_credential()
    assert isinstance(key, Credential) and key.system_scope is None and key.expires_at is None
    for mode in ("secure", "legacy"):
        policy = PlacementPolicy(mode)  # type: ignore[arg-type]
        assert policy.enforce("placement:reshaper:reshape", key, {})
        assert policy.enforce("placement:usages", key, {"project_id": "any-project"})
        assert policy.enforce("placement:allocations:manage", key, {})
