"""Every Placement route up to 1.39 names the rule upstream's handler enforces; the override file
and the settings that name the policy."""

from __future__ import annotations

import json

import pytest

from chalicelib.config import ConfigurationError, PlacementAuthSettings
from chalicelib.placement.policy import (
    OPERATIONS,
    UnknownOperation,
    load_policy,
    operation_for,
    operation_for_request,
    read_overrides,
    rule_for,
    target_for,
)
from chalicelib.placement.policy.defaults import RULES_BY_NAME

# Upstream's ROUTE_DECLARATIONS (placement/handler.py) with the rule each handler passes to context.can.
UPSTREAM = {
    ("GET", "/resource_classes"): "placement:resource_classes:list",
    ("POST", "/resource_classes"): "placement:resource_classes:create",
    ("GET", "/resource_classes/{name}"): "placement:resource_classes:show",
    ("PUT", "/resource_classes/{name}"): "placement:resource_classes:update",
    ("DELETE", "/resource_classes/{name}"): "placement:resource_classes:delete",
    ("GET", "/resource_providers"): "placement:resource_providers:list",
    ("POST", "/resource_providers"): "placement:resource_providers:create",
    ("GET", "/resource_providers/{uuid}"): "placement:resource_providers:show",
    ("PUT", "/resource_providers/{uuid}"): "placement:resource_providers:update",
    ("DELETE", "/resource_providers/{uuid}"): "placement:resource_providers:delete",
    ("GET", "/resource_providers/{uuid}/inventories"): "placement:resource_providers:inventories:list",
    ("POST", "/resource_providers/{uuid}/inventories"): "placement:resource_providers:inventories:create",
    ("PUT", "/resource_providers/{uuid}/inventories"): "placement:resource_providers:inventories:update",
    ("DELETE", "/resource_providers/{uuid}/inventories"): "placement:resource_providers:inventories:delete",
    ("GET", "/resource_providers/{uuid}/inventories/{resource_class}"): "placement:resource_providers:inventories:show",
    ("PUT", "/resource_providers/{uuid}/inventories/{resource_class}"):
        "placement:resource_providers:inventories:update",
    ("DELETE", "/resource_providers/{uuid}/inventories/{resource_class}"):
        "placement:resource_providers:inventories:delete",
    ("GET", "/resource_providers/{uuid}/usages"): "placement:resource_providers:usages",
    ("GET", "/resource_providers/{uuid}/aggregates"): "placement:resource_providers:aggregates:list",
    ("PUT", "/resource_providers/{uuid}/aggregates"): "placement:resource_providers:aggregates:update",
    ("GET", "/resource_providers/{uuid}/allocations"): "placement:resource_providers:allocations:list",
    ("POST", "/allocations"): "placement:allocations:manage",
    ("GET", "/allocations/{consumer_uuid}"): "placement:allocations:list",
    ("PUT", "/allocations/{consumer_uuid}"): "placement:allocations:update",
    ("DELETE", "/allocations/{consumer_uuid}"): "placement:allocations:delete",
    ("GET", "/allocation_candidates"): "placement:allocation_candidates:list",
    ("GET", "/traits"): "placement:traits:list",
    ("GET", "/traits/{name}"): "placement:traits:show",
    ("PUT", "/traits/{name}"): "placement:traits:update",
    ("DELETE", "/traits/{name}"): "placement:traits:delete",
    ("GET", "/resource_providers/{uuid}/traits"): "placement:resource_providers:traits:list",
    ("PUT", "/resource_providers/{uuid}/traits"): "placement:resource_providers:traits:update",
    ("DELETE", "/resource_providers/{uuid}/traits"): "placement:resource_providers:traits:delete",
    ("GET", "/usages"): "placement:usages",
    ("POST", "/reshaper"): "placement:reshaper:reshape",
}


def test_the_table_is_upstreams_routes_and_each_names_a_known_rule():
    assert {(op.method, op.path): op.rule for op in OPERATIONS} == UPSTREAM
    assert all(op.rule in RULES_BY_NAME for op in OPERATIONS)


@pytest.mark.parametrize(("method", "path"), sorted(UPSTREAM))
def test_each_route_by_template_with_and_without_the_prefix(method, path):
    assert rule_for(method, "/placement" + path) == UPSTREAM[(method, path)]
    assert rule_for(method.lower(), path) == UPSTREAM[(method, path)]


def test_placeholder_names_a_trailing_slash_and_head_do_not_matter():
    assert rule_for("PUT", "/placement/resource_providers/{rp}/inventories/{rc}") == \
        "placement:resource_providers:inventories:update"
    assert rule_for("GET", "/placement/traits/") == "placement:traits:list"
    assert rule_for("HEAD", "/placement/resource_providers/{uuid}") == "placement:resource_providers:show"


def test_the_version_document_enforces_nothing_and_an_undeclared_route_is_an_error():
    assert rule_for("GET", "/placement/") is None and rule_for("GET", "/placement") is None
    with pytest.raises(UnknownOperation):
        rule_for("PATCH", "/placement/resource_providers/{uuid}")
    with pytest.raises(UnknownOperation):
        rule_for("GET", "/placement/nothing")


def test_concrete_request_paths():
    found = operation_for_request("GET", "/placement/resource_providers/8a2c/inventories/VCPU")
    assert found is not None and found.rule == "placement:resource_providers:inventories:show"
    found = operation_for_request("PUT", "/placement/traits/CUSTOM_X")
    assert found is not None and found.rule == "placement:traits:update"
    found = operation_for_request("DELETE", "/placement/resource_providers/8a2c/traits")
    assert found is not None and found.rule == "placement:resource_providers:traits:delete"
    assert operation_for_request("GET", "/placement/") is None
    with pytest.raises(UnknownOperation):
        operation_for_request("GET", "/placement/resource_providers/a/b/c/d")


def test_targets_are_the_callers_own_but_for_total_usages():
    caller = {"project_id": "p-1", "user_id": "u-1", "roles": []}
    shown = operation_for("GET", "/resource_providers/{uuid}")
    usages = operation_for("GET", "/usages")
    assert shown is not None and usages is not None
    assert target_for(shown, caller) == {"project_id": "p-1", "user_id": "u-1"}
    assert target_for(usages, caller, {"project_id": "p-9"}) == {"project_id": "p-9"}
    assert target_for(usages, caller) == {"project_id": None}


# --- settings and the override file ----------------------------------------------------------------------


def test_settings_defaults_and_choices():
    settings = PlacementAuthSettings.from_env({})
    assert (settings.auth, settings.policy_mode, settings.policy_file, settings.keystone) == (
        "keys", "secure", None, False)
    other = PlacementAuthSettings.from_env({"RP_PLACEMENT_AUTH": "keystone", "RP_PLACEMENT_POLICY": "legacy",
                                            "RP_PLACEMENT_POLICY_FILE": "/etc/p.yaml"})
    assert (other.auth, other.policy_mode, other.policy_file, other.keystone) == (
        "keystone", "legacy", "/etc/p.yaml", True)
    with pytest.raises(ConfigurationError, match="RP_PLACEMENT_AUTH must be one of: keys, keystone"):
        PlacementAuthSettings.from_env({"RP_PLACEMENT_AUTH": "tokens"})
    with pytest.raises(ConfigurationError, match="RP_PLACEMENT_POLICY must be one of: secure, legacy"):
        PlacementAuthSettings.from_env({"RP_PLACEMENT_POLICY": "open"})


def test_the_override_file_in_policy_yaml_form(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text('# an operator\'s file\n"placement:traits:list": "@"\nplacement:traits:show: >-\n'
                    '  role:reader and\n  project_id:%(project_id)s\n')
    assert read_overrides(path) == {"placement:traits:list": "@",
                                    "placement:traits:show": "role:reader and project_id:%(project_id)s"}
    policy = load_policy(PlacementAuthSettings("keystone", "legacy", str(path)))
    assert policy.mode == "legacy"
    assert policy.enforce("placement:traits:list", {"roles": [], "project_id": "p"}, {})
    json_file = tmp_path / "policy.json"
    json_file.write_text(json.dumps({"placement:usages": "!"}))
    assert read_overrides(json_file) == {"placement:usages": "!"}
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert read_overrides(empty) == {}


@pytest.mark.parametrize(("content", "says"), [
    ("secret-looking: [unclosed", "is not YAML"),
    ("- a list\n", "must hold a mapping"),
    ("rule: [role:admin]\n", "every rule name and check string must be a string"),
    ("1: role:admin\n", "every rule name and check string must be a string"),
])
def test_an_unusable_override_file_names_the_variable_never_the_content(tmp_path, content, says):
    path = tmp_path / "policy.yaml"
    path.write_text(content)
    with pytest.raises(ConfigurationError, match=says) as raised:
        read_overrides(path)
    assert "RP_PLACEMENT_POLICY_FILE" in str(raised.value)
    assert "secret-looking" not in str(raised.value) and raised.value.__cause__ is None


def test_a_missing_override_file():
    with pytest.raises(ConfigurationError, match="RP_PLACEMENT_POLICY_FILE names a file that cannot be read"):
        load_policy(PlacementAuthSettings("keys", "secure", "/nonexistent/policy.yaml"))
