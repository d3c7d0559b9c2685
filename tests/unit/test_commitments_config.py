"""OpenStack settings for the commitment sync: from the environment, or a Secrets Manager secret (moto)."""

from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from chalicelib.commitments.service import SyncSettings
from chalicelib.commitments.upstream import ConfigError, OpenStackConfig, concurrency_override, config_from_secret
from chalicelib.config import ConfigurationError

SECRET = "s3cr3t-Never-Shown"


def test_password_settings_from_the_environment() -> None:
    config = OpenStackConfig.from_env({
        "RP_OPENSTACK_AUTH_URL": "https://keystone.example/v3", "RP_OPENSTACK_USERNAME": "syncer",
        "RP_OPENSTACK_PASSWORD": SECRET, "RP_OPENSTACK_USER_DOMAIN_NAME": "Users",
        "RP_OPENSTACK_PROJECT_NAME": "cloud_admin", "RP_OPENSTACK_PROJECT_DOMAIN_NAME": "ccadmin",
        "RP_COMMITMENTS_CONCURRENCY": "8", "UNRELATED": "x",
    })
    assert (config.auth_url, config.username, config.password, config.user_domain_name, config.project_name,
            config.project_domain_name, config.concurrency) == (
        "https://keystone.example/v3", "syncer", SECRET, "Users", "cloud_admin", "ccadmin", 8)
    assert not config.uses_application_credential
    assert SECRET not in repr(config)


def test_application_credential_settings_from_the_environment() -> None:
    config = OpenStackConfig.from_env({
        "RP_OPENSTACK_AUTH_URL": "https://keystone.example", "RP_OPENSTACK_APPLICATION_CREDENTIAL_ID": "ac-1",
        "RP_OPENSTACK_APPLICATION_CREDENTIAL_SECRET": SECRET,
    })
    assert config.uses_application_credential and config.application_credential_secret == SECRET
    assert config.concurrency == 16 and config.user_domain_name == "Default"
    assert SECRET not in repr(config)


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"RP_OPENSTACK_AUTH_URL": "https://k/v3", "RP_OPENSTACK_USERNAME": "u", "RP_OPENSTACK_PROJECT_NAME": "p"},
        {"RP_OPENSTACK_AUTH_URL": "https://k/v3", "RP_OPENSTACK_APPLICATION_CREDENTIAL_ID": "ac-1"},
        {"RP_OPENSTACK_AUTH_URL": "https://k/v3", "RP_OPENSTACK_APPLICATION_CREDENTIAL_ID": "ac-1",
         "RP_OPENSTACK_APPLICATION_CREDENTIAL_SECRET": SECRET, "RP_COMMITMENTS_CONCURRENCY": "0"},
    ],
)
def test_incomplete_settings_are_refused_without_echoing_them(env) -> None:
    with pytest.raises(ConfigurationError) as error:  # ConfigError is one
        OpenStackConfig.from_env(env)
    assert SECRET not in str(error.value)


@mock_aws
def test_settings_from_a_secrets_manager_secret() -> None:
    client = boto3.client("secretsmanager", region_name="us-east-1")
    arn = client.create_secret(Name="rp/openstack", SecretString=json.dumps({
        "auth_url": "https://keystone.example/v3", "username": "syncer", "password": SECRET,
        "user_domain_name": "Default", "project_name": "cloud_admin", "project_domain_name": "Default",
        "unrelated": "ignored"}))["ARN"]
    config = config_from_secret(client, arn, concurrency=4)
    assert (config.username, config.password, config.project_name, config.concurrency) == (
        "syncer", SECRET, "cloud_admin", 4)


@mock_aws
@pytest.mark.parametrize("body", [f"not json {SECRET}", json.dumps([SECRET]), json.dumps({"password": SECRET})])
def test_an_unusable_secret_is_refused_without_echoing_it(body) -> None:
    client = boto3.client("secretsmanager", region_name="us-east-1")
    arn = client.create_secret(Name="rp/openstack", SecretString=body)["ARN"]
    with pytest.raises(ConfigError) as error:
        config_from_secret(client, arn)
    assert SECRET not in str(error.value)
    assert error.value.__cause__ is None
    assert error.value.__context__ is None or error.value.__suppress_context__  # no JSON error holding it


# --- the pass's own settings (chalicelib/commitments/service.py) -------------------------------------


def test_the_pass_reads_the_environment_first() -> None:
    from chalicelib.commitments.service import SyncSettings, openstack_config

    env = {"RP_OPENSTACK_AUTH_URL": "https://keystone.example/v3", "RP_OPENSTACK_USERNAME": "syncer",
           "RP_OPENSTACK_PASSWORD": SECRET, "RP_OPENSTACK_PROJECT_NAME": "cloud_admin"}
    config = openstack_config(SyncSettings(tenant="t", secret_id="ignored-when-the-environment-has-it"), env)
    assert config.password == SECRET


@mock_aws
def test_the_pass_reads_the_configured_secret_by_name() -> None:
    from chalicelib.commitments.service import SyncSettings, openstack_config

    client = boto3.client("secretsmanager", region_name="us-east-1")
    client.create_secret(Name="rp-dev/openstack", SecretString=json.dumps({
        "auth_url": "https://keystone.example/v3", "application_credential_id": "ac",
        "application_credential_secret": SECRET}))
    settings = SyncSettings.from_env({"RP_COMMITMENTS_SECRET_ID": "rp-dev/openstack", "RP_COMMITMENTS_TENANT": "t"})
    config = openstack_config(settings, {"RP_COMMITMENTS_CONCURRENCY": "3"}, client)
    assert (config.application_credential_id, config.concurrency) == ("ac", 3)


@mock_aws
def test_a_secret_that_cannot_be_read_names_nothing() -> None:
    from chalicelib.commitments.service import SyncSettings, openstack_config

    client = boto3.client("secretsmanager", region_name="us-east-1")
    with pytest.raises(ConfigError) as refused:
        openstack_config(SyncSettings(tenant="t", secret_id="no-such-secret"), {}, client)
    assert "no-such-secret" not in str(refused.value)
    with pytest.raises(ConfigError, match="RP_OPENSTACK_AUTH_URL or RP_COMMITMENTS_SECRET_ID is required"):
        openstack_config(SyncSettings(tenant="t"), {}, client)


def test_a_run_is_logged_and_measured(monkeypatch, capsys, caplog) -> None:
    from chalicelib.commitments.service import _empty_counts, _observe

    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    counts = {**_empty_counts(), "commitments": 7, "held": 3, "writes": 4, "skipped": {"unknown_flavor": 2}}
    _observe({"runId": "r-1", "outcome": "ok", "error": None, "counts": counts})
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    emf = next(line for line in lines if "_aws" in line)
    log = next(vars(r) for r in caplog.records if r.getMessage() == "commitments sync")
    assert (emf["outcome"], emf["CommitmentSyncRuns"], emf["CommitmentsHeld"], emf["CommitmentsWrites"],
            emf["CommitmentsSkipped"]) == ("ok", [1.0], [3.0], [4.0], [2.0])
    assert (log["runId"], log["held"], log["skipped"]) == ("r-1", 3, {"unknown_flavor": 2})


@pytest.mark.parametrize(("env", "named"), [
    ({"RP_OPENSTACK_AUTH_URL": "https://k/v3", "RP_OPENSTACK_USERNAME": "u", "RP_OPENSTACK_PROJECT_NAME": "p"},
     "RP_OPENSTACK_PASSWORD is required (or RP_OPENSTACK_APPLICATION_CREDENTIAL_ID and "
     "RP_OPENSTACK_APPLICATION_CREDENTIAL_SECRET instead of a password)"),
    ({"RP_OPENSTACK_USERNAME": "u", "RP_OPENSTACK_PASSWORD": SECRET, "RP_OPENSTACK_PROJECT_NAME": "p"},
     "RP_OPENSTACK_AUTH_URL is required"),
    ({"RP_OPENSTACK_AUTH_URL": "https://k/v3", "RP_OPENSTACK_APPLICATION_CREDENTIAL_ID": "ac-1"},
     "RP_OPENSTACK_APPLICATION_CREDENTIAL_SECRET is required"),
])
def test_missing_settings_are_named_as_the_variables_that_are_missing(env, named) -> None:
    with pytest.raises(ConfigError) as error:
        OpenStackConfig.from_env(env)
    assert str(error.value) == named


def test_a_secret_missing_keys_names_the_keys() -> None:
    with pytest.raises(ConfigError, match=r"^password, project_name are required"):
        OpenStackConfig.from_mapping({"auth_url": "https://k/v3", "username": "u"})


@pytest.mark.parametrize(("value", "says"), [
    ("lots", "RP_COMMITMENTS_CONCURRENCY must be a whole number"),
    ("²", "RP_COMMITMENTS_CONCURRENCY must be a whole number"),
    ("0", "RP_COMMITMENTS_CONCURRENCY must be at least 1"),
    ("-4", "RP_COMMITMENTS_CONCURRENCY must be at least 1"),
])
def test_a_concurrency_that_cannot_be_used_names_the_variable_not_the_value(value, says) -> None:
    env = {"RP_OPENSTACK_AUTH_URL": "https://k/v3", "RP_OPENSTACK_APPLICATION_CREDENTIAL_ID": "ac-1",
           "RP_OPENSTACK_APPLICATION_CREDENTIAL_SECRET": SECRET, "RP_COMMITMENTS_CONCURRENCY": value}
    for read in (lambda: OpenStackConfig.from_env(env), lambda: concurrency_override(env)):
        with pytest.raises(ConfigurationError) as error:
            read()
        assert str(error.value) == says


def test_concurrency_override() -> None:
    assert concurrency_override({}) == {}
    assert concurrency_override({"RP_COMMITMENTS_CONCURRENCY": " 4 "}) == {"concurrency": 4}


@pytest.mark.parametrize(("value", "says"), [
    ("soon", "RP_COMMITMENTS_LEASE_SECONDS must be a number (seconds)"),
    ("0", "RP_COMMITMENTS_LEASE_SECONDS must be a positive finite number"),
    ("nan", "RP_COMMITMENTS_LEASE_SECONDS must be a positive finite number"),
])
def test_a_lease_term_that_cannot_be_used_names_the_variable_not_the_value(value, says) -> None:
    with pytest.raises(ConfigurationError) as error:
        SyncSettings.from_env({"RP_COMMITMENTS_LEASE_SECONDS": value})
    assert str(error.value) == says
    assert SyncSettings.from_env({"RP_COMMITMENTS_LEASE_SECONDS": "30"}).lease_seconds == 30.0
