"""Filters of aggregates and capacity, pure: `member_of` (1.3; repeated 1.24; forbidden `!` 1.32) and
`resources` (1.4) parsed as Placement parses them (its 400 texts), for GET /resource_providers and for
allocation candidates' groups alike, and matched as a predicate on a provider read. (`in_tree` is a read
of one tree, `store.tree`; the traits filter `required` has its own functions.)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chalicelib.placement import errors
from chalicelib.placement.models import Provider
from chalicelib.placement.uuids import is_uuid_like


@dataclass(frozen=True)
class MemberOf:
    """Each set of `required` is one member_of: the provider is in at least one of its aggregates; they are
    ANDed. `forbidden`: the provider is in none of these."""

    required: tuple[frozenset[str], ...] = ()
    forbidden: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.required or self.forbidden)

    def matches(self, aggregates: frozenset[str]) -> bool:
        return all(aggregates & any_of for any_of in self.required) and not aggregates & self.forbidden


def parse_member_of_value(value: str) -> tuple[frozenset[str], frozenset[str]]:
    """One member_of value: `<uuid>`, `in:<uuid>,<uuid>`, `!<uuid>` or `!in:<uuid>,<uuid>` ->
    (required any-of, forbidden)."""
    if "," in value and not (value.startswith("in:") or value.startswith("!in:")):
        raise errors.Invalid("Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword "
                             f"using the valid microversion. Got: {value}")
    required: frozenset[str] = frozenset()
    forbidden: frozenset[str] = frozenset()
    if value.startswith("!in:"):
        forbidden = frozenset(value[4:].split(","))
    elif value.startswith("!"):
        forbidden = frozenset([value[1:]])
    elif value.startswith("in:"):
        required = frozenset(value[3:].split(","))
    else:
        required = frozenset([value])
    for aggregate in sorted(required | forbidden):
        if not is_uuid_like(aggregate):
            raise errors.Invalid("Invalid query string parameters: Expected 'member_of' parameter to contain valid "
                                 f"UUID(s). Got: {aggregate}")
    return required, forbidden


def parse_member_of(values: Sequence[str], *, several: bool, forbidden: bool, suffix: str = "") -> MemberOf:
    """Every member_of`suffix` value of a request; `several` from 1.24, `forbidden` from 1.32."""
    if not several and len(values) > 1:
        raise errors.Invalid(f"Multiple member_of{suffix} parameters are not supported")
    required_sets: list[frozenset[str]] = []
    forbidden_all: set[str] = set()
    for value in values:
        required, refused = parse_member_of_value(value)
        if required:
            required_sets.append(required)
        if refused:
            if not forbidden:
                raise errors.Invalid(f"Forbidden member_of{suffix} parameters are not supported in the specified "
                                     "microversion")
            forbidden_all |= refused
    return MemberOf(tuple(required_sets), frozenset(forbidden_all))


_RESOURCES_FORM = ("Badly formed resources parameter. Expected resources query string parameter in form: "
                   "?resources=VCPU:2,MEMORY_MB:1024. Got: {}.")


def parse_resources(value: str) -> dict[str, int]:
    """`VCPU:2,MEMORY_MB:1024` -> {class: amount}, with Placement's 400 texts (an unknown class is checked
    by the caller, which knows the custom classes)."""
    if value.strip() == "":
        raise errors.Invalid(_RESOURCES_FORM.format("empty string"))
    result: dict[str, int] = {}
    for part in value.split(","):
        try:
            name, raw = part.split(":")
        except ValueError:
            raise errors.Invalid(_RESOURCES_FORM.format(part)) from None
        try:
            amount = int(raw)
        except ValueError:
            raise errors.Invalid(f"Requested resource {name} expected positive integer amount. Got: {raw}.") from None
        if amount < 1:
            raise errors.Invalid(f"Requested resource {name} requires amount >= 1. Got: {amount}.")
        result[name] = amount
    return result


def unknown_class(name: str) -> errors.Invalid:
    return errors.Invalid(f"Invalid resource class in resources parameter: No such resource class {name}.")


def has_room(provider: Provider, resources: Mapping[str, int]) -> bool:
    """Placement's capacity rule for each class: an inventory of it, min_unit <= amount <= max_unit, amount a
    multiple of step_size, and used + amount <= (total - reserved) * allocation_ratio."""
    for rc, amount in resources.items():
        inventory = provider.inventories.get(rc)
        if inventory is None:
            return False
        if not inventory.min_unit <= amount <= inventory.max_unit or amount % inventory.step_size:
            return False
        if provider.used(rc) + amount > inventory.capacity:
            return False
    return True


def indexed_class(resources: Mapping[str, int]) -> str:
    """The class whose resource-class index a `resources` list reads its providers from: the first custom class
    it names (an operator's class, usually held by few providers), else the first it names."""
    return next((rc for rc in resources if rc.startswith("CUSTOM_")), next(iter(resources)))


def narrowest(required: Sequence[frozenset[str]]) -> frozenset[str] | None:
    """The member_of set whose aggregates to read to find the candidates (the one naming fewest), or None."""
    return min(required, key=lambda s: (len(s), sorted(s))) if required else None

