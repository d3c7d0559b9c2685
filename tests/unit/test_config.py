"""Settings are read in one typed place; a value that cannot be used names its variable, never the value."""

import pytest

from chalicelib.config import (
    ConfigurationError,
    FleetSettings,
    Settings,
    env_choice,
    env_float,
    env_int,
    read_every_setting,
)


def test_defaults_suit_a_deployed_stage():
    settings = Settings.from_env({})
    assert (settings.table_name, settings.region, settings.endpoint_url) == ("resource-provisioning", "us-east-1",
                                                                              None)
    assert (settings.auth_cache_seconds, settings.idempotency_ttl_days) == (30, 8)
    assert (settings.connect_timeout, settings.read_timeout, settings.max_attempts) == (2.0, 5.0, 3)
    fleet = FleetSettings.from_env({})
    assert (fleet.event_bus, fleet.events_endpoint, fleet.drift_interval_seconds) == ("default", None, 900.0)


def test_bounds_that_protect_an_invariant_are_applied():
    assert Settings.from_env({"RP_AUTH_CACHE_SECONDS": "3600"}).auth_cache_seconds == 60
    assert Settings.from_env({"RP_IDEMPOTENCY_TTL_DAYS": "1"}).idempotency_ttl_days == 7
    assert Settings.from_env({"AWS_ENDPOINT_URL": "http://x:1"}).endpoint_url == "http://x:1"
    assert Settings.from_env({"AWS_ENDPOINT_URL": "http://x:1",
                              "AWS_ENDPOINT_URL_DYNAMODB": "http://y:2"}).endpoint_url == "http://y:2"


@pytest.mark.parametrize(("variable", "value", "says"), [
    ("RP_AUTH_CACHE_SECONDS", "thirty", "RP_AUTH_CACHE_SECONDS must be a whole number"),
    ("RP_AUTH_CACHE_SECONDS", "٣", "RP_AUTH_CACHE_SECONDS must be a whole number"),
    ("RP_AUTH_CACHE_SECONDS", "-1", "RP_AUTH_CACHE_SECONDS must be at least 0"),
    ("RP_STORE_MAX_ATTEMPTS", "0", "RP_STORE_MAX_ATTEMPTS must be at least 1"),
    ("RP_STORE_MAX_ATTEMPTS", "2.5", "RP_STORE_MAX_ATTEMPTS must be a whole number"),
    ("RP_STORE_READ_TIMEOUT", "soon", "RP_STORE_READ_TIMEOUT must be a number (seconds)"),
    ("RP_STORE_READ_TIMEOUT", "0", "RP_STORE_READ_TIMEOUT must be a positive finite number"),
    ("RP_STORE_CONNECT_TIMEOUT", "nan", "RP_STORE_CONNECT_TIMEOUT must be a positive finite number"),
    ("RP_IDEMPOTENCY_TTL_DAYS", "1e3", "RP_IDEMPOTENCY_TTL_DAYS must be a whole number"),
    ("RP_STORE_TRANSPORT", "urllib", "RP_STORE_TRANSPORT must be one of: direct, botocore"),
])
def test_a_bad_value_names_the_variable_and_the_rule_not_the_value(variable, value, says):
    with pytest.raises(ConfigurationError) as raised:
        Settings.from_env({variable: value})
    assert str(raised.value) == says
    assert value not in str(raised.value).replace(variable, "")


def test_readers():
    assert env_int({"N": " 12 "}, "N", 1) == 12
    assert env_int({"N": ""}, "N", 7) == 7
    assert env_float({"F": "0.5"}, "F", 1.0, positive=True) == 0.5
    with pytest.raises(ConfigurationError, match=r"^F must be a finite number$"):
        env_float({"F": "inf"}, "F", 1.0)
    assert env_choice({}, "C", "a", ("a", "b")) == "a"
    with pytest.raises(ConfigurationError, match=r"^C must be one of: a, b$"):
        env_choice({"C": "z"}, "C", "a", ("a", "b"))
    with pytest.raises(ConfigurationError, match=r"^RP_DRIFT_INTERVAL_SECONDS must be a positive finite number$"):
        FleetSettings.from_env({"RP_DRIFT_INTERVAL_SECONDS": "-5"})


@pytest.mark.parametrize(("variable", "value", "says"), [
    ("RP_STORE_READ_TIMEOUT", "soon", "RP_STORE_READ_TIMEOUT must be a number (seconds)"),
    ("RP_DRIFT_INTERVAL_SECONDS", "0", "RP_DRIFT_INTERVAL_SECONDS must be a positive finite number"),
    ("RP_PLACEMENT_AUTH", "ldap", "RP_PLACEMENT_AUTH must be one of: keys, keystone"),
    ("RP_PLACEMENT_POLICY", "open", "RP_PLACEMENT_POLICY must be one of: secure, legacy"),
    ("RP_PLACEMENT_MAX_CANDIDATES", "0", "RP_PLACEMENT_MAX_CANDIDATES must be at least 1"),
    ("RP_PLACEMENT_MAX_CANDIDATES", "many", "RP_PLACEMENT_MAX_CANDIDATES must be a whole number"),
    ("RP_PLACEMENT_KNOWN_INVENTORIES", "-1", "RP_PLACEMENT_KNOWN_INVENTORIES must be at least 0"),
    ("RP_PLACEMENT_KNOWN_CONSUMERS", "-1", "RP_PLACEMENT_KNOWN_CONSUMERS must be at least 0"),
    ("RP_PLACEMENT_CANDIDATE_STRATEGY", "random",
     "RP_PLACEMENT_CANDIDATE_STRATEGY must be one of: depth-first, breadth-first"),
])
def test_every_setting_is_read_at_once_so_a_start_can_refuse_a_bad_one(variable, value, says):
    # Placement's settings are read on its first request when deployed: `make run` reads them all first.
    with pytest.raises(ConfigurationError) as raised:
        read_every_setting({variable: value})
    assert str(raised.value) == says


def test_every_setting_unset_is_readable():
    read_every_setting({})


def test_known_inventories_default_and_off():
    from chalicelib.config import PlacementCacheSettings

    assert PlacementCacheSettings.from_env({}).known_inventories == 4096
    assert PlacementCacheSettings.from_env({"RP_PLACEMENT_KNOWN_INVENTORIES": "0"}).known_inventories == 0


def test_known_consumers_default_and_off():
    from chalicelib.config import PlacementCacheSettings

    assert PlacementCacheSettings.from_env({}).known_consumers == 16384
    assert PlacementCacheSettings.from_env({"RP_PLACEMENT_KNOWN_CONSUMERS": "0"}).known_consumers == 0
