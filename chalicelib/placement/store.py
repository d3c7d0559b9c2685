"""Placement's items in the service table (the DynamoDB adapter; the client is injected).

| item                              | pk                     | sk              |
|-----------------------------------|------------------------|-----------------|
| resource provider                 | PLRP#<uuid>            | -               |
| one consumer's allocation on it   | PLRP#<uuid>            | ALLOC#<consumer>|
| provider name claim (uniqueness)  | PLRPNAME#<name>        | -               |
| consumer                          | PLCONS#<uuid>          | -               |
| usage of a project (every type's counters and each type's) | PLUSAGE#<project> | - |
| usage of a (project, user) (the same)                        | PLUSAGE#<project> | USER#<user> |
| legacy: a project's consumer type (read, never written)      | PLUSAGE#<project> | T#<type> |
| legacy: a (project, user, type) (read, never written)        | PLUSAGE#<project> | UT#<user>#<type> |
| custom resource class             | PLRC                   | <name>          |
| resource-class index              | PLRCX#<class>          | <provider uuid> |
| aggregate membership              | PLAGG#<aggregate>      | <provider uuid> |
| custom trait (refs: its holders)   | PLTRAIT                | <name>          |
| custom trait holder (decision 0053) | PLTRH#<trait>         | <provider uuid> |
| sharing provider index             | PLSHARE                | <uuid>          |

Providers carry gsi1pk=PLRP, gsi1sk=<uuid> (a root) or <root>#<uuid> (in a tree), so listing them
is one Query on the sparse KEYS_ONLY index plus consistent BatchGets (sorted by `createdUs`, their
creation stamp); a provider another package links (`linkedVersion`: fleet's pools) has that counter
moved by its inventory writes (the operations are built in items.py). Every write is one TransactWriteItems whose
conditions state its invariants: what the decision read is unchanged (a provider's `version`,
bumped by every write of it, or for allocation writes its `invVersion`, bumped by inventory
writes, plus room for each growing class), a consumer's `version` (or its absence), unique
names and uuids, a custom class that exists, and is unreferenced when deleted. Decisions are
made in rules.py from the values those conditions pin.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chalicelib.errors import Unavailable
from chalicelib.observability import logger
from chalicelib.placement import errors, items, reshape, trees
from chalicelib.placement.items import (
    PROVIDER_INDEX_PK,
    SHARING_PK,
    TRAIT_PK,
    allocation_key,
    class_key,
    consumer_key,
    name_key,
    now,
    provider_key,
    trait_key,
    unchanged,
    usage_key,
    usage_sort_key,
    uuid_of_sort_key,
)
from chalicelib.placement.models import CONSUMER_COUNT, Consumer, Inventory, Provider
from chalicelib.placement.rules import AllocationDecision, ProviderChange, UsageDeltas
from chalicelib.store.codec import to_item
from chalicelib.store.keys import key_id
from chalicelib.store.ops import (
    BATCH_GET_KEYS,
    MAX_TRANSACTION_BYTES,
    MAX_TRANSACTION_OPS,
    Op,
    TooLarge,
    batch_get,
    delete_if,
    get_item,
    put_if,
    query_all,
    query_pages,
    transact,
    update_if,
)

__all__ = ["PlacementStore", "name_key", "provider_key"]


def _shape(item: dict[str, Any]) -> dict[str, Any]:
    """A provider item's inventories, usage, tree, traits and aggregates, as `Provider` fields."""
    return {
        "uuid": item["uuid"], "name": item["name"],
        "inventories": {rc: Inventory(
            total=int(v["total"]), reserved=int(v["reserved"]), min_unit=int(v["min_unit"]),
            max_unit=int(v["max_unit"]), step_size=int(v["step_size"]),
            allocation_ratio=float(v["allocation_ratio"]),
        ) for rc, v in (item.get("inv") or {}).items()},
        "usages": {rc: int(n) for rc, n in (item.get("use") or {}).items() if n},
        "created_at": int(item.get("createdUs", 0)),
        "parent_uuid": item.get("parent") or None,
        "root_uuid": "" if item.get("root") in (None, item["uuid"]) else str(item["root"]),
        "fresh_child": bool(item.get("fresh")),
        "children": int(item.get("children", 0)),
        "child_uuids": frozenset(item.get("kids") or ()),
        "traits": frozenset(item.get("traits") or ()),
        "aggregates": frozenset(item.get("aggs") or ()),
    }


def _provider(item: dict[str, Any]) -> Provider:
    linked = item.get("linkedVersion")
    return Provider(
        **_shape(item), generation=int(item["generation"]), version=int(item["version"]),
        inventory_version=int(item.get("invVersion", 0)), updated_at=int(item.get("updatedAt", 0)),
        linked_version=(str(linked["pk"]), str(linked["sk"])) if linked else None,
        fence=item.get("fence") or None,
    )


LISTED_PROJECTION = ("pk, sk, #uuid, #name, generation, version, invVersion, updatedAt, linkedVersion, fence, "
                     "createdUs, parent, #root, fresh, children, kids, traits, aggs")
LISTED_NAMES = {"#uuid": "uuid", "#name": "name", "#root": "root"}

CANDIDATE_PROJECTION = "pk, sk, #uuid, #name, inv, #use, createdUs, parent, #root, children, kids, traits, aggs"
CANDIDATE_NAMES = {"#uuid": "uuid", "#name": "name", "#use": "use", "#root": "root"}


def _candidate_provider(item: dict[str, Any]) -> Provider:
    """A provider read with CANDIDATE_PROJECTION: all but the write tokens (generation, versions, fence)."""
    return Provider(**_shape(item))


def _generations(found: dict[tuple[str, str], dict[str, Any]]) -> dict[str, int]:
    """Provider uuid -> generation, of provider items a batch found."""
    return {pk[len("PLRP#"):]: int(item["generation"]) for (pk, _), item in found.items()}


def _consumer(item: dict[str, Any]) -> Consumer:
    return Consumer(
        uuid=item["uuid"], project_id=item["project"], user_id=item["user"],
        generation=int(item["generation"]), version=int(item["version"]),
        allocations=items.consumer_allocations(item),
        updated_at=int(item.get("updatedAt", 0)),
        consumer_type=item.get("ctype") or None,
    )


def _usage(*counters: dict[str, int]) -> dict[str, int]:
    """A counter's non-zero classes and, when any, its consumer count (1.38's `consumer_count`), summed over
    its parts (`items.usage_counters` of an owner's item and of a legacy per-type item)."""
    total: dict[str, int] = {}
    for part in counters:
        for name, amount in part.items():
            total[name] = total.get(name, 0) + amount
    usages = {name[len("rc_"):]: amount for name, amount in total.items() if name.startswith("rc_") and amount}
    if usages:
        usages[CONSUMER_COUNT] = total.get(items.USAGE_CONSUMERS, 0)
    return usages


def too_large(refused: TooLarge) -> errors.TooLarge:
    """The store's TooLarge in Placement's words: a write that can never succeed, to split."""
    if refused.ops > MAX_TRANSACTION_OPS:
        return errors.TooLarge(
            f"This request would write {refused.ops} items in one transaction; the limit is "
            f"{MAX_TRANSACTION_OPS}. Split it into smaller requests.")
    return errors.TooLarge(
        f"This request would write {refused.size} bytes in one transaction; the limit is "
        f"{MAX_TRANSACTION_BYTES} bytes. Split it into smaller requests.")


class PlacementStore:
    """Placement's reads and transactions. Every write goes through `items` (the invariants other packages
    rely on included) and the store's one transaction helper; a cancellation is the store's
    `ConditionFailed` naming the operations that failed, a write too big for one transaction `TooLarge`."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    @property
    def table(self) -> str:
        return self._table

    # --- reads ---------------------------------------------------------------------------------

    def _get(self, item_key: dict[str, Any]) -> dict[str, Any] | None:
        return get_item(self._client, self._table, item_key)

    def _batch(self, keys: list[dict[str, Any]], workers: int = 1, projection: str | None = None,
               names: dict[str, str] | None = None, consistent: bool = True) -> dict[tuple[str, str], dict[str, Any]]:
        """The items of these keys that exist. BatchGetItem refuses a key given twice (e.g. one provider named
        by several consumers of a POST), so each goes once; a single key is read by GetItem, which DynamoDB
        answers with less work (DynamoDB Local: 1.4 ms against 1.7 ms a call, measured side by side)."""
        unique = list({key_id(k): k for k in keys}.values())
        if len(unique) == 1:
            item = get_item(self._client, self._table, unique[0], projection=projection, names=names,
                            consistent=consistent)
            return {(item["pk"], item["sk"]): item} if item else {}
        return batch_get(self._client, self._table, unique, workers=workers, projection=projection, names=names,
                         consistent=consistent)

    def _query(self, **kwargs: Any) -> list[dict[str, Any]]:
        return query_all(self._client, self._table, **kwargs)

    def provider(self, uuid: str) -> Provider | None:
        item = self._get(provider_key(uuid))
        return _provider(item) if item else None

    def providers(self, uuids: list[str], *, inventories: bool = True) -> dict[str, Provider | None]:
        """Each provider by uuid (None: no such provider), consistent BatchGets. Without `inventories` the
        items are read projected to all but their inventories and usages (most of an item's bytes), which
        those Providers hold empty: for lists that show providers without filtering on capacity."""
        keys = [provider_key(u) for u in uuids]
        found = self._batch(keys) if inventories else self._batch(keys, projection=LISTED_PROJECTION,
                                                                   names=LISTED_NAMES)
        return {u: (_provider(found[(f"PLRP#{u}", "-")]) if (f"PLRP#{u}", "-") in found else None) for u in uuids}

    def provider_generations(self, uuids: list[str]) -> dict[str, int]:
        """The generation of each of these providers that exists: one consistent BatchGet per 100, projected to
        the generation (a provider item with its inventories is ten times the bytes)."""
        return _generations(self._batch([provider_key(u) for u in uuids], projection="pk, sk, generation"))

    def provider_by_name(self, name: str) -> Provider | None:
        claim = self._get(name_key(name))
        return self.provider(claim["uuid"]) if claim else None

    def provider_uuids(self) -> list[str]:
        """Every provider's uuid: one Query on the sparse, keys-only gsi1 (no Scan)."""
        items = self._query(
            IndexName="gsi1", ConsistentRead=False, KeyConditionExpression="gsi1pk = :pk",
            ExpressionAttributeValues={":pk": {"S": PROVIDER_INDEX_PK}},
        )
        return [uuid_of_sort_key(i["gsi1sk"]) for i in items]

    def tree(self, root: str) -> list[Provider]:
        """The providers of one tree: a Query of gsi1 with `begins_with(gsi1sk, <root>)` (roots' sort keys are
        their uuids, members' `<root>#<uuid>`) and a consistent BatchGet of what it lists; those the
        consistent read shows elsewhere (the index lagging a move) are left out. Read units: one Query page
        per ~4,000 keys of the tree, plus the tree's items."""
        found = self.providers(self.tree_uuids(root))
        return trees.tree_members((p for p in found.values() if p is not None), root)

    def aggregate_members(self, aggregate: str) -> set[str]:
        """The providers of one aggregate as its membership items name them (one consistent Query of its
        `PLAGG#<aggregate>` partition): every member, and perhaps some that no longer are, which readers drop
        on the provider items they read (docs/decisions/0047)."""
        return self._members(items.AGGREGATES, aggregate)

    def _members(self, kind: items.Membership, name: str) -> set[str]:
        """The providers the membership items of one set name: one consistent Query of its partition."""
        found = self._query(KeyConditionExpression="pk = :pk", ConsistentRead=True,
                            ExpressionAttributeValues={":pk": {"S": f"{kind.prefix}{name}"}})
        return {i["sk"] for i in found}

    def members_of_any(self, aggregates: frozenset[str]) -> set[str]:
        """The providers the membership items of any of these aggregates name (`aggregate_members`, hints)."""
        return set().union(*(self.aggregate_members(a) for a in sorted(aggregates)))

    def member_in_every(self, member_of: list[frozenset[str]]) -> bool:
        """Whether some provider is in one aggregate of each set: the providers the membership items name in
        all of them are read, a batch at a time, until one's own aggregates say so."""
        common: set[str] | None = None
        for any_of in member_of:
            named = self.members_of_any(any_of)
            common = named if common is None else common & named
            if not common:
                return False
        candidates = sorted(common or ())
        # the first one named nearly always is one (a hint is stale only after a failure): read it alone first
        for batch in [candidates[:1], *(candidates[i:i + BATCH_GET_KEYS]
                                        for i in range(1, len(candidates), BATCH_GET_KEYS))]:
            found = self.providers(batch, inventories=False).values()
            if any(p is not None and all(p.aggregates & any_of for any_of in member_of) for p in found):
                return True
        return False

    def provider_with_allocations(self, uuid: str) -> tuple[Provider | None, dict[str, dict[str, Any]]]:
        """The provider item and its consumers' allocation items: one consistent Query of its partition. A provider
        a reshape fences is its old state (the switch unfences it): the reshape's consumers are shown as they
        were, from its chunks (one more Query)."""
        provider, allocations = self._provider_partition(uuid)
        if provider is None or provider.fence is None:
            return provider, allocations
        _intent, chunks = self.reshape_intent(provider.fence)
        for chunk in chunks:
            for change in chunk.changes:
                allocations.pop(change.uuid, None)
                if change.old is not None and uuid in change.old.allocations:
                    allocations[change.uuid] = {"resources": change.old.allocations[uuid],
                                                "consumerGeneration": change.old.generation}
        return provider, allocations

    def _provider_partition(self, uuid: str) -> tuple[Provider | None, dict[str, dict[str, Any]]]:
        items = self._query(
            KeyConditionExpression="pk = :pk", ConsistentRead=True,
            ExpressionAttributeValues={":pk": {"S": f"PLRP#{uuid}"}},
        )
        provider = None
        allocations: dict[str, dict[str, Any]] = {}
        for item in items:
            if item["sk"] == "-":
                provider = _provider(item)
            elif item["sk"].startswith("ALLOC#"):
                allocations[item["sk"][len("ALLOC#"):]] = item
        return provider, allocations

    def consumer(self, uuid: str) -> Consumer | None:
        """The consumer as readers see it: a consumer a reshape fences resolves through its intent (its old
        record before the reshape's switch, the new one after)."""
        return self._consumer_as_read(self._get(consumer_key(uuid)))

    def consumer_and_generations(self, uuid: str, providers: list[str]) -> tuple[Consumer | None, dict[str, int]]:
        """The consumer as `consumer` reads it and the generation of each of these providers that exists, in
        one consistent BatchGet (of whole items: a projection that names every attribute of a consumer's
        item would have to follow each one added). Read units: the consumer's item and each provider's."""
        wanted = consumer_key(uuid)
        found = self._batch([wanted, *(provider_key(u) for u in providers)])
        item = found.pop(key_id(wanted), None)
        return self._consumer_as_read(item), _generations(found)

    def _consumer_as_read(self, item: dict[str, Any] | None) -> Consumer | None:
        if item is None:
            return None
        if item.get("fence"):
            if reshape.sees_old(self.reshape_state(str(item["fence"]))):
                return reshape.old_record(item)
            if item.get("kind") != "placement-consumer":
                return None
        return _consumer(item)

    def consumer_for_write(self, uuid: str) -> Consumer | None:
        """The consumer a write decides from; `reshape.Fenced` when a reshape holds it."""
        item = self._get(consumer_key(uuid))
        if item and item.get("fence"):
            raise reshape.Fenced(str(item["fence"]))
        return _consumer(item) if item else None

    def read_for_allocation(
        self, consumer_uuids: list[str], provider_uuids: list[str], *, workers: int = 1,
    ) -> tuple[dict[str, Consumer | None], dict[str, Provider | None]]:
        """The consumers and providers an allocation write decides from: one consistent BatchGet per 100 keys
        (`workers` of them in parallel); `reshape.Fenced` when a reshape holds any of them."""
        found = self._batch([consumer_key(c) for c in consumer_uuids] + [provider_key(p) for p in provider_uuids],
                            workers)
        for item in found.values():
            if item.get("fence"):
                raise reshape.Fenced(str(item["fence"]))
        consumers = {c: (_consumer(found[(f"PLCONS#{c}", "-")]) if (f"PLCONS#{c}", "-") in found else None)
                     for c in consumer_uuids}
        providers = {p: (_provider(found[(f"PLRP#{p}", "-")]) if (f"PLRP#{p}", "-") in found else None)
                     for p in provider_uuids}
        return consumers, providers

    # --- the reshaper's items (reshape.py builds the operations, docs/decisions/0041) ----------------

    def reshape_state(self, reshape_id: str) -> str | None:
        """The intent's state (pending, aborting, done); None once it is gone (the reshape ended)."""
        item = self._get(reshape.intent_key(reshape_id))
        return str(item["state"]) if item else None

    def reshape_intent(self, reshape_id: str) -> tuple[dict[str, Any] | None, list[reshape.Chunk]]:
        """The intent and its chunks (one consistent Query of the reshape's partition)."""
        found = self._query(KeyConditionExpression="pk = :pk", ConsistentRead=True,
                            ExpressionAttributeValues={":pk": {"S": f"PLRESHAPE#{reshape_id}"}})
        intent = next((i for i in found if i["sk"] == "-"), None)
        chunks = [reshape.chunk_from(int(str(i["sk"])[len("CHUNK#"):]), str(i["body"]))
                  for i in found if str(i["sk"]).startswith("CHUNK#")]
        return intent, sorted(chunks, key=lambda c: c.index)

    def transact(self, ops: list[Op]) -> None:
        """One step of the reshaper's protocol (ConditionFailed names what moved)."""
        self._transact(ops)

    def usage_totals(self, project: str, user: str | None) -> dict[str, int]:
        usage = self.usage_of_type(project, user, None)
        usage.pop(CONSUMER_COUNT, None)  # below 1.38 a counter shows its classes only
        return usage

    def usage_of_type(self, project: str, user: str | None, consumer_type: str | None) -> dict[str, int]:
        """One counter (1.38): a consumer type's (or, `consumer_type` None, every type's), with its
        `consumer_count`; {} when nothing is allocated. The owner's item, and for a type its legacy item
        (decision 0049), in one consistent read."""
        if consumer_type is None:
            return _usage(items.usage_counters(self._get(usage_key(project, user)) or {}, None))
        owner, legacy = usage_key(project, user), usage_key(project, user, consumer_type)
        found = self._batch([owner, legacy])
        return _usage(items.usage_counters(found.get(key_id(owner)) or {}, consumer_type),
                      items.usage_counters(found.get(key_id(legacy)) or {}, None))

    def usages_by_type(self, project: str, user: str | None) -> dict[str, dict[str, int]]:
        """Every consumer type's counter of a project (or of its user), with its `consumer_count`. A project's:
        one consistent Query of its partition from `-` through the legacy `T#` items (nothing else sorts
        between them); a user's: its item, then a Query of its legacy items by prefix `UT#<user>#` (a user
        whose id extends this one's told apart by the last `#`)."""
        pk, prefix = {":pk": {"S": f"PLUSAGE#{project}"}}, usage_sort_key(user, "")
        if user is None:  # "-" < "T#..." < "T$" < "USER#...": the owner's item and the legacy ones
            found = self._query(KeyConditionExpression="pk = :pk AND sk BETWEEN :owner AND :end",
                                ConsistentRead=True, ExpressionAttributeValues={
                                    **pk, ":owner": {"S": usage_sort_key(None)}, ":end": {"S": "T$"}})
            owner = next((item for item in found if item["sk"] == usage_sort_key(None)), {})
        else:
            owner = self._get(usage_key(project, user)) or {}
            found = self._query(KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                                ConsistentRead=True, ExpressionAttributeValues={**pk, ":prefix": {"S": prefix}})
        legacy: dict[str, dict[str, int]] = {}
        for item in found:
            head, _, consumer_type = str(item["sk"]).rpartition("#")
            if f"{head}#" == prefix:  # not the owner's item, nor another user's whose id extends this one's
                legacy[consumer_type] = items.usage_counters(item, None)
        by_type: dict[str, dict[str, int]] = {}
        for consumer_type in sorted(items.usage_types(owner) | set(legacy)):
            usage = _usage(items.usage_counters(owner, consumer_type), legacy.get(consumer_type, {}))
            if usage:
                by_type[consumer_type] = usage
        return by_type

    def custom_classes(self) -> list[dict[str, Any]]:
        return self._query(KeyConditionExpression="pk = :pk", ConsistentRead=True,
                           ExpressionAttributeValues={":pk": {"S": "PLRC"}})

    def custom_class(self, name: str) -> dict[str, Any] | None:
        return self._get(class_key(name))

    def _existing(self, keys: list[dict[str, Any]]) -> set[str]:
        """The sort keys of those of `keys` that exist (one consistent BatchGet; none for no keys)."""
        return {sk for (_pk, sk) in self._batch(keys)} if keys else set()

    def existing_custom_classes(self, names: list[str]) -> set[str]:
        return self._existing([class_key(n) for n in names])

    # --- allocation candidates: eventually consistent (a candidate may be stale; a claim re-checks) ----

    def _keys(self, pk: str, page_size: int | None = None, *, consistent: bool = False) -> Iterator[list[str]]:
        """The sort keys of one partition, page by page (read as they are asked for)."""
        extra: dict[str, Any] = {"Limit": page_size} if page_size else {}
        for page in query_pages(self._client, self._table, KeyConditionExpression="pk = :pk", ConsistentRead=consistent,
                                ProjectionExpression="sk", ExpressionAttributeValues={":pk": {"S": pk}}, **extra):
            yield [item["sk"] for item in page]

    def class_holder_pages(self, resource_class: str, page_size: int) -> Iterator[list[str]]:
        """The providers holding an inventory of the class (the resource-class index), `page_size` at a time."""
        return self._keys(f"{items.CLASS_INDEX_PREFIX}{resource_class}", page_size)

    def class_holders(self, resource_class: str, *, consistent: bool = False) -> list[str]:
        """Every provider holding an inventory of the class; `consistent` for a list that must show the
        inventory writes made before it (the index items are written in the same transactions)."""
        pk = f"{items.CLASS_INDEX_PREFIX}{resource_class}"
        return [u for page in self._keys(pk, consistent=consistent) for u in page]

    def tree_uuids(self, root: str) -> list[str]:
        """Every provider of the tree rooted at `root`: one Query of gsi1 (keys only)."""
        found = self._query(
            IndexName="gsi1", ConsistentRead=False,
            KeyConditionExpression="gsi1pk = :pk AND begins_with(gsi1sk, :root)",
            ExpressionAttributeValues={":pk": {"S": PROVIDER_INDEX_PK}, ":root": {"S": root}},
        )
        return [uuid_of_sort_key(i["gsi1sk"]) for i in found]

    def providers_for_candidates(self, uuids: list[str], workers: int = 1) -> dict[str, Provider]:
        """The providers that exist among `uuids`, as the candidate generator sees them: eventually consistent
        BatchGets of 100 keys each (`workers` at once), projected to what candidates and their summaries
        show (a third fewer bytes for the store to send and us to decode). Their generation and versions
        are not read: the search never writes."""
        found = self._batch([provider_key(u) for u in uuids], consistent=False, projection=CANDIDATE_PROJECTION,
                            names=CANDIDATE_NAMES, workers=workers)
        return {item["uuid"]: _candidate_provider(item) for item in found.values()}

    def custom_traits(self, *, created_at: bool = True, start: str | None = None) -> list[dict[str, Any]]:
        """Every custom trait's name (`sk`) (those beginning with `start`, when given) and, when asked, its
        `createdAt`: one Query of PLTRAIT, projected."""
        condition, values = "pk = :pk", {":pk": {"S": TRAIT_PK}}
        if start is not None:
            condition, values = f"{condition} AND begins_with(sk, :start)", {**values, ":start": {"S": start}}
        return self._query(KeyConditionExpression=condition, ConsistentRead=True,
                           ProjectionExpression="sk, createdAt" if created_at else "sk",
                           ExpressionAttributeValues=values)

    def custom_traits_named(self, names: list[str], *, created_at: bool = True) -> list[dict[str, Any]]:
        """Those of these custom traits that exist, as `custom_traits` shows them: consistent BatchGets of their
        keys (one per 100 names), projected; none for no names."""
        return list(self._custom_traits_by_key(names, "pk, sk, createdAt" if created_at else "pk, sk").values())

    def custom_trait(self, name: str) -> dict[str, Any] | None:
        return self._get(trait_key(name))

    def existing_custom_traits(self, names: list[str]) -> set[str]:
        return set(self.custom_trait_counts(names))

    def custom_trait_counts(self, names: list[str]) -> dict[str, tuple[int, bool]]:
        """(refs, whether its holders are indexed: decision 0053) of each of these custom traits that exists:
        `refs` counts its holders, moved in the transaction of every provider write that adds or removes it.
        One consistent BatchGet, projected."""
        found = self._custom_traits_by_key(names, f"pk, sk, refs, {items.HOLDERS_INDEXED}")
        return {sk: (int(item.get("refs", 0)), bool(item.get(items.HOLDERS_INDEXED)))
                for (_pk, sk), item in found.items()}

    def trait_holders(self, name: str) -> set[str]:
        """The providers a custom trait's holder items name (one consistent Query of its `PLTRH#<trait>`
        partition): every holder when the trait's holders are indexed, and perhaps some that no longer hold
        it, which readers drop on the provider items they read (decisions 0047, 0053)."""
        return self._members(items.TRAIT_HOLDERS, name)

    def _custom_traits_by_key(self, names: list[str], projection: str) -> dict[tuple[str, str], dict[str, Any]]:
        """The items of those of these custom traits that exist: consistent BatchGets, projected."""
        return self._batch([trait_key(n) for n in names], projection=projection)

    def held_traits(self) -> set[str]:
        """Every trait some provider holds: the keys-only index, then the providers' `traits` only
        (1 + providers/100 reads; GET /traits?associated is the one caller)."""
        uuids = self.provider_uuids()
        found = self._batch([provider_key(u) for u in uuids], projection="pk, sk, #traits", names={"#traits": "traits"})
        return {name for item in found.values() for name in (item.get("traits") or ())}

    def sharing_providers(self) -> list[str]:
        """The uuids of the providers holding MISC_SHARES_VIA_AGGREGATE (sharing providers): one consistent
        Query of the PLSHARE index, in uuid order."""
        items = self._query(KeyConditionExpression="pk = :pk", ConsistentRead=True,
                            ExpressionAttributeValues={":pk": {"S": SHARING_PK}})
        return [item["sk"] for item in items]

    # --- writes --------------------------------------------------------------------------------

    def _transact(self, ops: list[Op]) -> None:
        try:
            transact(self._client, ops)
        except TooLarge as refused:
            raise too_large(refused) from None

    def create_provider(self, provider: Provider) -> None:
        """ConditionFailed names `provider` (uuid taken) and/or `name_claim` (name taken)."""
        self._transact(items.create_provider(self._table, provider))

    def rename_provider(self, read: Provider, name: str) -> Provider:
        """ConditionFailed names `provider` (changed since read) or `name_claim` (name taken)."""
        renamed, ops = items.rename_provider(self._table, read, name)
        self._transact(ops)
        return renamed

    def update_provider(self, read: Provider, name: str, parent_uuid: str | None, root: str,
                        descendants: tuple[Provider, ...]) -> Provider:
        """Rename and/or move; ConditionFailed names `provider`, `name_claim`, `parent` (the new parent gone or
        moved to another tree), `old_parent` or a `descendant:<uuid>` (changed since read)."""
        written, ops = items.update_provider(self._table, read, name, parent_uuid, root, descendants)
        self._transact(ops)
        return written

    def write_aggregates(self, read: Provider, aggregates: frozenset[str], *, bump_generation: bool) -> Provider:
        """The provider's aggregates and their membership items (`_commit_with_members`)."""
        written, ops = items.write_aggregates(self._table, read, aggregates, bump_generation=bump_generation)
        self._commit_with_members(items.AGGREGATES, read, written, ops)
        return written

    def _commit_with_members(self, kind: items.Membership, read: Provider, written: Provider, ops: list[Op]) -> None:
        """One transaction with the membership items when they fit in it; else the items added are written
        before it and those removed deleted after it, each conditioned so that none a later write needs goes
        (docs/decisions/0047): a failure between leaves only hints that readers check on the provider."""
        if len(ops) <= MAX_TRANSACTION_OPS:
            self._transact(ops)
            return
        added = sorted(kind.of(written) - kind.of(read))
        for name in added:
            update_if(self._client, self._table, **items.member_raise(name, read, written.version, kind))
        try:
            self._transact([op for op in ops if not items.is_membership(op)])
        except Exception:
            self._withdraw_members(kind, read, added)
            raise
        self._release_members(kind, read, sorted(kind.of(read) - kind.of(written)), written.version)

    def _withdraw_members(self, kind: items.Membership, read: Provider, names: list[str]) -> None:
        """After a transaction that failed with these items written ahead of it, for `read.version + 1`: when
        another write committed the provider since, those it is not in go (`member_release` at its
        version: no writer in flight needs one of them, as each wrote a later version); when its incarnation
        is gone, all go. When nothing committed, a writer that read the same version may need them, so they
        stay, inert hints (decision 0047). Best effort."""
        if not names:
            return
        try:
            current = self.provider(read.uuid)
        except Unavailable:
            logger.warning(f"{kind.label} left behind", extra={"provider": read.uuid})
            return
        if current is None or current.created_at != read.created_at:
            self._release_members(kind, read, names, None)
        elif current.version > read.version:
            self._release_members(kind, current, [n for n in names if n not in kind.of(current)], current.version)

    def _release_members(self, kind: items.Membership, provider: Provider, names: list[str],
                         version: int | None) -> None:
        """The clean-up after a committed write: best effort, since the write stands and its answer must say
        so; an item the store fails to delete stays a hint readers drop (decision 0047)."""
        try:
            for name in names:
                delete_if(self._client, self._table, **items.member_release(name, provider, version, kind))
        except Unavailable:
            logger.warning(f"{kind.label} left behind", extra={"provider": provider.uuid})

    def delete_provider(self, read: Provider) -> None:
        """One transaction; a provider whose membership and holder items do not fit in it loses them after it."""
        ops = items.delete_provider(self._table, read)
        if len(ops) <= MAX_TRANSACTION_OPS:
            self._transact(ops)
            return
        self._transact([op for op in ops if not items.is_membership(op)])
        for kind in (items.AGGREGATES, items.TRAIT_HOLDERS):
            self._release_members(kind, read, sorted(kind.of(read)), None)

    def write_inventories(self, read: Provider, inventories: dict[str, Inventory]) -> Provider:
        """Replace the provider's inventories; generation +1. Returns the provider as written."""
        written, ops = items.write_inventories(self._table, read, inventories)
        self._transact(ops)
        return written

    def write_allocations(self, decision: AllocationDecision, consumers: dict[str, Consumer | None]) -> None:
        """The whole allocation decision as one transaction (no write when nothing changes)."""
        ops: list[Op] = [self._provider_change(rp, change) for rp, change in decision.providers.items()]
        for uuid, new in decision.consumers.items():
            ops.extend(self._consumer_items(uuid, consumers.get(uuid), new))
        ops.extend(items.usage_updates(self._table, decision.usage_deltas))
        if ops:
            self._transact(ops)

    def delete_allocations(self, consumer: Consumer, deltas: UsageDeltas) -> None:
        """DELETE /allocations/{c}: release everything, no generation moves, the consumer goes."""
        ops = [self._provider_change(rp, ProviderChange(
            deltas={rc: -n for rc, n in res.items()}, limits={}, bump_generation=False, inventory_version=None,
        )) for rp, res in consumer.allocations.items()]
        ops.extend(self._consumer_items(consumer.uuid, consumer, None))
        ops.extend(items.usage_updates(self._table, deltas))
        self._transact(ops)

    def _provider_change(self, rp: str, change: ProviderChange) -> Op:
        """Usage deltas applied in place. The conditions: the inventory the decision was checked against
        is still the provider's, and each class that grows still has room for its delta. So concurrent
        claims on one provider do not invalidate each other while there is room for all of them."""
        names: dict[str, str] = {"#use": "use"} if change.deltas else {}
        values: dict[str, Any] = {":one": {"N": "1"}, ":now": {"N": str(now())}}
        if change.deltas:
            values[":zero"] = {"N": "0"}
        sets = ["version = version + :one", "updatedAt = :now"]
        if change.bump_generation:
            sets.append("generation = generation + :one")
        conditions = ["attribute_not_exists(fence)"]  # no reshape holds the provider
        if change.inventory_version is None:
            conditions.append("attribute_exists(pk)")
        else:
            conditions.append("invVersion = :inv")
            values[":inv"] = {"N": str(change.inventory_version)}
        if change.created_at is not None:
            conditions.append("createdUs = :born")
            values[":born"] = {"N": str(change.created_at)}
        for i, rc in enumerate(sorted(set(change.deltas) | set(change.limits))):
            names[f"#c{i}"] = rc
            if rc in change.deltas:
                values[f":d{i}"] = {"N": str(change.deltas[rc])}
                sets.append(f"#use.#c{i} = if_not_exists(#use.#c{i}, :zero) + :d{i}")
            if rc in change.limits:
                values[f":l{i}"] = {"N": str(change.limits[rc])}
                conditions.append(f"(attribute_not_exists(#use.#c{i}) OR #use.#c{i} <= :l{i})")
        update: dict[str, Any] = {
            "TableName": self._table, "Key": provider_key(rp), "UpdateExpression": "SET " + ", ".join(sets),
            "ConditionExpression": " AND ".join(conditions), "ExpressionAttributeValues": values,
        }
        if names:
            update["ExpressionAttributeNames"] = names
        return Op(f"provider:{rp}", {"Update": update})

    def _consumer_items(self, uuid: str, old: Consumer | None, new: Consumer | None) -> list[Op]:
        ops: list[Op] = []
        if old is None:
            condition, values = "attribute_not_exists(pk)", None
        else:
            condition, values = unchanged(old.version)
        if new is None:
            if old is not None:
                delete: dict[str, Any] = {"TableName": self._table, "Key": consumer_key(uuid),
                                          "ConditionExpression": condition}
                if values:
                    delete["ExpressionAttributeValues"] = values
                ops.append(Op(f"consumer:{uuid}", {"Delete": delete}))
        else:
            put: dict[str, Any] = {"TableName": self._table, "ConditionExpression": condition, "Item": to_item({
                "pk": f"PLCONS#{uuid}", "sk": "-", "kind": "placement-consumer", "uuid": uuid,
                "project": new.project_id, "user": new.user_id, "generation": new.generation,
                "version": new.version, **items.consumer_allocations_attributes(new.allocations),
                "updatedAt": now(),
                "ctype": new.consumer_type,
            })}
            if values:
                put["ExpressionAttributeValues"] = values
            ops.append(Op(f"consumer:{uuid}", {"Put": put}))
        old_rps = set(old.allocations) if old else set()
        new_rps = set(new.allocations) if new else set()
        for rp in sorted(old_rps - new_rps):
            ops.append(Op(f"allocation:{rp}:{uuid}", {"Delete": {"TableName": self._table,
                                                                  "Key": allocation_key(rp, uuid)}}))
        if new is not None:
            for rp in sorted(new_rps):
                ops.append(Op(f"allocation:{rp}:{uuid}", {"Put": {"TableName": self._table, "Item": to_item({
                    "pk": f"PLRP#{rp}", "sk": f"ALLOC#{uuid}", "resources": new.allocations[rp],
                    "consumerGeneration": new.generation, "updatedAt": now(),
                })}}))
        return ops

    def create_class(self, name: str) -> bool:
        """False when the class exists already."""
        return put_if(self._client, self._table,
                      to_item({"pk": "PLRC", "sk": name, "refs": 0, "createdAt": now()}), "attribute_not_exists(pk)")

    def rename_class(self, name: str, new_name: str) -> None:
        """ConditionFailed names `old_class` (gone, or held since read) or `new_class` (the name is taken)."""
        self._transact(items.rename_class(self._table, name, new_name))

    def delete_class(self, name: str) -> bool:
        """False when the class is missing or still held in an inventory."""
        return delete_if(self._client, self._table, class_key(name), "attribute_exists(pk) AND refs = :zero",
                         values={":zero": {"N": "0"}})

    def create_trait(self, name: str) -> bool:
        """False when the custom trait exists already."""
        return put_if(self._client, self._table, items.custom_trait_item(name), "attribute_not_exists(pk)")

    def delete_trait(self, name: str) -> bool:
        """False when the custom trait is missing or still held by a provider (refs > 0)."""
        return delete_if(self._client, self._table, trait_key(name), "attribute_exists(pk) AND refs = :zero",
                         values={":zero": {"N": "0"}})

    def write_traits(self, read: Provider, traits: frozenset[str]) -> Provider:
        """Replace the provider's traits, with its custom traits' holder items (`_commit_with_members`);
        generation +1. ConditionFailed names `provider` (changed since read) or `trait_ref:<name>` (that
        custom trait was deleted since)."""
        written, ops = items.write_traits(self._table, read, traits)
        self._commit_with_members(items.TRAIT_HOLDERS, read, written, ops)
        return written
