"""Placement operations: read, decide (rules.py), write one transaction; retry a lost race.

A transaction canceled by a condition means another write changed an item since our read:
read again and decide again, a bounded number of times (Placement retries allocation
writes the same way), then `ConcurrentUpdate`. Decisions that depend on what the caller
sent (a provider or consumer generation) fail at once with their own conflict. Every
refusal is a domain error (errors.py); what the microversion means arrives as `Features`.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable
from typing import Any, TypeVar

from chalicelib.config import PlacementCacheSettings, PlacementCandidateSettings
from chalicelib.placement import errors, items, reshape, rules, traits, trees
from chalicelib.placement.candidate_query import CandidateQuery
from chalicelib.placement.candidates import Result
from chalicelib.placement.classes import is_custom, is_standard
from chalicelib.placement.known_inventories import KnownInventories
from chalicelib.placement.list_filters import MemberOf, has_room, indexed_class, narrowest, unknown_class
from chalicelib.placement.lru import BoundedLru
from chalicelib.placement.microversion import Features
from chalicelib.placement.models import Consumer, ConsumerWrite, Inventory, Provider
from chalicelib.placement.reshaper import Reshaper
from chalicelib.placement.store import PlacementStore
from chalicelib.placement.traits import TraitListFilter, TraitQuery
from chalicelib.store.ops import ConditionFailed
from chalicelib.store.retry import pause_before_retry

T = TypeVar("T")

# Placement's `allocation_conflict_retry_count` is 10; we allow more because a DynamoDB race is
# cheaper to lose than a SQL one and the threads test piles many writers on one provider.
RETRIES = 20
TREE_READS = 3  # reads of a tree's index while its counters promise providers it does not list yet

# A reshape reads its consumers (one BatchGet per 100) this many at a time.
RESHAPE_READERS = 4

# GET /usages?consumer_type=all (1.38): every type summed under this key.
ALL_CONSUMER_TYPES = "all"


def _unknown_trait(name: str) -> errors.PlacementError:
    return errors.UnknownTrait(f'Invalid trait(s) in "required" parameter: No such trait(s): {name}.')


def _no_provider(uuid: str) -> errors.PlacementError:
    return errors.ProviderNotFound(f"No resource provider with uuid {uuid} found")


class PlacementService:
    def __init__(self, store: PlacementStore, candidates: PlacementCandidateSettings | None = None,
                 caches: PlacementCacheSettings | None = None) -> None:
        self.store = store
        self.candidate_settings = candidates or PlacementCandidateSettings.from_env()
        self.reshaper = Reshaper(store)
        caches = caches or PlacementCacheSettings.from_env()
        self.known = KnownInventories(caches.known_inventories)
        # consumer uuid -> the providers it held when this process last read or wrote it (decision 0051)
        self.holdings: BoundedLru[str, tuple[str, ...]] = BoundedLru(caches.known_consumers)

    def _retrying(self, attempt: Callable[[], T], exhausted: Callable[[], errors.PlacementError]) -> T:
        """`retrying`, and a write that meets a reshape's fence has it finished or rolled back (or answers 409
        at once while its owner holds it: reshaper.BUSY)."""
        for n in range(RETRIES):
            try:
                return attempt()
            except ConditionFailed:
                pause_before_retry(n)
            except reshape.Fenced as fenced:
                self.reshaper.meet(fenced.reshape_id)
        raise exhausted()

    def _reads(self, uuid: str, first: Provider | None) -> Callable[[], Provider]:
        """The provider each attempt of a write reads: `first` (what the handler read for its 404, consistently)
        on the first attempt, read again on every retry (a retry follows a condition that failed on it)."""
        pending = [first] if first is not None else []
        return lambda: pending.pop() if pending else self.provider(uuid)

    @staticmethod
    def _unfenced(read: Provider) -> Provider:
        if read.fence is not None:
            raise reshape.Fenced(read.fence)
        return read

    def _fenced_parents(self, failed: ConditionFailed, parents: dict[str, str | None]) -> None:
        """A write refused by a parent's counter (`parents`: its operation name -> that parent): the reshape
        fencing that parent, if one does, is met (`reshape.Fenced`); otherwise the write is read again."""
        for name, uuid in parents.items():
            if uuid is not None and name in failed and (parent := self.store.provider(uuid)) is not None:
                self._unfenced(parent)

    # --- resource providers --------------------------------------------------------------------

    def create_provider(self, name: str, uuid: str | None, parent_uuid: str | None = None) -> Provider:
        provider = Provider(uuid=uuid or str(uuidlib.uuid4()), name=name, created_at=items.now_us(),
                            parent_uuid=parent_uuid)

        def refused(reason: str) -> errors.PlacementError:
            return errors.Invalid(f'Unable to create resource provider "{name}", {provider.uuid}: '
                                  f"Object action create failed because: {reason}")

        if not name:  # as Placement (its schema allows "", its object refuses it)
            raise refused("name is required")

        def attempt() -> Provider:
            created = provider
            if parent_uuid is not None:
                parent = None if parent_uuid == provider.uuid else self.store.provider(parent_uuid)
                problem = trees.create_parent_problem(provider.uuid, parent_uuid, parent)
                if problem:
                    raise refused(problem)
                assert parent is not None
                self._unfenced(parent)  # its counter moves: not while a reshape fences it
                created = Provider(**{**provider.__dict__, "root_uuid": parent.root, "fresh_child": True})
            try:
                self.store.create_provider(created)
            except ConditionFailed as failed:
                if items.PROVIDER not in failed and items.NAME_CLAIM not in failed:
                    raise  # the parent was deleted, moved, fenced or written meanwhile: read again
                # As Placement: a taken uuid is named alone, even when the name is taken too (and a concurrent
                # transaction on the same keys, where the other one won, reads as the uuid taken).
                taken = f"name: {name}" if items.NAME_CLAIM in failed and items.PROVIDER not in failed \
                    else f"uuid: {provider.uuid}"
                raise errors.DuplicateName(f"Conflicting resource provider {taken} already exists.") from None
            return created

        return self._retrying(attempt, lambda: errors.ConcurrentUpdate("Resource provider's parent changed; retry."))

    def provider(self, uuid: str, missing: str | None = None) -> Provider:
        """The provider, or ProviderNotFound with `missing` as its detail (Placement's texts differ by route)."""
        provider = self.store.provider(uuid)
        if provider is None:
            raise errors.ProviderNotFound(missing) if missing is not None else _no_provider(uuid)
        return provider

    def list_providers(self, name: str | None, uuid: str | None, *, in_tree: str | None = None,
                       member_of: MemberOf | None = None, resources: dict[str, int] | None = None,
                       required: TraitQuery | None = None) -> list[Provider]:
        """GET /resource_providers: the filters checked in upstream's order (`_refused_or_lists_none`), then the
        providers read from the narrowest source the filters allow (a key, a name claim, one tree, the holders
        of a required custom trait, the members of an aggregate, the holders of a class, else every provider),
        then every filter as a predicate."""
        root: str | None = None
        anchor: Provider | None = None
        if in_tree is not None:
            anchor = self.store.provider(in_tree)
            if anchor is None:
                return []  # as Placement: an unknown provider's tree is empty
            root = anchor.root
        checked = self._refused_or_lists_none(required, member_of, resources)
        if checked is None:
            return []
        held = traits.narrowest_indexed(required, *checked) if required is not None else None
        any_of = narrowest(member_of.required) if member_of else None
        # a list that filters on no capacity reads its providers without their inventories
        inventories = bool(resources)
        if uuid is not None:
            found = [p for p in [self.store.provider(uuid)] if p is not None]
        elif name is not None:
            found = [p for p in [self.store.provider_by_name(name)] if p is not None]
        elif anchor is not None:
            found = self._tree_by_keys(anchor) or self.tree(anchor.root)
        elif held is not None:
            holders = sorted(self.store.trait_holders(held))
            found = [p for p in self.store.providers(holders, inventories=inventories).values() if p is not None]
        elif any_of is not None:
            members = sorted(self.store.members_of_any(any_of))
            found = [p for p in self.store.providers(members, inventories=inventories).values() if p is not None]
        elif resources:
            found = self._holders_of_one_class(resources)
        else:
            found = [p for p in self.store.providers(self.store.provider_uuids(), inventories=inventories).values()
                     if p is not None]
        found.sort(key=lambda p: (p.created_at, p.uuid))  # creation order, as Placement lists them
        return [p for p in found
                if (name is None or p.name == name) and (uuid is None or p.uuid == uuid)
                and (root is None or p.root == root)
                and (not member_of or member_of.matches(p.aggregates))
                and (not resources or has_room(p, resources))
                and (required is None or required.matches(p.traits))]

    def _holders_of_one_class(self, resources: dict[str, int]) -> list[Provider]:
        """The providers holding an inventory of one class the list asks for (`indexed_class`), from the
        resource-class index, read consistently (the classes are known: the partition's key is a class name)."""
        holders = self.store.class_holders(indexed_class(resources), consistent=True)
        return [p for p in self.store.providers(holders).values() if p is not None]

    def _tree_by_keys(self, anchor: Provider) -> list[Provider] | None:
        """The tree of `anchor` read from its root down a level at a time, by consistent BatchGets of the
        children each item names (a flat root: nothing more to read); None when an item does not know its
        children (written before they were kept) or a child was read in another tree (moved meanwhile)."""
        root = anchor if anchor.root == anchor.uuid else self.store.provider(anchor.root)
        if root is None:
            return None
        members, _ = trees.members_by_level([root], self.store.providers)
        return members.get(root.uuid)

    def tree(self, root: str) -> list[Provider]:
        """The providers of one tree. The index is read again (a few times) while the tree's `children`
        counters promise providers it does not list yet (it lags a write by milliseconds)."""
        members: list[Provider] = []
        for n in range(TREE_READS):
            members = self.store.tree(root)
            try:
                trees.descendants(members, root)
                return members
            except trees.SubtreeIncomplete:
                pause_before_retry(n)
        return members

    def update_provider(self, uuid: str, name: str, *, parent_given: bool = False, parent_uuid: str | None = None,
                        features: Features | None = None, read_first: Provider | None = None) -> Provider:
        """A rename, and from 1.14 a new parent (1.37: another one, or none): the provider, its old and new
        parent's counters and its descendants (root rewritten, or checked) in one transaction. `read_first`:
        the provider as just read (`_reads`)."""
        reparenting = features.reparenting if features is not None else False
        reads = self._reads(uuid, read_first)

        def attempt() -> Provider:
            read = self._unfenced(reads())
            try:
                if not parent_given or parent_uuid == read.parent_uuid:
                    written = self.store.rename_provider(read, name)
                else:
                    written = self._move(read, name, parent_uuid, reparenting)
            except ConditionFailed as failed:
                if items.NAME_CLAIM in failed:
                    raise errors.DuplicateName(f"Conflicting resource provider {name} already exists.") from None
                self._fenced_parents(failed, {items.OLD_PARENT: read.parent_uuid, items.PARENT: parent_uuid})
                raise
            # As upstream's object after save(): the new name, parent and root, the updated_at as read.
            return Provider(**{**written.__dict__, "version": read.version, "updated_at": read.updated_at,
                               "fresh_child": read.fresh_child})

        return self._retrying(attempt, lambda: errors.ConcurrentUpdate("Resource provider changed; retry."))

    def _move(self, read: Provider, name: str, parent_uuid: str | None, reparenting: bool) -> Provider:
        parent = None
        if parent_uuid is not None:
            parent = read if parent_uuid == read.uuid else self.store.provider(parent_uuid)
            if parent is None:
                raise trees.parent_missing_on_update(read.uuid)
            self._unfenced(parent)
        try:
            subtree = trees.descendants(self.store.tree(read.root), read.uuid)
        except trees.SubtreeIncomplete:
            raise ConditionFailed(("tree_index",)) from None  # the index lags: read again
        for descendant in subtree:
            self._unfenced(descendant)
        move = trees.decide_move(read, parent, parent_uuid, subtree, reparenting=reparenting)
        return self.store.update_provider(read, name, move.parent_uuid, move.root, move.descendants)

    def rename_provider(self, uuid: str, name: str) -> Provider:
        return self.update_provider(uuid, name)

    def delete_provider(self, uuid: str) -> None:
        def attempt() -> None:
            read = self.store.provider(uuid)
            if read is None:
                raise errors.ProviderNotFound(f"No resource provider with uuid {uuid} found for delete")
            self._unfenced(read)
            if read.children:
                raise errors.ProviderHasChildren(
                    f"Unable to delete parent resource provider {uuid}: It has child resource providers.")
            if read.usages:
                raise errors.ProviderInUse(
                    f"Unable to delete resource provider {uuid}: Resource provider has allocations.")
            try:
                self.store.delete_provider(read)
            except ConditionFailed as failed:
                self._fenced_parents(failed, {items.PARENT: read.parent_uuid})
                raise

        self._retrying(attempt, lambda: errors.ConcurrentUpdate("Resource provider changed; retry."))

    # --- aggregates ----------------------------------------------------------------------------

    def set_aggregates(self, uuid: str, aggregates: list[str], generation: int | None,
                       features: Features, read_first: Provider | None = None) -> Provider:
        """PUT /resource_providers/{uuid}/aggregates: from 1.19 checked against and bumping the generation.
        `read_first`: the provider as just read (`_reads`)."""
        if len(set(aggregates)) > items.MAX_AGGREGATES:
            raise errors.TooLarge(f"A resource provider is a member of at most {items.MAX_AGGREGATES} aggregates "
                                  "in this service (each is an index item written with it).")

        reads = self._reads(uuid, read_first)

        def attempt() -> Provider:
            read = self._unfenced(reads())
            if features.aggregate_generations and read.generation != generation:
                raise errors.ProviderGenerationConflict(
                    "Resource provider's generation already changed. Please update the generation and try again.")
            return self.store.write_aggregates(read, frozenset(aggregates),
                                               bump_generation=features.aggregate_generations)

        return self._retrying(attempt, lambda: errors.ConcurrentUpdate(
            "Update conflict: Another thread concurrently updated the resource provider data. "
            "Please retry your update"))

    # --- inventories ---------------------------------------------------------------------------

    def _unknown_classes(self, names: list[str]) -> list[str]:
        custom = [n for n in names if not is_standard(n)]
        known = self.store.existing_custom_classes([n for n in custom if is_custom(n)])
        return [n for n in names if not is_standard(n) and n not in known]

    def _write_inventories(self, uuid: str, change: Callable[[Provider], dict[str, Inventory]],
                           conflict: str, read_first: Provider | None = None) -> Provider:
        """`change` applied to the provider as read (`read_first` on the first attempt: `_reads`)."""
        reads = self._reads(uuid, read_first)

        def attempt() -> Provider:
            read = self._unfenced(reads())
            return self.store.write_inventories(read, change(read))

        return self._retrying(attempt, lambda: errors.ConcurrentUpdate(conflict))

    def replace_inventories(self, uuid: str, generation: int, inventories: dict[str, Inventory],
                            features: Features, read_first: Provider | None = None) -> Provider:
        def change(read: Provider) -> dict[str, Inventory]:
            if read.generation != generation:
                raise errors.ProviderGenerationConflict("resource provider generation conflict")
            for rc, inventory in inventories.items():
                problem = rules.capacity_problem(rc, uuid, inventory,
                                                 reserved_may_equal_total=features.reserved_may_equal_total)
                if problem:
                    raise errors.InvalidInventory(
                        f"Unable to update inventory for resource provider {uuid}: {problem}")
            added = [rc for rc in inventories if rc not in read.inventories]
            unknown = self._unknown_classes(added)
            if unknown:
                raise errors.UnknownResourceClass(
                    f"Unknown resource class in inventory for resource provider {uuid}: "
                    f"No such resource class {unknown[0]}.")
            in_use = rules.classes_in_use(read, [rc for rc in read.inventories if rc not in inventories])
            if in_use:
                raise errors.InventoryInUse(f"update conflict: {rules.in_use_message(in_use, uuid)}")
            return dict(inventories)

        return self._write_inventories(uuid, change, "update conflict: Another thread concurrently updated the "
                                       "data. Please retry your update", read_first)

    def add_inventory(self, uuid: str, rc: str, inventory: Inventory, features: Features,
                      read_first: Provider | None = None) -> Provider:
        def change(read: Provider) -> dict[str, Inventory]:
            problem = rules.capacity_problem(rc, uuid, inventory,
                                             reserved_may_equal_total=features.reserved_may_equal_total)
            if problem:
                raise errors.InvalidInventory(f"Unable to create inventory for resource provider {uuid}: {problem}")
            if self._unknown_classes([rc]):
                raise errors.UnknownResourceClass(
                    f"Unable to create inventory for resource provider {uuid}: No such resource class {rc}.")
            if rc in read.inventories:
                raise errors.ConcurrentUpdate(
                    f"Update conflict: Inventory for '{rc}' on resource provider '{uuid}' already exists.")
            return {**read.inventories, rc: inventory}

        return self._write_inventories(uuid, change, "Update conflict: Another thread concurrently updated the "
                                       "data. Please retry your update", read_first)

    def update_inventory(self, uuid: str, rc: str, generation: int, inventory: Inventory,
                         features: Features, read_first: Provider | None = None) -> Provider:
        def change(read: Provider) -> dict[str, Inventory]:
            if read.generation != generation:
                raise errors.ProviderGenerationConflict("resource provider generation conflict")
            problem = rules.capacity_problem(rc, uuid, inventory,
                                             reserved_may_equal_total=features.reserved_may_equal_total)
            if problem:
                raise errors.InvalidInventory(f"Unable to update inventory for resource provider {uuid}: {problem}")
            if self._unknown_classes([rc]):
                raise errors.NotFound(f"No such resource class {rc}.")
            if rc not in read.inventories:
                raise errors.Invalid(
                    f"No inventory record with resource class for resource provider {uuid}: "
                    f"No inventory of class {rc} found.")
            return {**read.inventories, rc: inventory}

        return self._write_inventories(uuid, change, "update conflict: Another thread concurrently updated the "
                                       "data. Please retry your update", read_first)

    def delete_inventory(self, uuid: str, rc: str, read_first: Provider | None = None) -> None:
        def change(read: Provider) -> dict[str, Inventory]:
            if self._unknown_classes([rc]):
                raise errors.NotFound(f"No inventory of class {rc} found for delete: No such resource class {rc}.")
            if rc not in read.inventories:
                raise errors.NotFound(
                    f"No inventory of class {rc} found for delete: No inventory of class {rc} found for delete")
            if read.used(rc):  # Placement answers this one as a concurrent update, not inventory.inuse
                raise errors.InventoryInUse(
                    f"Unable to delete inventory of class {rc}: {rules.in_use_message([rc], uuid)}",
                    errors.CONCURRENT_UPDATE)
            return {k: v for k, v in read.inventories.items() if k != rc}

        self._write_inventories(uuid, change, f"Unable to delete inventory of class {rc}: Another thread "
                                "concurrently updated the data. Please retry your update", read_first)

    def delete_inventories(self, uuid: str, read_first: Provider | None = None) -> None:
        def change(read: Provider) -> dict[str, Inventory]:
            in_use = rules.classes_in_use(read, read.inventories)
            if in_use:
                raise errors.InventoryInUse(rules.in_use_message(in_use, uuid))
            return {}

        self._write_inventories(uuid, change, f"Unable to delete inventory for resource provider {uuid} because "
                                "the inventory was updated by another process. Please retry your request.", read_first)

    # --- allocations ---------------------------------------------------------------------------

    def consumer(self, uuid: str) -> tuple[Consumer | None, dict[str, int]]:
        """GET /allocations/{c}: the consumer and the generation of each provider it holds (of those that exist);
        None for one without allocations too (an empty first write leaves one), which Placement shows as none."""
        held = self.holdings.get(uuid)
        generations: dict[str, int] = {}
        if held is None:
            consumer = self.store.consumer(uuid)
        else:  # one call when it holds what it held (docs/decisions/0051-consumers-read-with-their-providers.md)
            consumer, generations = self.store.consumer_and_generations(uuid, list(held))
        if consumer is None or not consumer.allocations:
            self.holdings.drop([uuid])
            return None, {}
        unread = sorted(set(consumer.allocations) - set(held or ()))
        if unread:
            generations.update(self.store.provider_generations(unread))
        self.holdings.put_all([(uuid, tuple(consumer.allocations))])
        return consumer, {rp: g for rp, g in generations.items() if rp in consumer.allocations}

    def write_allocations(self, writes: list[ConsumerWrite], *, single: bool) -> None:
        """PUT /allocations/{c} (single) or POST /allocations: one BatchGet, one transaction."""
        provider_uuids = sorted({rp for w in writes for rp in w.allocations})
        consumer_uuids = [w.uuid for w in writes]

        def prefix(consumer_uuid: str) -> str:
            return (f"Unable to allocate inventory for consumer {consumer_uuid}: " if single
                    else "Unable to allocate inventory ")

        def attempt() -> None:
            consumers, providers = self.store.read_for_allocation(consumer_uuids, provider_uuids)
            self.known.remember(providers.values())
            held = {rc for p in providers.values() if p for rc in p.inventories}
            wanted = {rc for w in writes for res in w.allocations.values() for rc in res}
            unknown = set(self._unknown_classes(sorted(rc for rc in wanted if rc not in held)))
            decision = rules.decide_allocations(
                writes, consumers, providers, lambda rc: rc not in unknown, prefix)
            self.store.write_allocations(decision, consumers)

        if not self._claimed_on_known_inventories(writes, provider_uuids, prefix):
            self._retrying(attempt, lambda: errors.ConcurrentUpdate(
                "Inventory and/or allocations changed while attempting to allocate: Another thread concurrently "
                "updated the resource provider data. Please retry your update"))
        self._remember_holdings(writes)

    def _remember_holdings(self, writes: list[ConsumerWrite]) -> None:
        """What each written consumer now holds, for its next read (decision 0051)."""
        self.holdings.drop([w.uuid for w in writes if not w.allocations])
        self.holdings.put_all([(w.uuid, tuple(w.allocations)) for w in writes if w.allocations])

    def _claimed_on_known_inventories(self, writes: list[ConsumerWrite], provider_uuids: list[str],
                                      prefix: Callable[[str], str]) -> bool:
        """New consumers claimed on inventories this process has read before: one transaction, no read
        (docs/decisions/0050-claims-on-known-inventories.md); new: sent with `consumer_generation: null`
        (1.28+), which says so. The transaction is conditioned on all the
        decision took from them (each provider's creation stamp and inventory version, room for each class
        it grows, no reshape's fence) and on each consumer not existing. False, with nothing written, when
        the decision needs what is not known (a consumer that may exist, an unknown provider or class, any
        refusal) or the transaction is canceled: the caller then reads and decides as always."""
        if not writes or any(not (w.allocations and w.check_generation and w.generation is None) for w in writes):
            return False
        known = self.known.known(provider_uuids)
        if known is None:
            return False
        if any(rc not in known[rp].inventories for w in writes for rp, res in w.allocations.items() for rc in res):
            return False
        consumers: dict[str, Consumer | None] = {w.uuid: None for w in writes}
        try:
            decision = rules.decide_allocations(writes, consumers, known, lambda _rc: True, prefix)
            self.store.write_allocations(decision, consumers)
        except (errors.PlacementError, ConditionFailed):
            self.known.forget(provider_uuids)
            return False
        return True

    def delete_allocations(self, consumer_uuid: str) -> None:
        def attempt() -> None:
            consumer = self.store.consumer_for_write(consumer_uuid)
            if consumer is None or not consumer.allocations:  # a consumer without allocations stays, as upstream
                raise errors.NotFound(f"No allocations for consumer '{consumer_uuid}'")
            self.store.delete_allocations(consumer, rules.release_all(consumer))

        self._retrying(attempt, lambda: errors.ConcurrentUpdate(
            "Inventory and/or allocations changed while attempting to delete: Please retry your request."))
        self.holdings.drop([consumer_uuid])

    def reshape(self, inventories: dict[str, tuple[int, dict[str, Inventory]]], writes: list[ConsumerWrite]) -> None:
        """POST /reshaper: read everything involved (the providers named, the consumers and the providers they
        hold allocations on now), decide as upstream (reshape.decide), then the protocol (reshaper.py)."""
        consumer_uuids = [w.uuid for w in writes]
        named = list(dict.fromkeys([*inventories, *(rp for w in writes for rp in w.allocations)]))

        def attempt() -> None:
            consumers, providers = self.store.read_for_allocation(consumer_uuids, named, workers=RESHAPE_READERS)
            held = sorted({rp for c in consumers.values() if c for rp in c.allocations} - set(providers))
            if held:
                _unused, more = self.store.read_for_allocation([], held)
                providers.update(more)
            known = {rc for p in providers.values() if p for rc in p.inventories}
            wanted = {rc for _g, inv in inventories.values() for rc in inv} | {
                rc for w in writes for res in w.allocations.values() for rc in res}
            unknown = set(self._unknown_classes(sorted(wanted - known)))
            plan = reshape.decide(uuidlib.uuid4().hex, inventories, writes, consumers,
                                  {rp: providers.get(rp) for rp in [*named, *held]}, lambda rc: rc not in unknown)
            reshape.check_size(plan)
            self.reshaper.run(plan)

        self._retrying(attempt, lambda: errors.ConcurrentUpdate(
            "update conflict: Another thread concurrently updated the data. Please retry your update"))
        self._remember_holdings(writes)

    def provider_allocations(self, uuid: str) -> tuple[Provider, dict[str, dict[str, Any]]]:
        provider, allocations = self.store.provider_with_allocations(uuid)
        if provider is None:
            raise errors.ProviderNotFound(
                f"Resource provider '{uuid}' not found: No resource provider with uuid {uuid} found")
        return provider, allocations

    # --- allocation candidates ----------------------------------------------------------------

    def allocation_candidates(self, query: CandidateQuery) -> Result:
        """Read-only: candidates from indexed state (they may be stale; a claim re-checks everything)."""
        from chalicelib.placement.candidate_search import CandidateSearch

        return CandidateSearch(self.store, self.candidate_settings).run(query)

    # --- usages and resource classes -----------------------------------------------------------

    def usage_totals(self, project: str, user: str | None) -> dict[str, int]:
        return self.store.usage_totals(project, user)

    def usages_by_consumer_type(self, project: str, user: str | None,
                                consumer_type: str | None) -> dict[str, dict[str, int]]:
        """1.38: usage per consumer type with `consumer_count`; `all` sums every type under one key,
        `unknown` is the consumers written without a type; any other value is one type (maybe none)."""
        if consumer_type is None:
            return self.store.usages_by_type(project, user)
        usage = self.store.usage_of_type(project, user, None if consumer_type == ALL_CONSUMER_TYPES
                                         else consumer_type)
        return {consumer_type: usage} if usage else {}

    def custom_classes(self) -> list[str]:
        return sorted(item["sk"] for item in self.store.custom_classes())

    def class_exists(self, name: str) -> bool:
        return is_standard(name) or (is_custom(name) and self.store.custom_class(name) is not None)

    def create_class(self, name: str) -> bool:
        """True when created, False when it already existed."""
        return self.store.create_class(name)

    def rename_class(self, name: str, new_name: str) -> None:
        """PUT /resource_classes/{name} at 1.2-1.6. Placement renames the class in place and every inventory and
        allocation of it follows (they hold its id). Here they hold its name, on every provider, consumer and
        usage item: a class in use (`refs` > 0: held in an inventory or by a fleet object) is refused with 409
        rather than rewritten across an unbounded number of items (docs/placement.md)."""
        if is_standard(name):
            raise errors.Invalid(f"Cannot update standard resource class {name}")

        def attempt() -> None:
            item = self.store.custom_class(name) if is_custom(name) else None
            if item is None:
                raise errors.NotFound(f"No such resource class {name}.")
            if new_name == name:
                return
            if int(item.get("refs", 0)):
                if self.store.custom_class(new_name) is not None:  # upstream's first refusal: the name is taken
                    raise errors.ResourceClassExists(f"Resource class already exists: {new_name}")
                raise errors.ClassRenameRefused(
                    f"Cannot rename resource class {name}: it is in use (in inventories or fleet pools). This "
                    "service renames only classes nothing holds; remove its inventories first, or create "
                    f"{new_name} and move them.")
            try:
                self.store.rename_class(name, new_name)
            except ConditionFailed as failed:
                if items.NEW_CLASS in failed:
                    raise errors.ResourceClassExists(f"Resource class already exists: {new_name}") from None
                raise

        self._retrying(attempt, lambda: errors.ConcurrentUpdate("Resource class changed; retry."))

    def delete_class(self, name: str) -> None:
        if is_standard(name):
            raise errors.Invalid(
                f"Error in delete resource class: Cannot delete standard resource class {name}.")
        if not self.store.delete_class(name):
            if self.store.custom_class(name) is None:
                raise errors.NotFound(f"No such resource class {name}.")
            raise errors.ResourceClassInUse(
                f"Error in delete resource class: Cannot delete resource class {name}. "
                "Class is in use in inventory.")

    # --- traits --------------------------------------------------------------------------------

    def known_traits(self, names: list[str]) -> set[str]:
        """Those of `names` that exist: standard ones (os-traits) and registered custom ones (one BatchGet)."""
        return set(self._trait_lookup(names)[0])

    def _trait_lookup(self, names: list[str]) -> tuple[frozenset[str], dict[str, int], frozenset[str]]:
        """Those of `names` that exist, how many providers hold each existing custom one, and those of them
        whose holders are indexed (decision 0053); one BatchGet: standard traits are os-traits' and not counted."""
        standard = {n for n in names if traits.is_standard(n)}
        counts = self.store.custom_trait_counts(sorted({n for n in names if n not in standard}))
        holders = {name: refs for name, (refs, _) in counts.items()}
        indexed = frozenset(name for name, (_, listed) in counts.items() if listed)
        return frozenset(standard | set(holders)), holders, indexed

    def list_traits(self, wanted: TraitListFilter, *, created_at: bool = True) -> list[tuple[str, int | None]]:
        """(name, created at: None for a standard trait, and for every trait unless `created_at`) of every trait
        the filter keeps, by name."""
        custom = {str(item["sk"]): item for item in self._custom_traits_for(wanted, created_at=created_at)}
        found: list[tuple[str, int | None]] = [(n, None) for n in traits.standard_matching(wanted)]
        found += [(n, int(item.get("createdAt", 0)) or None) for n, item in custom.items() if wanted.matches_name(n)]
        if wanted.associated is not None:
            held = self.store.held_traits()
            found = [(n, at) for n, at in found if (n in held) == wanted.associated]
        return sorted(found)

    def _custom_traits_for(self, wanted: TraitListFilter, *, created_at: bool) -> list[dict[str, Any]]:
        """The custom traits a list may show: with `name=in:`, only those named, read by key (Nova asks for the
        few traits it has not seen yet, however many a cloud has); with `name=startswith:`, the registry from
        the prefix's literal start on; else the whole registry."""
        named = traits.custom_names_asked(wanted)
        if named is None:
            return self.store.custom_traits(created_at=created_at, start=traits.custom_prefix_asked(wanted))
        return self.store.custom_traits_named(named, created_at=created_at)

    def trait_created_at(self, name: str) -> int | None:
        """When the trait was created (None for a standard trait); TraitNotFound when there is no such trait."""
        if traits.is_standard(name):
            return None
        item = self.store.custom_trait(name) if traits.is_custom(name) else None
        if item is None:
            raise errors.TraitNotFound(f"No such trait(s): {name}.")
        return int(item.get("createdAt", 0)) or None

    def create_trait(self, name: str) -> tuple[bool, int | None]:
        """(created, created at) of PUT /traits/{name}: False when it existed already."""
        if not traits.is_custom_name(name):
            raise errors.Invalid(traits.INVALID_CUSTOM)
        if self.store.create_trait(name):
            return True, items.now()
        item = self.store.custom_trait(name)
        return False, int(item.get("createdAt", 0)) if item else None

    def delete_trait(self, name: str) -> None:
        if traits.is_standard(name):
            raise errors.StandardTrait(f"Cannot delete standard trait {name}.")
        if not traits.is_custom(name):
            raise errors.TraitNotFound(f"No such trait(s): {name}.")
        if not self.store.delete_trait(name):
            if self.store.custom_trait(name) is None:
                raise errors.TraitNotFound(f"No such trait(s): {name}.")
            raise errors.TraitInUse(f"The trait {name} is in use by a resource provider.")

    def set_provider_traits(self, uuid: str, generation: int | None, names: list[str]) -> Provider:
        """PUT (generation given) or DELETE (None) /resource_providers/{uuid}/traits: the provider with exactly
        these traits. Unchanged traits write nothing (and keep the generation), as upstream."""
        wanted = frozenset(names)
        if len([n for n in wanted if traits.is_custom(n)]) > items.MAX_CUSTOM_TRAITS:
            raise errors.TooLarge(f"A resource provider holds at most {items.MAX_CUSTOM_TRAITS} custom traits "
                                  "in this service.")

        def unknown_names() -> list[str]:
            known = self.known_traits(sorted(wanted))
            return [n for n in dict.fromkeys(names) if n not in known]

        def refuse_unknown(unknown: list[str]) -> None:
            if unknown:
                raise errors.UnknownTrait(f"No such trait {', '.join(unknown)}")

        def attempt() -> Provider:
            read = self._unfenced(self.provider(uuid))
            if generation is not None and read.generation != generation:
                raise errors.ProviderGenerationConflict(
                    "Resource provider's generation already changed. Please update the generation and try again.")
            if any(not traits.is_standard(n) and not traits.is_custom(n) for n in wanted):
                refuse_unknown(unknown_names())  # a name that can be no trait: name every unknown one
            if read.traits == wanted:
                return read
            # The custom traits added are not read first: the transaction's `trait_ref` conditions say whether
            # they exist (those the provider keeps exist: it holds them), saving a round trip per write.
            try:
                return self.store.write_traits(read, wanted)
            except ConditionFailed as failed:
                if any(name.startswith(items.TRAIT_REF) for name in failed.names):
                    refuse_unknown(unknown_names())
                raise

        return self._retrying(attempt, lambda: errors.ConcurrentUpdate(
            "Another thread concurrently updated the resource provider data. Please retry your update"))

    def _refused_or_lists_none(self, required: TraitQuery | None, member_of: MemberOf | None,
                               resources: dict[str, int] | None) -> tuple[dict[str, int], frozenset[str]] | None:
        """The 400s of a list's filters, raised in upstream's order (`_get_all_by_filters_from_db`), and None
        where upstream's list is empty before a later check: an unknown required trait is 400; when no provider
        at all has the required traits the list is empty; an unknown forbidden trait is 400; when no provider
        at all is in every member_of the list is empty; an unknown class is 400. Those two "no provider at all"
        facts are global (whatever else narrows the list) and change the answer only where a 400 would follow:
        they are computed only then, except a custom trait's holder count, which the lookup reads anyway.
        Otherwise the custom traits' holder counts and which of them have their holders indexed."""
        holders: dict[str, int] = {}
        indexed: frozenset[str] = frozenset()
        if required is not None:
            known, holders, indexed = self._trait_lookup(required.required_names() + sorted(required.forbidden))
            unknown = traits.first_unknown(required.required_names(), known.__contains__)
            if unknown is not None:
                raise _unknown_trait(unknown)
            if required.required and traits.held_by_none(required, holders):
                return None
            unknown = traits.first_unknown(sorted(required.forbidden), known.__contains__)
            if unknown is not None:
                if self._nobody_has_required(required):
                    return None
                raise _unknown_trait(unknown)
        unknown_classes = self._unknown_classes(sorted(resources)) if resources else []
        if not unknown_classes:
            return holders, indexed
        if required is not None and self._nobody_has_required(required):
            return None
        if member_of is not None and self._nobody_in_every_member_of(member_of):
            return None
        raise unknown_class(unknown_classes[0])

    def _nobody_has_required(self, query: TraitQuery) -> bool:
        """No provider at all has the required traits (every provider read: only on the way to a 400, which
        upstream answers only when some provider has them)."""
        if not query.required:
            return False
        wanted = TraitQuery(required=query.required)
        everyone = self.store.providers(self.store.provider_uuids(), inventories=False).values()
        return not any(p is not None and wanted.matches(p.traits) for p in everyone)

    def _nobody_in_every_member_of(self, member_of: MemberOf) -> bool:
        """No provider at all is in one of the aggregates of each member_of (upstream's
        `provider_ids_matching_aggregates`): read on the way to a 400 only, like `_nobody_has_required`."""
        return bool(member_of.required) and not self.store.member_in_every(list(member_of.required))
