"""Placement 16.0.0's policy rules and their defaults, as data (pure).

Read from upstream's `placement/policies/*.py`: every rule, its check string, its scope types and,
where upstream declares one, the deprecated rule it replaced. Upstream's deprecated rule is named
`rule:admin_api` (with the `rule:` prefix, as `base.DEPRECATED_ADMIN_POLICY` spells it) and checks
`role:admin`; `legacy` mode ORs it into each rule that names it, as oslo.policy does when
`[oslo_policy] enforce_new_defaults` is False and the rule is not overridden.

Every rule an operation enforces is project-scoped: a system- or domain-scoped token is refused
whatever its roles (oslo.policy 4.5 and later always enforce scope). `project_reader_api` declares
no scope of its own; it is only ever referenced from a project-scoped rule.
"""

from __future__ import annotations

from dataclasses import dataclass

PROJECT = ("project",)

# base.py
ADMIN_API = "admin_api"
SERVICE_API = "service_api"
ADMIN_OR_SERVICE_API = "admin_or_service_api"
PROJECT_READER_API = "project_reader_api"
ADMIN_OR_PROJECT_READER_OR_SERVICE_API = "admin_or_project_reader_or_service_api"

DEPRECATED_ADMIN_NAME = "rule:admin_api"
DEPRECATED_ADMIN_CHECK = "role:admin"

_ADMIN_OR_SERVICE = f"rule:{ADMIN_OR_SERVICE_API}"


@dataclass(frozen=True)
class RuleDefault:
    name: str
    check: str
    description: str
    scope_types: tuple[str, ...] = PROJECT
    deprecated_name: str | None = None
    deprecated_check: str | None = None


def _base(name: str, check: str, description: str, scope_types: tuple[str, ...] = PROJECT,
          deprecated: bool = True) -> RuleDefault:
    return RuleDefault(name, check, description, scope_types,
                       DEPRECATED_ADMIN_NAME if deprecated else None,
                       DEPRECATED_ADMIN_CHECK if deprecated else None)


def _api(name: str, description: str, check: str = _ADMIN_OR_SERVICE) -> RuleDefault:
    """An operation's rule: project-scoped, no deprecated rule of its own (its base rule has one)."""
    return RuleDefault(f"placement:{name}", check, description)


RULES: tuple[RuleDefault, ...] = (
    # base.py
    _base(ADMIN_API, "role:admin", "Default rule for most placement APIs.", deprecated=False),
    _base(SERVICE_API, "role:service", "Default rule for service-to-service placement APIs."),
    _base(ADMIN_OR_SERVICE_API, "role:admin or role:service", "Default rule for most placement APIs."),
    _base(PROJECT_READER_API, "role:reader and project_id:%(project_id)s",
          "Default rule for Project level reader APIs.", scope_types=()),
    _base(ADMIN_OR_PROJECT_READER_OR_SERVICE_API, f"role:admin or rule:{PROJECT_READER_API} or role:service",
          "Default rule for project level reader APIs."),
    # resource_provider.py
    _api("resource_providers:list", "List resource providers."),
    _api("resource_providers:create", "Create resource provider."),
    _api("resource_providers:show", "Show resource provider."),
    _api("resource_providers:update", "Update resource provider."),
    _api("resource_providers:delete", "Delete resource provider."),
    # resource_class.py
    _api("resource_classes:list", "List resource classes."),
    _api("resource_classes:create", "Create resource class."),
    _api("resource_classes:show", "Show resource class."),
    _api("resource_classes:update", "Update resource class."),
    _api("resource_classes:delete", "Delete resource class."),
    # inventory.py
    _api("resource_providers:inventories:list", "List resource provider inventories."),
    _api("resource_providers:inventories:create", "Create one resource provider inventory."),
    _api("resource_providers:inventories:show", "Show resource provider inventory."),
    _api("resource_providers:inventories:update", "Update resource provider inventory."),
    _api("resource_providers:inventories:delete", "Delete resource provider inventory."),
    # aggregate.py
    _api("resource_providers:aggregates:list", "List resource provider aggregates."),
    _api("resource_providers:aggregates:update", "Update resource provider aggregates."),
    # usage.py
    _api("resource_providers:usages", "List resource provider usages."),
    _api("usages", "List total resource usages for a given project.",
         f"rule:{ADMIN_OR_PROJECT_READER_OR_SERVICE_API}"),
    # trait.py
    _api("traits:list", "List traits."),
    _api("traits:show", "Show trait."),
    _api("traits:update", "Update trait."),
    _api("traits:delete", "Delete trait."),
    _api("resource_providers:traits:list", "List resource provider traits."),
    _api("resource_providers:traits:update", "Update resource provider traits."),
    _api("resource_providers:traits:delete", "Delete resource provider traits."),
    # allocation.py
    _api("allocations:manage", "Manage allocations."),
    _api("allocations:list", "List allocations."),
    _api("allocations:update", "Update allocations."),
    _api("allocations:delete", "Delete allocations."),
    _api("resource_providers:allocations:list", "List resource provider allocations."),
    # allocation_candidate.py
    _api("allocation_candidates:list", "List allocation candidates."),
    # reshaper.py
    _api("reshaper:reshape", "Reshape Inventory and Allocations.", f"rule:{SERVICE_API}"),
)

RULES_BY_NAME: dict[str, RuleDefault] = {rule.name: rule for rule in RULES}
assert len(RULES_BY_NAME) == len(RULES), "a rule is declared twice"
