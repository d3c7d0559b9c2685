"""Transaction items for a pool's Placement resource provider (create it, or set its inventories).

Placement's store executes its own transactions; fleet needs the same items inside its one apply
transaction, so they come from Placement's own item builders (chalicelib/placement/items.py: the item
layout and its invariants stay Placement's), with the conditions Placement states: a new provider's
uuid and name are free; an existing one is unchanged since it was read (its `version`). Each
inventory write bumps the generation and the version, as Placement's own inventory writes do, and
writes the resource-class index items of the classes it adds or removes (`items.class_index_updates`:
allocation candidates find providers by class through them).

Every provider fleet writes is linked to its tenant's fleet version (`Provider.linked_version`), so
Placement's own inventory writes and deletes of it move that version in their transaction (an apply
planned before them is CONFIG_DRIFT) whatever the provider is named: a rename through Placement
cannot untie a pool from its fleet. A provider written before the link existed gets it the next time
fleet writes it (`provider_items` adds the link whenever it is missing; fleet's planner asks for a
write when the pool's capacity differs from the provider's). Fleet's own apply moves the version
itself (its last item), so these items do not bump it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from chalicelib.compute.errors import InvalidState
from chalicelib.fleet.keys import fleet_version_key
from chalicelib.placement import items
from chalicelib.placement.models import Inventory, Provider
from chalicelib.store.ops import Op


def _inventories(read: Provider | None, classes: Mapping[str, tuple[int, int]]) -> dict[str, Inventory]:
    """Total and reserved from fleet; every other field as it was (Placement's defaults for a new class)."""
    current = read.inventories if read is not None else {}
    return {rc: replace(current[rc], total=total, reserved=reserved) if rc in current
            else Inventory(total=total, reserved=reserved) for rc, (total, reserved) in classes.items()}


def provider_classes(provider: Provider) -> dict[str, tuple[int, int]]:
    return {rc: (inv.total, inv.reserved) for rc, inv in provider.inventories.items()}


def provider_ops(table: str, read: Provider | None, uuid: str, name: str,
                 classes: Mapping[str, tuple[int, int]], *, tenant: str) -> tuple[list[Op], dict[str, int]]:
    """(named operations, custom class reference deltas) making the provider hold `classes`, linked to
    `tenant`'s fleet version; no operations when it already does both. A cancellation names `provider`
    (uuid taken, or changed since read) or `name_claim` (another provider holds the pool's name).

    The deltas are returned, not written, because one transaction may touch a
    custom class once only: the caller adds them up over every provider.
    """
    link = fleet_version_key(tenant)
    inventories = _inventories(read, classes)
    if read is None:
        created = Provider(uuid=uuid, name=name, generation=1, version=1, inventories=inventories,
                           linked_version=link, created_at=items.now_us())
        return ([items.provider_put(table, created, "attribute_not_exists(pk)"), items.name_claim(table, name, uuid),
                 *items.class_index_updates(table, uuid, {}, inventories)],
                items.class_ref_deltas({}, inventories))
    same_classes = provider_classes(read) == dict(classes)
    if same_classes and read.linked_version == link:
        return [], {}
    condition, values = items.unchanged(read.version)
    if same_classes:  # only the link is new: the provider's visible state stays as it is
        linked = replace(read, linked_version=link, version=read.version + 1)
        return [items.provider_put(table, linked, condition, values)], {}
    in_use = [rc for rc in read.inventories if rc not in classes and read.used(rc)]
    if in_use:  # Placement's own rule (placement.inventory.inuse): a class holding allocations stays
        raise InvalidState("The pool's provider holds allocations of a class its capacity no longer lists.",
                           field=f"/capacity/{in_use[0]}")
    # The inventory version moves as Placement's own inventory writes move it: allocation writes are
    # conditioned on it (a claim decided on the old capacity must not land on the new one).
    written = replace(read, inventories=inventories, generation=read.generation + 1, version=read.version + 1,
                      inventory_version=read.inventory_version + 1, linked_version=link)
    return ([items.provider_put(table, written, condition, values),
             *items.class_index_updates(table, uuid, read.inventories, inventories)],
            items.class_ref_deltas(read.inventories, inventories))


def provider_items(table: str, read: Provider | None, uuid: str, name: str,
                   classes: Mapping[str, tuple[int, int]], *, tenant: str,
                   ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """`provider_ops` as bare requests (for a transaction not yet built of named operations)."""
    ops, deltas = provider_ops(table, read, uuid, name, classes, tenant=tenant)
    return [o.request for o in ops], deltas


def class_ref_ops(table: str, deltas: Mapping[str, int]) -> list[Op]:
    return items.class_ref_updates(table, deltas)


def class_ref_items(table: str, deltas: Mapping[str, int]) -> list[dict[str, Any]]:
    return [o.request for o in class_ref_ops(table, deltas)]
