"""Placement's transaction operations, pure: every write of a provider, its name claim and the custom
class reference counts, built one way for Placement's own store and for fleet's apply transaction.

Each builder states the invariants other packages rely on, so no caller can leave one out:
- a provider's inventory write or delete moves the counter the provider is linked to
  (`Provider.linked_version`: fleet links a pool's provider to its tenant's fleet version, so an
  apply planned before the write is CONFIG_DRIFT). The link is an attribute of the provider item that
  only its writer of record sets and Placement's API cannot change: a rename keeps it.
- a provider's name is claimed by a `PLRPNAME#<name>` item (unique names);
- a custom class held in an inventory is counted on the class item (a class in use is not deleted);
- every class a provider holds in its inventories has a `PLRCX#<class>` / `<provider uuid>` item (the
  resource-class index allocation candidates start from), written and deleted with the inventory write
  that adds or removes the class (`class_index_updates`).
- a custom trait held by a provider is counted on its `PLTRAIT` item (a trait in use is not deleted), and a
  provider holding MISC_SHARES_VIA_AGGREGATE has a `PLSHARE` index item (sharing providers by one Query).

Operations are named after the invariant their condition states (`provider`, `name_claim`,
`class_ref:<name>`, `trait_ref:<name>`, `sharing`, `linked_version`), so a cancellation says which one failed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from chalicelib.placement import traits as trait_names
from chalicelib.placement.models import CONSUMER_COUNT, Inventory, Provider
from chalicelib.store.codec import key, to_item, to_value
from chalicelib.store.ops import Op

PROVIDER_INDEX_PK = "PLRP"
CUSTOM_PREFIX = "CUSTOM_"

# The operation names a caller may find in a cancellation.
PROVIDER = "provider"
NAME_CLAIM = "name_claim"
OLD_NAME_CLAIM = "old_name_claim"
LINKED_VERSION = "linked_version"
CLASS_REF = "class_ref:"
CLASS_INDEX = "class_index:"
CLASS_INDEX_PREFIX = "PLRCX#"
PARENT = "parent"  # the parent's `children` counter, moved with its child's create, delete or move
OLD_PARENT = "old_parent"
DESCENDANT = "descendant:"  # a moved provider's descendant (its root rewritten, or checked unchanged)
AGGREGATE_MEMBER = "aggregate_member:"  # a `PLAGG#<aggregate>` membership item
TRAIT_HOLDER = "trait_holder:"  # a `PLTRH#<custom trait>` holder item
OLD_CLASS = "old_class"  # a renamed custom class: it exists and nothing holds it
NEW_CLASS = "new_class"  # the name a class is renamed to: free
TRAIT_REF = "trait_ref:"
SHARING = "sharing"

# Custom traits: one registry item each, counting the providers that hold it (`refs`). Sharing providers
# (those holding MISC_SHARES_VIA_AGGREGATE): one index item each, so the candidates read them by one Query.
TRAIT_PK = "PLTRAIT"
SHARING_PK = "PLSHARE"
SHARES_VIA_AGGREGATE = "MISC_SHARES_VIA_AGGREGATE"
# A provider holds at most this many custom traits, so that deleting it (provider, name claim, one ref per
# custom class and trait, its tree's and link's counters) stays one transaction of at most 100 items.
MAX_CUSTOM_TRAITS = 64
# A provider is a member of at most this many aggregates: each is one `PLAGG#` item, written in the provider's
# transaction while they fit, else one call each around it (docs/decisions/0047).
MAX_AGGREGATES = 1000


def provider_key(uuid: str) -> dict[str, Any]:
    return key(f"PLRP#{uuid}")


def allocation_key(provider_uuid: str, consumer_uuid: str) -> dict[str, Any]:
    return key(f"PLRP#{provider_uuid}", f"ALLOC#{consumer_uuid}")


def name_key(name: str) -> dict[str, Any]:
    return key(f"PLRPNAME#{name}")


def consumer_key(uuid: str) -> dict[str, Any]:
    return key(f"PLCONS#{uuid}")


def consumer_allocations_attributes(allocations: dict[str, dict[str, int]]) -> dict[str, Any]:
    """A consumer item's allocations: `allocs` by provider, and `allocOrder`, the order they were written in
    (a map's keys come back in no defined order; upstream lists a consumer's providers in the order its
    rows were inserted, which is the order the last write named them)."""
    return {"allocs": allocations, "allocOrder": list(allocations)}


def consumer_allocations(item: dict[str, Any]) -> dict[str, dict[str, int]]:
    """A consumer item's allocations in the order they were written (an item written before `allocOrder`:
    its providers sorted)."""
    stored: dict[str, dict[str, Any]] = item.get("allocs") or {}
    written = [rp for rp in item.get("allocOrder") or [] if rp in stored]
    order = written + sorted(set(stored) - set(written))
    return {rp: {rc: int(n) for rc, n in stored[rp].items()} for rp in order}


def usage_sort_key(user: str | None, consumer_type: str | None = None) -> str:
    """A usage item's sk in its project's partition: `-` (the project) and `USER#<user>`, each holding its
    owner's counters for every type and per consumer type (`usage_attribute`). `T#<type>` and
    `UT#<user>#<type>` (`consumer_type` given) are the per-type items written before those counters moved
    onto the owner's item (decision 0049): read and summed, never written. A type has no `#`
    (^[A-Z0-9_]+$ or `unknown`), so the last `#` of a `UT#` key ends the user, and `begins_with(sk, "T#")`
    lists exactly the project's types."""
    if consumer_type is None:
        return f"USER#{user}" if user is not None else "-"
    return f"UT#{user}#{consumer_type}" if user is not None else f"T#{consumer_type}"


def usage_key(project: str, user: str | None, consumer_type: str | None = None) -> dict[str, Any]:
    return key(f"PLUSAGE#{project}", usage_sort_key(user, consumer_type))


USAGE_CONSUMERS = "consumers"  # a counter's consumer count (1.38's `consumer_count`) beside its `rc_<class>`
TYPE_PREFIX = "T#"


UsageMoves = Mapping[tuple[str, str | None, str | None], Mapping[str, int]]  # rules.UsageDeltas


def usage_attribute(consumer_type: str | None, counted: str) -> str:
    """The attribute of one counter on its owner's usage item: `rc_<class>` or `consumers` for every type,
    `T#<type>#rc_<class>` or `T#<type>#consumers` for one consumer type (`counted`: a class or
    CONSUMER_COUNT)."""
    name = USAGE_CONSUMERS if counted == CONSUMER_COUNT else f"rc_{counted}"
    return name if consumer_type is None else f"{TYPE_PREFIX}{consumer_type}#{name}"


def _moves_by_item(deltas: UsageMoves) -> dict[tuple[str, str | None], dict[str, int]]:
    """(project, user) -> attribute -> amount, for each owner's item with something to move."""
    by_item: dict[tuple[str, str | None], dict[str, int]] = {}
    for (project, user, consumer_type), delta in deltas.items():
        for counted, amount in delta.items():
            if amount:
                by_item.setdefault((project, user), {})[usage_attribute(consumer_type, counted)] = amount
    return by_item


def usage_updates(table: str, deltas: UsageMoves) -> list[Op]:
    """The ADDs that move these counters: one Update per owner's item (a project's, a user's), every type's
    counters and the per-type ones together, so a write moves 2 usage items per owner (4 when the owner
    changes), not one per counter."""
    ops = []
    for (project, user), moves in sorted(_moves_by_item(deltas).items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        moved = sorted(moves)
        ops.append(Op(f"usage:{project}:{usage_sort_key(user)}", {"Update": {
            "TableName": table, "Key": usage_key(project, user),
            "UpdateExpression": "ADD " + ", ".join(f"#c{i} :d{i}" for i in range(len(moved))),
            "ExpressionAttributeNames": {f"#c{i}": attribute for i, attribute in enumerate(moved)},
            "ExpressionAttributeValues": {f":d{i}": to_value(moves[attribute]) for i, attribute in enumerate(moved)},
        }}))
    return ops


def usage_items_moved(deltas: UsageMoves) -> int:
    """How many usage items `usage_updates` writes for these counters (one per owner that moves)."""
    return len(_moves_by_item(deltas))


def usage_counters(item: Mapping[str, Any], consumer_type: str | None) -> dict[str, int]:
    """One counter's amounts on a usage item, as stored (zeros and negatives kept, for summing with a
    legacy item's): class -> amount, and `consumers` -> the consumer count. `consumer_type` None: every
    type's counter (also what a legacy per-type item holds)."""
    prefix = "" if consumer_type is None else f"{TYPE_PREFIX}{consumer_type}#"
    found: dict[str, int] = {}
    for attribute, value in item.items():
        if not attribute.startswith(prefix):
            continue
        name = attribute[len(prefix):]
        if name == USAGE_CONSUMERS or name.startswith("rc_"):
            found[name] = int(value)
    return found


def usage_types(item: Mapping[str, Any]) -> set[str]:
    """The consumer types an owner's usage item holds counters of."""
    return {attribute[len(TYPE_PREFIX):].rsplit("#", 1)[0] for attribute in item
            if attribute.startswith(TYPE_PREFIX)}


def class_key(name: str) -> dict[str, Any]:
    return key("PLRC", name)


def class_index_key(resource_class: str, provider_uuid: str) -> dict[str, Any]:
    return key(f"{CLASS_INDEX_PREFIX}{resource_class}", provider_uuid)


@dataclass(frozen=True)
class Membership:
    """A set a provider can be in, each member named by an index item `<prefix><set>` / `<provider uuid>`:
    a hint that it is a member, which readers check on the provider item (decision 0047)."""

    prefix: str      # the index partition's prefix, before the set's name
    operation: str   # the prefix of its items' operation names in a transaction
    kind: str        # the items' `kind`
    label: str       # what a log line calls its items
    of: Callable[[Provider], frozenset[str]]  # the sets the provider item says it is in

    def key(self, name: str, provider_uuid: str) -> dict[str, Any]:
        return key(f"{self.prefix}{name}", provider_uuid)


# An aggregate's members; a custom trait's holders (decision 0053: for traits created since).
AGGREGATES = Membership("PLAGG#", AGGREGATE_MEMBER, "placement-aggregate-member", "aggregate memberships",
                        lambda provider: provider.aggregates)
TRAIT_HOLDERS = Membership("PLTRH#", TRAIT_HOLDER, "placement-trait-holder", "custom trait holder items",
                           lambda provider: custom(provider.traits))


def aggregate_member_key(aggregate: str, provider_uuid: str) -> dict[str, Any]:
    """`PLAGG#<aggregate>` / `<provider>`: one Query of the partition lists an aggregate's members."""
    return AGGREGATES.key(aggregate, provider_uuid)


def trait_key(name: str) -> dict[str, Any]:
    return key(TRAIT_PK, name)


def sharing_key(uuid: str) -> dict[str, Any]:
    return key(SHARING_PK, uuid)


def tree_sort_key(provider: Provider) -> str:
    """gsi1sk of a provider: its uuid for a root, `<root>#<uuid>` inside a tree, so one Query with
    `begins_with(gsi1sk, <root>)` lists a whole tree (in_tree) and roots keep the key they always had."""
    return provider.uuid if provider.root == provider.uuid else f"{provider.root}#{provider.uuid}"


def uuid_of_sort_key(sort_key: str) -> str:
    return sort_key.rsplit("#", 1)[-1]


def now() -> int:
    return int(time.time())


def now_us() -> int:
    """A provider's creation stamp (microseconds: providers created in one second keep their order)."""
    return time.time_ns() // 1000


def _number(value: float) -> Decimal:
    return Decimal(repr(float(value)))


def _inventory_value(inventory: Inventory) -> dict[str, Any]:
    values: dict[str, Any] = inventory.as_dict()
    values["allocation_ratio"] = _number(inventory.allocation_ratio)
    return values


def unchanged(version: int) -> tuple[str, dict[str, Any]]:
    """The condition of a write decided from a read: the item's `version` is still the one read."""
    return "version = :read", {":read": {"N": str(version)}}


CREATE = "attribute_not_exists(pk)"


def provider_put(table: str, provider: Provider, condition: str, values: dict[str, Any] | None = None, *,
                 fenced_by: str | None = None) -> Op:
    """The whole provider item (its link included), written under `condition`, and only while no reshape fences
    the provider (docs/decisions/0041-reshaper-protocol.md); `fenced_by`: the reshape's own final write, which
    needs its fence. The item is written without a fence either way."""
    if fenced_by is None:
        if condition != CREATE:  # a new item has no fence to check
            condition = f"({condition}) AND attribute_not_exists(fence)"
    else:
        condition = f"({condition}) AND fence = :fence"
        values = {**(values or {}), ":fence": {"S": fenced_by}}
    item = to_item({
        "pk": f"PLRP#{provider.uuid}", "sk": "-",
        "kind": "placement-provider", "uuid": provider.uuid, "name": provider.name,
        "generation": provider.generation, "version": provider.version, "invVersion": provider.inventory_version,
        "inv": {rc: _inventory_value(inv) for rc, inv in provider.inventories.items()},
        "use": dict(provider.usages), "updatedAt": now(), "createdUs": provider.created_at,
        "gsi1pk": PROVIDER_INDEX_PK, "gsi1sk": tree_sort_key(provider),
        "parent": provider.parent_uuid, "root": provider.root, "children": provider.children,
        "kids": set(provider.child_uuids) or None,  # a string set: children_change adds and deletes one
        "traits": sorted(provider.traits), "aggs": sorted(provider.aggregates),
        "fresh": True if provider.fresh_child else None,
        "linkedVersion": ({"pk": provider.linked_version[0], "sk": provider.linked_version[1]}
                          if provider.linked_version else None),
    })
    put: dict[str, Any] = {"TableName": table, "Item": item, "ConditionExpression": condition}
    if values:
        put["ExpressionAttributeValues"] = values
    return Op(PROVIDER, {"Put": put})


def name_claim(table: str, name: str, uuid: str) -> Op:
    """Claims `name` for the provider `uuid`; fails when another provider holds it."""
    return Op(NAME_CLAIM, {"Put": {"TableName": table, "Item": to_item({"pk": f"PLRPNAME#{name}", "sk": "-",
                                                                        "uuid": uuid}),
                                   "ConditionExpression": "attribute_not_exists(pk)"}})


def name_release(table: str, name: str) -> Op:
    return Op(OLD_NAME_CLAIM, {"Delete": {"TableName": table, "Key": name_key(name)}})


def class_ref_updates(table: str, deltas: Mapping[str, int]) -> list[Op]:
    """Reference counts of custom classes held in inventories (a class in use cannot be deleted); each class
    once per transaction, so a caller adding several providers' deltas sums them first."""
    return [Op(f"{CLASS_REF}{name}", {"Update": {
        "TableName": table, "Key": class_key(name),
        "UpdateExpression": "ADD refs :d",
        "ConditionExpression": "attribute_exists(pk)",
        "ExpressionAttributeValues": {":d": {"N": str(delta)}},
    }}) for name, delta in sorted(deltas.items()) if delta]


def class_ref_deltas(before: Mapping[str, Inventory], after: Mapping[str, Inventory]) -> dict[str, int]:
    deltas = {rc: 1 for rc in after if rc.startswith(CUSTOM_PREFIX) and rc not in before}
    deltas.update({rc: -1 for rc in before if rc.startswith(CUSTOM_PREFIX) and rc not in after})
    return deltas


def class_index_updates(table: str, uuid: str, before: Mapping[str, Inventory],
                        after: Mapping[str, Inventory]) -> list[Op]:
    """The resource-class index items of a provider whose inventory classes go from `before` to `after`: one
    put per class added, one delete per class removed (unconditional: they are projections of the provider
    put or delete in the same transaction, which carries the condition)."""
    ops = [Op(f"{CLASS_INDEX}{rc}", {"Put": {"TableName": table, "Item": to_item({
        "pk": f"{CLASS_INDEX_PREFIX}{rc}", "sk": uuid, "kind": "placement-class-index"})}})
        for rc in sorted(after) if rc not in before]
    ops += [Op(f"{CLASS_INDEX}{rc}", {"Delete": {"TableName": table, "Key": class_index_key(rc, uuid)}})
            for rc in sorted(before) if rc not in after]
    return ops
def trait_ref_deltas(before: frozenset[str], after: frozenset[str]) -> dict[str, int]:
    """+1 for each custom trait the provider gains, -1 for each it loses (standard traits are not stored)."""
    deltas = dict.fromkeys(custom(after - before), 1)
    deltas.update(dict.fromkeys(custom(before - after), -1))
    return deltas


def trait_ref_updates(table: str, deltas: Mapping[str, int]) -> list[Op]:
    """Reference counts of custom traits held by providers (a trait in use cannot be deleted); the trait must
    exist, so a trait deleted since the decision read cancels the write."""
    return [Op(f"{TRAIT_REF}{name}", {"Update": {
        "TableName": table, "Key": trait_key(name),
        "UpdateExpression": "ADD refs :d",
        "ConditionExpression": "attribute_exists(pk)",
        "ExpressionAttributeValues": {":d": {"N": str(delta)}},
    }}) for name, delta in sorted(deltas.items()) if delta]


def sharing_index(table: str, uuid: str, before: frozenset[str], after: frozenset[str]) -> list[Op]:
    """The provider's sharing index item, put when it gains MISC_SHARES_VIA_AGGREGATE, deleted when it loses it."""
    had, has = SHARES_VIA_AGGREGATE in before, SHARES_VIA_AGGREGATE in after
    if has and not had:
        return [Op(SHARING, {"Put": {"TableName": table, "Item": to_item({"pk": SHARING_PK, "sk": uuid})}})]
    if had and not has:
        return [Op(SHARING, {"Delete": {"TableName": table, "Key": sharing_key(uuid)}})]
    return []


HOLDERS_INDEXED = "holders"  # on a custom trait's registry item: its holders are indexed (decision 0053)


def custom_trait_item(name: str) -> dict[str, Any]:
    """A new custom trait's registry item (PutItem on `attribute_not_exists(pk)`); `holders` says that every
    provider holding it has its `PLTRH#` item (decision 0053: a trait made before has not)."""
    return to_item({"pk": TRAIT_PK, "sk": name, "refs": 0, "createdAt": now(), HOLDERS_INDEXED: True})


def custom(names: frozenset[str]) -> frozenset[str]:
    """The custom traits among these (standard ones are os-traits', never stored)."""
    return frozenset(filter(trait_names.is_custom, names))


def write_traits(table: str, read: Provider, traits: frozenset[str]) -> tuple[Provider, list[Op]]:
    """The provider with these traits (generation +1), unchanged since read, with +-1 on each custom trait's
    refs, its holder item, and its sharing index item: 1 + 2 x (custom traits added or removed) + (0 or 1)
    items. Allocation writes are conditioned on `invVersion`, which this leaves alone."""
    condition, values = unchanged(read.version)
    written = Provider(**{**read.__dict__, "traits": traits, "generation": read.generation + 1,
                          "version": read.version + 1})
    return written, [provider_put(table, written, condition, values),
                     *trait_ref_updates(table, trait_ref_deltas(read.traits, traits)),
                     *member_changes(TRAIT_HOLDERS, table, read, custom(read.traits), custom(traits), written.version),
                     *sharing_index(table, read.uuid, read.traits, traits)]


def linked_version_bump(table: str, provider: Provider) -> list[Op]:
    """Moves the counter the provider is linked to ([] for a provider linked to none)."""
    if provider.linked_version is None:
        return []
    pk, sk = provider.linked_version
    return [Op(LINKED_VERSION, {"Update": {"TableName": table, "Key": key(pk, sk),
                                           "UpdateExpression": "ADD version :one",
                                           "ExpressionAttributeValues": {":one": {"N": "1"}}}})]


def create_provider(table: str, provider: Provider) -> list[Op]:
    """A new provider: its uuid (`provider`) and its name (`name_claim`) must be free; a child's parent
    (`parent`) must exist and still be in the tree the child is written into (its counter moves)."""
    parent = ([children_change(table, PARENT, provider.parent_uuid, provider.uuid, +1, root=provider.root)]
              if provider.parent_uuid is not None else [])
    return [provider_put(table, provider, "attribute_not_exists(pk)"),
            name_claim(table, provider.name, provider.uuid),
            *parent,
            *class_ref_updates(table, class_ref_deltas({}, provider.inventories)),
            *class_index_updates(table, provider.uuid, {}, provider.inventories)]


def rename_provider(table: str, read: Provider, name: str) -> tuple[Provider, list[Op]]:
    """The provider under a new name, unchanged since read; its link stays (Placement cannot untie it)."""
    condition, values = unchanged(read.version)
    renamed = Provider(**{**read.__dict__, "name": name, "version": read.version + 1,
                          "fresh_child": read.fresh_child and name == read.name})  # the same name: no update
    ops = [provider_put(table, renamed, condition, values)]
    if name != read.name:
        ops += [name_release(table, read.name), name_claim(table, name, read.uuid)]
    return renamed, ops


def write_inventories(table: str, read: Provider, inventories: dict[str, Inventory]) -> tuple[Provider, list[Op]]:
    """The provider with these inventories (generation +1), unchanged since read; moves its linked version."""
    condition, values = unchanged(read.version)
    written = Provider(**{**read.__dict__, "inventories": inventories, "generation": read.generation + 1,
                          "version": read.version + 1, "inventory_version": read.inventory_version + 1})
    return written, [provider_put(table, written, condition, values),
                     *class_ref_updates(table, class_ref_deltas(read.inventories, inventories)),
                     *class_index_updates(table, read.uuid, read.inventories, inventories),
                     *linked_version_bump(table, read)]


def delete_provider(table: str, read: Provider) -> list[Op]:
    """The provider, unchanged since read and without children, and its name claim go; its parent's
    counter and its linked version move, its aggregate memberships, custom traits' holder items and sharing
    index item go. 2 + (1 with a parent) + one per aggregate and custom class + two per custom trait + (1
    sharing) + (1 linked) items; the membership and holder items beyond a transaction go after it (store)."""
    condition, values = unchanged(read.version)
    condition += " AND (attribute_not_exists(#children) OR #children = :zero)"
    values = {**values, ":zero": {"N": "0"}}
    parent = ([children_change(table, PARENT, read.parent_uuid, read.uuid, -1)]
              if read.parent_uuid is not None else [])
    return [Op(PROVIDER, {"Delete": {"TableName": table, "Key": provider_key(read.uuid),
                                     "ConditionExpression": f"{condition} AND attribute_not_exists(fence)",
                                     "ExpressionAttributeValues": values,
                                     "ExpressionAttributeNames": {"#children": "children"}}}),
            name_release(table, read.name),
            *parent,
            *member_changes(AGGREGATES, table, read, read.aggregates, frozenset(), read.version),
            *class_ref_updates(table, class_ref_deltas(read.inventories, {})),
            *class_index_updates(table, read.uuid, read.inventories, {}),
            *trait_ref_updates(table, trait_ref_deltas(read.traits, frozenset())),
            *member_changes(TRAIT_HOLDERS, table, read, custom(read.traits), frozenset(), read.version),
            *sharing_index(table, read.uuid, read.traits, frozenset()),
            *linked_version_bump(table, read)]


# --- nested providers (1.14, 1.37) -----------------------------------------------------------------


def children_change(table: str, name: str, parent_uuid: str, child: str, delta: int, *,
                    root: str | None = None) -> Op:
    """The parent's `children` counter moved by `delta` (+1 or -1) and `child` added to or taken from its
    `kids`, and its `version` with them, so a write decided from an older read of the parent (a delete, a
    move, a put of the whole item) fails; with `root`, the parent must still be in that tree (a child is never
    written into a tree its parent has left). Never while a reshape fences the parent: its final write puts the
    whole item it read (docs/decisions/0041-reshaper-protocol.md)."""
    condition = "attribute_exists(pk) AND attribute_not_exists(fence)"
    values: dict[str, Any] = {":d": {"N": str(delta)}, ":one": {"N": "1"}, ":kid": {"SS": [child]}}
    names: dict[str, str] = {"#children": "children", "#kids": "kids"}
    if root is not None:
        condition += " AND (#root = :root OR attribute_not_exists(#root))"
        values[":root"] = {"S": root}
        names["#root"] = "root"
    return Op(name, {"Update": {
        "TableName": table, "Key": provider_key(parent_uuid),
        "UpdateExpression": ("ADD #children :d, version :one, #kids :kid" if delta > 0 else
                             "ADD #children :d, version :one DELETE #kids :kid"),
        "ConditionExpression": condition, "ExpressionAttributeValues": values, "ExpressionAttributeNames": names,
    }})


def _descendant_op(table: str, descendant: Provider, root: str) -> Op:
    """A moved provider's descendant: its root (and gsi1sk) rewritten when the tree changes, else checked
    unchanged, so no concurrent move can hang the new parent below the moved provider (a cycle); never while a
    reshape fences it."""
    condition, values = unchanged(descendant.version)
    condition += " AND attribute_not_exists(fence)"
    if descendant.root == root:
        return Op(f"{DESCENDANT}{descendant.uuid}", {"ConditionCheck": {
            "TableName": table, "Key": provider_key(descendant.uuid),
            "ConditionExpression": condition, "ExpressionAttributeValues": values}})
    moved = Provider(**{**descendant.__dict__, "root_uuid": root})
    return Op(f"{DESCENDANT}{descendant.uuid}", {"Update": {
        "TableName": table, "Key": provider_key(descendant.uuid),
        "UpdateExpression": ("SET #root = :root, gsi1sk = :sk, version = version + :one, updatedAt = :now "
                             "REMOVE fresh"),
        "ConditionExpression": condition, "ExpressionAttributeNames": {"#root": "root"},
        "ExpressionAttributeValues": {**values, ":root": {"S": root}, ":sk": {"S": tree_sort_key(moved)},
                                      ":one": {"N": "1"}, ":now": {"N": str(now())}},
    }})


def update_provider(table: str, read: Provider, name: str, parent_uuid: str | None, root: str,
                    descendants: tuple[Provider, ...] | list[Provider] = ()) -> tuple[Provider, list[Op]]:
    """The provider renamed and/or under another parent (None: a root) in tree `root`, unchanged since read:
    the rename's items, the old parent's and the new parent's counters, and each descendant (its root
    rewritten or its version checked). 1 (+2 with a new name) + 1 per parent changed + 1 per descendant."""
    renamed, ops = rename_provider(table, read, name)
    if parent_uuid == read.parent_uuid:
        return renamed, ops
    moved = Provider(**{**renamed.__dict__, "parent_uuid": parent_uuid,
                        "root_uuid": "" if root == read.uuid else root, "fresh_child": False})
    condition, values = unchanged(read.version)
    ops[0] = provider_put(table, moved, condition, values)
    if read.parent_uuid is not None:
        ops.append(children_change(table, OLD_PARENT, read.parent_uuid, read.uuid, -1))
    if parent_uuid is not None:
        ops.append(children_change(table, PARENT, parent_uuid, read.uuid, +1, root=root))
    ops.extend(_descendant_op(table, d, root) for d in descendants)
    return moved, ops


# --- aggregates (1.1, 1.19) ------------------------------------------------------------------------


def member_item(kind: Membership, name: str, provider: Provider, version: int) -> dict[str, Any]:
    """A membership item: a hint that the provider is in the set, which readers check on the provider item.
    `v` is the provider version it was written for and `inc` the provider's incarnation (its creation time),
    so that a clean-up never removes one a later write needs (decision 0047)."""
    return {"pk": f"{kind.prefix}{name}", "sk": provider.uuid, "kind": kind.kind,
            "v": version, "inc": provider.created_at}


def member_changes(kind: Membership, table: str, provider: Provider, before: frozenset[str], after: frozenset[str],
                   version: int) -> list[Op]:
    """The membership items of the sets joined (Put, for `version`) and left (Delete), inside the transaction
    that commits the provider at `version`."""
    ops = [Op(f"{kind.operation}{name}", {"Put": {"TableName": table,
                                                   "Item": to_item(member_item(kind, name, provider, version))}})
           for name in sorted(after - before)]
    ops += [Op(f"{kind.operation}{name}", {"Delete": {"TableName": table, "Key": kind.key(name, provider.uuid)}})
            for name in sorted(before - after)]
    return ops


def is_membership(op: Op) -> bool:
    """One of `member_changes`' operations (which a write too large for one transaction makes around it
    instead, decision 0047)."""
    return op.name.startswith((AGGREGATE_MEMBER, TRAIT_HOLDER))


def member_raise(name: str, provider: Provider, version: int, kind: Membership = AGGREGATES) -> dict[str, Any]:
    """UpdateItem arguments that write a membership item (`member_item`) ahead of the provider's transaction
    (for `version`), never lowering the version of one of the same incarnation (a slower, stale writer's would
    let a clean-up remove an item a later write needs). A failed condition means it is already there, newer."""
    attributes = {k: v for k, v in member_item(kind, name, provider, version).items() if k not in ("pk", "sk")}
    return {"item_key": kind.key(name, provider.uuid),
            "update": "SET " + ", ".join(f"#{k} = :{k}" for k in attributes),
            "condition": "attribute_not_exists(#v) OR #inc <> :inc OR #v < :v",
            "names": {f"#{k}": k for k in attributes},
            "values": {f":{k}": to_value(v) for k, v in attributes.items()}}


def member_release(name: str, provider: Provider, version: int | None,
                   kind: Membership = AGGREGATES) -> dict[str, Any]:
    """DeleteItem arguments that remove a membership item after the transaction that committed the provider at
    `version` without it: only one written for that version or before (none written for a later one, which a
    later write needs), of this incarnation (or written before items named theirs). `version` None: the
    provider is deleted, and every item of its incarnation goes."""
    values: dict[str, Any] = {":inc": {"N": str(provider.created_at)}}
    condition = "attribute_not_exists(#v) OR #inc = :inc"
    if version is not None:
        condition = "attribute_not_exists(#v) OR (#inc = :inc AND #v <= :v)"
        values[":v"] = {"N": str(version)}
    return {"item_key": kind.key(name, provider.uuid), "condition": condition,
            "names": {"#v": "v", "#inc": "inc"}, "values": values}


def write_aggregates(table: str, read: Provider, aggregates: frozenset[str], *,
                     bump_generation: bool) -> tuple[Provider, list[Op]]:
    """The provider with these aggregates (generation +1 from 1.19), unchanged since read, and its membership
    items: 1 + one per aggregate added or removed."""
    condition, values = unchanged(read.version)
    written = Provider(**{**read.__dict__, "aggregates": aggregates, "version": read.version + 1,
                          "generation": read.generation + (1 if bump_generation else 0)})
    return written, [provider_put(table, written, condition, values),
                     *member_changes(AGGREGATES, table, read, read.aggregates, aggregates, written.version)]


# --- resource classes (rename at 1.2-1.6) ----------------------------------------------------------


def rename_class(table: str, name: str, new_name: str) -> list[Op]:
    """A custom class nothing holds (`refs` = 0) under a new, free name: 2 items."""
    return [
        Op(OLD_CLASS, {"Delete": {"TableName": table, "Key": class_key(name),
                                  "ConditionExpression": "attribute_exists(pk) AND refs = :zero",
                                  "ExpressionAttributeValues": {":zero": {"N": "0"}}}}),
        Op(NEW_CLASS, {"Put": {"TableName": table, "ConditionExpression": "attribute_not_exists(pk)",
                               "Item": to_item({"pk": "PLRC", "sk": new_name, "refs": 0, "createdAt": now()})}}),
    ]
