"""Placement's policy: the defaults in one of two modes, an operator's overrides, scope, enforcement.

`secure` enforces the new defaults only (upstream with `[oslo_policy] enforce_new_defaults=True`);
`legacy` ORs each rule's deprecated check into its default, unless the operator overrides the rule
(oslo.policy's `_handle_deprecated_rule`). Overrides replace a rule's check string and may add rules
of their own, referable as `rule:name`; a rule named `default` is what an unknown `rule:` reference
falls back to. Scope is always enforced: a rule declared for project scope refuses a system-scoped
(`system_scope: all`) or domain-scoped credential before its check string is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from chalicelib.placement.policy import checks
from chalicelib.placement.policy.defaults import RULES, RuleDefault

Mode = Literal["secure", "legacy"]
MODES: tuple[Mode, ...] = ("secure", "legacy")


@runtime_checkable
class PolicySubject(Protocol):
    """A caller that can say what policy sees of it (oslo.context's `to_policy_values()`)."""

    def policy_values(self) -> Mapping[str, Any]: ...


class PolicyRefused(Exception):
    """The rule refuses the caller: 403 in Placement's body."""

    def __init__(self, rule: str) -> None:
        self.rule = rule
        # Placement's own text (placement.exception.PolicyNotAuthorized).
        self.detail = f"Policy does not allow {rule} to be performed."
        super().__init__(self.detail)


def token_scope(creds: Mapping[str, Any]) -> str:
    """`system`, `domain` or `project`, as oslo.policy tells a token's scope from its credentials."""
    if creds.get("system") or creds.get("system_scope"):
        return "system"
    if creds.get("domain_id"):
        return "domain"
    return "project"


@dataclass(frozen=True)
class PlacementPolicy:
    mode: Mode = "secure"
    overrides: Mapping[str, str] = field(default_factory=dict)
    _compiled: dict[str, checks.Check] = field(init=False, repr=False, compare=False)
    _scopes: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of: {', '.join(MODES)}")
        compiled = {name: checks.parse(text) for name, text in self.overrides.items()}
        for rule in RULES:
            if rule.name not in compiled:
                compiled[rule.name] = self._default_check(rule)
        object.__setattr__(self, "_compiled", compiled)
        object.__setattr__(self, "_scopes", {rule.name: rule.scope_types for rule in RULES})

    def _default_check(self, rule: RuleDefault) -> checks.Check:
        default = checks.parse(rule.check)
        if rule.deprecated_name is None or rule.deprecated_check is None:
            return default
        deprecated = checks.parse(rule.deprecated_check)
        # An override of the deprecated rule's own name wins over the new default (in either mode),
        # unless it only restates the deprecated check or points at the new rule: oslo.policy's rule
        # for renamed policies, kept so an upstream policy.yaml reads the same here.
        renamed = self.overrides.get(rule.deprecated_name)
        if renamed is not None and rule.deprecated_name != rule.name:
            parsed = checks.parse(renamed)
            if str(parsed) != str(deprecated) and str(parsed) != f"rule:{rule.name}":
                return parsed
        if self.mode == "legacy" and rule.deprecated_check != rule.check:
            return checks.AnyOf((default, deprecated))
        return default

    # --- checks.RuleBook -----------------------------------------------------------------------------

    def compiled(self, name: str) -> checks.Check | None:
        return self._compiled.get(name)

    # --- enforcement ---------------------------------------------------------------------------------

    def check_string(self, name: str) -> str | None:
        """The rule as it is enforced (normalised), for docs and tests; None for an unknown rule."""
        found = self._compiled.get(name)
        return None if found is None else str(found)

    def enforce(self, rule: str, credential: PolicySubject | Mapping[str, Any], target: Mapping[str, Any]) -> bool:
        """Whether the rule lets the credential act on the target; an unknown rule is refused
        (or decided by a `default` rule the overrides define), as oslo.policy fails closed."""
        # A Mapping check first: isinstance against a runtime Protocol inspects its attributes on every call.
        creds = credential if isinstance(credential, Mapping) else credential.policy_values()
        scopes = self._scopes.get(rule, ())
        if scopes and token_scope(creds) not in scopes:
            return False
        check = self._compiled.get(rule)
        if check is None:
            check = self._compiled.get(checks.DEFAULT_RULE)
            if check is None:
                return False
        return checks.evaluate(check, target, creds, self, rule)

    def authorize(self, rule: str, credential: PolicySubject | Mapping[str, Any], target: Mapping[str, Any]) -> None:
        """`enforce`, raising PolicyRefused (403) when it refuses."""
        if not self.enforce(rule, credential, target):
            raise PolicyRefused(rule)
