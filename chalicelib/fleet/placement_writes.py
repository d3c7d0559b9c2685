"""Transaction items for a pool's Placement resource provider (create it, or set its inventories).

Placement's store executes its own transactions; fleet needs the same items
inside its one apply transaction, so this builds them with Placement's own item
builder (`PlacementStore.provider_put`, `class_ref_updates`: the item layout stays
Placement's) and the conditions Placement states: a new provider's uuid and
name are free; an existing one is unchanged since it was read (its `version`).
Each inventory write bumps the generation and the version, as Placement's own
inventory writes do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from chalicelib.compute.errors import InvalidState
from chalicelib.placement.models import Inventory, Provider
from chalicelib.placement.store import PlacementStore, name_key
from chalicelib.store.codec import to_item


def _inventories(read: Provider | None, classes: Mapping[str, tuple[int, int]]) -> dict[str, Inventory]:
    """Total and reserved from fleet; every other field as it was (Placement's defaults for a new class)."""
    current = read.inventories if read is not None else {}
    return {rc: replace(current[rc], total=total, reserved=reserved) if rc in current
            else Inventory(total=total, reserved=reserved) for rc, (total, reserved) in classes.items()}


def provider_classes(provider: Provider) -> dict[str, tuple[int, int]]:
    return {rc: (inv.total, inv.reserved) for rc, inv in provider.inventories.items()}


def provider_items(table: str, read: Provider | None, uuid: str, name: str,
                   classes: Mapping[str, tuple[int, int]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """(items, custom class reference deltas) making the provider hold `classes`; no items when it already does.

    The deltas are returned, not written, because one transaction may touch a
    custom class once only: the caller adds them up over every provider.
    """
    builder = PlacementStore(None, table)
    inventories = _inventories(read, classes)
    if read is None:
        created = Provider(uuid=uuid, name=name, generation=1, version=1,
                           inventories=inventories)
        items = [
            builder.provider_put(created, "attribute_not_exists(pk)"),
            {"Put": {"TableName": table, "Item": to_item({"pk": name_key(name)["pk"]["S"], "sk": "-", "uuid": uuid}),
                     "ConditionExpression": "attribute_not_exists(pk)"}},
        ]
        return items, {rc: 1 for rc in inventories if rc.startswith("CUSTOM_")}
    if provider_classes(read) == dict(classes):
        return [], {}
    in_use = [rc for rc in read.inventories if rc not in classes and read.used(rc)]
    if in_use:  # Placement's own rule (placement.inventory.inuse): a class holding allocations stays
        raise InvalidState("The pool's provider holds allocations of a class its capacity no longer lists.",
                           field=f"/capacity/{in_use[0]}")
    written = replace(read, inventories=inventories, generation=read.generation + 1, version=read.version + 1)
    put = builder.provider_put(written, "version = :read", {":read": {"N": str(read.version)}})
    deltas = {rc: 1 for rc in inventories if rc.startswith("CUSTOM_") and rc not in read.inventories}
    deltas.update({rc: -1 for rc in read.inventories if rc.startswith("CUSTOM_") and rc not in inventories})
    return [put], deltas


def class_ref_items(table: str, deltas: Mapping[str, int]) -> list[dict[str, Any]]:
    return PlacementStore(None, table).class_ref_updates(dict(deltas))
