"""Placement's policy, rule by rule against upstream's defaults (placement 16.0.0 under oslo.policy 6).

The expected outcomes were produced by upstream's own `placement/policies` registered in an oslo.policy
Enforcer (enforce_new_defaults True for `secure`, False for `legacy`; scope always enforced) for the
credential sets below and the target {project_id: p-1, user_id: u-1}; they are written out here as data
so this test needs neither.
"""

from __future__ import annotations

import pytest

from chalicelib.placement.policy import PlacementPolicy, PolicyRefused, authorize
from chalicelib.placement.policy.defaults import RULES

CREDENTIALS: dict[str, dict[str, object]] = {
    "admin": {"roles": ["admin"], "project_id": "admin-project"},
    "service": {"roles": ["service"], "project_id": "service-project"},
    "project_admin": {"roles": ["admin", "member", "reader"], "project_id": "p-1"},
    "project_member": {"roles": ["member", "reader"], "project_id": "p-1"},
    "project_reader": {"roles": ["reader"], "project_id": "p-1"},
    "project_no_role": {"roles": [], "project_id": "p-1"},
    "project_other_role": {"roles": ["creator"], "project_id": "p-1"},
    "alt_project_admin": {"roles": ["admin", "member", "reader"], "project_id": "p-2"},
    "alt_project_member": {"roles": ["member", "reader"], "project_id": "p-2"},
    "alt_project_reader": {"roles": ["reader"], "project_id": "p-2"},
    "system_admin": {"roles": ["admin", "member", "reader"], "system_scope": "all"},
    "system_reader": {"roles": ["reader"], "system_scope": "all"},
    "system_service": {"roles": ["service"], "system_scope": "all"},
    "domain_admin": {"roles": ["admin"], "domain_id": "d-1"},
    "unscoped": {"roles": []},
}
TARGET = {"project_id": "p-1", "user_id": "u-1"}

ADMINS = {"admin", "project_admin", "alt_project_admin"}
ADMIN_OR_SERVICE = ADMINS | {"service"}
READERS_OF_P1 = {"project_admin", "project_member", "project_reader"}

# rule -> (who passes in secure mode, who passes in legacy mode); everyone else is refused.
EXPECTED: dict[str, tuple[set[str], set[str]]] = {
    "admin_api": (ADMINS, ADMINS),
    "service_api": ({"service"}, ADMIN_OR_SERVICE),
    "admin_or_service_api": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    # No scope of its own, so legacy's `or role:admin` lets a system or domain admin through here; the
    # rules that use it are project-scoped.
    "project_reader_api": (READERS_OF_P1, READERS_OF_P1 | ADMINS | {"system_admin", "domain_admin"}),
    "admin_or_project_reader_or_service_api": (ADMIN_OR_SERVICE | READERS_OF_P1, ADMIN_OR_SERVICE | READERS_OF_P1),
    "placement:resource_providers:list": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:create": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:show": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:update": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:delete": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_classes:list": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_classes:create": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_classes:show": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_classes:update": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_classes:delete": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:inventories:list": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:inventories:create": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:inventories:show": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:inventories:update": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:inventories:delete": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:aggregates:list": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:aggregates:update": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:usages": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:usages": (ADMIN_OR_SERVICE | READERS_OF_P1, ADMIN_OR_SERVICE | READERS_OF_P1),
    "placement:traits:list": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:traits:show": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:traits:update": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:traits:delete": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:traits:list": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:traits:update": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:traits:delete": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:allocations:manage": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:allocations:list": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:allocations:update": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:allocations:delete": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:resource_providers:allocations:list": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:allocation_candidates:list": (ADMIN_OR_SERVICE, ADMIN_OR_SERVICE),
    "placement:reshaper:reshape": ({"service"}, ADMIN_OR_SERVICE),
}


def test_the_table_holds_every_upstream_rule_and_no_other():
    assert [rule.name for rule in RULES] == list(EXPECTED)
    assert len(RULES) == 38


def test_every_rule_an_operation_enforces_is_project_scoped():
    assert {rule.name for rule in RULES if rule.scope_types != ("project",)} == {"project_reader_api"}


@pytest.mark.parametrize("mode", ["secure", "legacy"])
@pytest.mark.parametrize("rule", list(EXPECTED))
def test_rule_by_rule_who_passes_and_who_is_refused(rule, mode):
    policy = PlacementPolicy(mode)
    passed = {name for name, creds in CREDENTIALS.items()
              if policy.enforce(rule, {"user_id": "u-x", **creds}, TARGET)}
    assert passed == EXPECTED[rule][0 if mode == "secure" else 1]


def test_legacy_ors_the_deprecated_admin_check_into_the_new_default():
    assert PlacementPolicy("secure").check_string("service_api") == "role:service"
    assert PlacementPolicy("legacy").check_string("service_api") == "(role:service or role:admin)"
    # admin_api has no deprecated rule: the same in both modes.
    assert PlacementPolicy("legacy").check_string("admin_api") == "role:admin"


def test_an_unknown_rule_is_refused():
    assert not PlacementPolicy().enforce("placement:nothing", CREDENTIALS["project_admin"], TARGET)


def test_a_credential_object_says_what_policy_sees():
    class Caller:
        def policy_values(self):
            return {"roles": ["service"], "project_id": "svc"}

    assert PlacementPolicy().enforce("placement:reshaper:reshape", Caller(), TARGET)


# --- overrides (RP_PLACEMENT_POLICY_FILE) ----------------------------------------------------------------

OPEN = {rule.name: "@" for rule in RULES if rule.name != "admin_api"}  # the *-policy.yaml gabbits' fixture


@pytest.mark.parametrize("mode", ["secure", "legacy"])
def test_an_open_policy_lets_a_caller_without_roles_through_but_not_past_admin_api(mode):
    policy = PlacementPolicy(mode, OPEN)
    nobody = CREDENTIALS["project_no_role"]
    assert all(policy.enforce(name, nobody, TARGET) for name in OPEN)
    assert not policy.enforce("admin_api", nobody, TARGET)
    # Scope still holds: the rules stay declared for projects.
    assert not policy.enforce("placement:resource_providers:list", CREDENTIALS["system_admin"], TARGET)


def test_an_overridden_rule_is_not_ored_with_its_deprecated_check_in_legacy():
    policy = PlacementPolicy("legacy", {"service_api": "role:service"})
    assert not policy.enforce("service_api", CREDENTIALS["project_admin"], TARGET)
    assert not policy.enforce("placement:reshaper:reshape", CREDENTIALS["project_admin"], TARGET)


def test_overrides_may_add_rules_and_a_default_for_unknown_references():
    policy = PlacementPolicy("secure", {"placement:traits:list": "rule:mine", "mine": "role:member"})
    assert policy.enforce("placement:traits:list", CREDENTIALS["project_member"], TARGET)
    assert not policy.enforce("placement:traits:list", CREDENTIALS["project_reader"], TARGET)
    fallback = PlacementPolicy("secure", {"placement:traits:list": "rule:undefined", "default": "role:reader"})
    assert fallback.enforce("placement:traits:list", CREDENTIALS["project_reader"], TARGET)
    assert fallback.enforce("placement:nothing", CREDENTIALS["project_reader"], TARGET)
    assert not PlacementPolicy("secure", {"placement:traits:list": "rule:undefined"}).enforce(
        "placement:traits:list", CREDENTIALS["project_admin"], TARGET)


def test_an_override_of_the_deprecated_rules_own_name_replaces_the_rules_that_name_it():
    # oslo.policy's rename handling: `rule:admin_api` is the deprecated rule's name upstream.
    policy = PlacementPolicy("secure", {"rule:admin_api": "role:member"})
    assert policy.enforce("service_api", CREDENTIALS["project_member"], TARGET)
    assert policy.check_string("admin_api") == "role:admin"  # admin_api names no deprecated rule
    # Restating the deprecated check changes nothing.
    assert PlacementPolicy("secure", {"rule:admin_api": "role:admin"}).check_string("service_api") == "role:service"


def test_a_self_referring_override_refuses_rather_than_recursing():
    policy = PlacementPolicy("secure", {"placement:traits:list": "rule:loop or role:admin", "loop": "rule:loop"})
    assert not policy.enforce("placement:traits:list", CREDENTIALS["project_admin"], TARGET)


# --- the operation table ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "creds", "query", "allowed"), [
    ("GET", "/placement/usages", "project_reader", {"project_id": "p-1"}, True),
    ("GET", "/placement/usages", "alt_project_reader", {"project_id": "p-1"}, False),
    ("GET", "/placement/usages", "alt_project_admin", {"project_id": "p-1"}, True),
    ("GET", "/placement/usages", "project_reader", {}, False),
    ("GET", "/placement/resource_providers", "project_reader", None, False),
    ("POST", "/placement/reshaper", "project_admin", None, False),
    ("POST", "/placement/reshaper", "service", None, True),
    ("GET", "/placement/", "unscoped", None, True),
])
def test_authorize_enforces_the_operations_rule_on_its_target(method, path, creds, query, allowed):
    policy = PlacementPolicy()
    if allowed:
        authorize(policy, method, path, CREDENTIALS[creds], query)
    else:
        with pytest.raises(PolicyRefused, match=r"Policy does not allow placement:\S+ to be performed\."):
            authorize(policy, method, path, CREDENTIALS[creds], query)
