"""Placement's error codes and its domain errors, in one place.

Rules, the store and the service raise these; none of them knows HTTP. The family's edge
(`chalicelib/placement/family.py`, `STATUS_OF`) turns each into Placement's error answer, once:
an `Invalid` is 400, a `NotFound` 404, a `Conflict` 409, with the error's `code` (shown from 1.23).
`detail` is Placement's own text for the case, because its tests and clients match it.
"""

from __future__ import annotations

# The `code` values (Placement's placement/errors.py names the same strings).
UNDEFINED = "placement.undefined_code"
CONCURRENT_UPDATE = "placement.concurrent_update"
INVENTORY_INUSE = "placement.inventory.inuse"
DUPLICATE_NAME = "placement.duplicate_name"
PROVIDER_IN_USE = "placement.resource_provider.inuse"
PROVIDER_NOT_FOUND = "placement.resource_provider.not_found"
PROVIDER_CANNOT_DELETE_PARENT = "placement.resource_provider.cannot_delete_parent"
QUERY_BAD_VALUE = "placement.query.bad_value"
QUERY_MISSING_VALUE = "placement.query.missing_value"
QUERY_DUPLICATE_KEY = "placement.query.duplicate_key"


class PlacementError(Exception):
    """Something Placement refuses, in its own words (`detail`) with its error `code`."""

    code = UNDEFINED

    def __init__(self, detail: str = "", code: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code


# --- the three kinds an answer distinguishes -----------------------------------------------------


class Invalid(PlacementError):
    """The request can never succeed as sent (a bad inventory, an unknown class, too big a write)."""


class NotFound(PlacementError):
    """What the request names does not exist."""


class Conflict(PlacementError):
    """The request contradicts the current state (in use, taken, over capacity, a stale generation)."""


# --- the cases rules, store and service raise ---------------------------------------------------


class InvalidInventory(Invalid):
    """reserved vs total, or a capacity `int((total - reserved) * allocation_ratio)` out of bounds."""


class UnknownResourceClass(Invalid):
    """An inventory or allocation names a class that does not exist."""


class UnknownProvider(Invalid):
    """An allocation names a provider that does not exist (400 in Placement, not 404)."""


class TooLarge(Invalid):
    """A write DynamoDB cannot do in one transaction (100 items, 4 MB): it can never succeed."""


class ProviderNotFound(NotFound):
    pass


class ConcurrentUpdate(Conflict):
    """Another writer won, more often than the bounded retries allow, or the caller's view is stale."""

    code = CONCURRENT_UPDATE


class ProviderGenerationConflict(ConcurrentUpdate):
    pass


class ConsumerGenerationConflict(ConcurrentUpdate):
    pass


class InventoryInUse(Conflict):
    """A class holding allocations would leave the provider's inventory."""

    code = INVENTORY_INUSE


class CapacityExceeded(Conflict):
    pass


class AllocationInvalid(Conflict):
    """The class is not in the provider's inventory, or the amount violates min_unit/max_unit/step_size."""


class DuplicateName(Conflict):
    """A provider's uuid or name is taken."""

    code = DUPLICATE_NAME


class ProviderInUse(Conflict):
    code = PROVIDER_IN_USE


class ProviderHasChildren(Conflict):
    """A parent is not deleted while it has child providers."""

    code = PROVIDER_CANNOT_DELETE_PARENT


class ClassRenameRefused(Conflict):
    """A custom class held in inventories (or by fleet objects) is not renamed: see docs/placement.md."""


class ResourceClassExists(Conflict):
    pass


class ResourceClassInUse(Conflict):
    pass


class TraitNotFound(NotFound):
    pass


class UnknownTrait(Invalid):
    """A provider's traits or a `required` filter name a trait that does not exist (400, as upstream)."""


class StandardTrait(Invalid):
    """A standard trait cannot be deleted."""


class TraitInUse(Conflict):
    """A custom trait some provider holds cannot be deleted."""
