"""Placement's policy (placement 16.0.0's rules and defaults), its check language, and which rule each
operation enforces (decision 0040). Nothing here reads the network; `load_policy` reads the override
file once. Wiring, in the Placement family, after the caller is authenticated:

    policy = load_policy(PlacementAuthSettings.from_env())       # once, on the first Placement request
    authorize(policy, request.method, route_template, credential, request.query)   # PolicyRefused: 403
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.placement.policy.enforcer import MODES, PlacementPolicy, PolicyRefused, PolicySubject, token_scope
from chalicelib.placement.policy.loading import load_policy, read_overrides
from chalicelib.placement.policy.operations import (
    OPERATIONS,
    Operation,
    UnknownOperation,
    operation_for,
    operation_for_request,
    rule_for,
    target_for,
    target_of_rule,
)

__all__ = [
    "MODES", "OPERATIONS", "Operation", "PlacementPolicy", "PolicyRefused", "PolicySubject", "UnknownOperation",
    "authorize", "load_policy", "operation_for", "operation_for_request", "read_overrides", "rule_for",
    "target_for", "target_of_rule", "token_scope",
]


def authorize(policy: PlacementPolicy, method: str, path_template: str,
              credential: PolicySubject | Mapping[str, Any], query: Mapping[str, str] | None = None) -> None:
    """Enforce the rule of the operation at `method path_template` as upstream's handler does, with its
    target; PolicyRefused when refused; nothing for the version document. UnknownOperation for a
    template no Placement route declares."""
    operation = operation_for(method, path_template)
    if operation is None:
        return
    creds = credential if isinstance(credential, Mapping) else credential.policy_values()
    policy.authorize(operation.rule, creds, target_for(operation, creds, query))
