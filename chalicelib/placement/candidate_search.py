"""GET /allocation_candidates' reads: what the pure generator (candidates.py) needs, from indexed state
only, and no more of it than the answer needs (docs/placement.md, "Allocation candidates").

1. The names are checked as Placement checks them, in its order: the `root_required` traits, then per
   group its classes and its traits (unknown: 400). A `member_of` set no provider is in ends the request
   with no candidates before its traits are checked, as upstream's does; so does, for an unknown name,
   a `root_required` no root matches or an earlier group that alone has no candidates (upstream searches
   group by group, each after its names).
2. Which providers can take part:
   - without sharing providers (the PLSHARE index is empty: one Query) every candidate lies in one tree,
     so trees are independent. With `in_tree`, only that tree is read. Otherwise the resource-class index
     of the first requested class is read a page at a time; each page's providers, their roots and the
     trees of roots with children are read, the generator runs over those trees alone, and reading stops
     once `limit` (or the candidate bound) candidates are held: upstream answers some `limit` of all its
     candidates in no defined order (its SQL sets), and these are some of them.
   - with sharing providers, or breadth-first (which spreads the bound over every tree), everything the
     request can touch is read first: every holder of every requested class, the sharing providers and
     the members of their aggregates, and the trees of them all.
3. The generator's answer is cut to `limit`, with the summaries of the trees it uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from chalicelib.config import PlacementCandidateSettings
from chalicelib.placement import errors, traits, trees
from chalicelib.placement.candidate_query import CandidateQuery
from chalicelib.placement.candidates import (
    EMPTY,
    Candidate,
    InventoryView,
    ProviderView,
    RequestGroup,
    RequestWide,
    Result,
    Snapshot,
    Summary,
    allocation_candidates,
    anchors_filter,
    one_provider_per_tree,
)
from chalicelib.placement.classes import is_standard
from chalicelib.placement.models import Provider
from chalicelib.placement.store import PlacementStore

PAGE = 300  # resource-class index keys per page: BatchGets of their providers, BATCHES_AT_ONCE at once
BATCHES_AT_ONCE = 3  # the store serves them in parallel while the last answer is decoded
TREE_QUERIES_AT_ONCE = 8  # gsi1 Queries of one page's trees in flight at once (the boto3 client is thread-safe)


def view(provider: Provider) -> ProviderView:
    return ProviderView(
        uuid=provider.uuid, root=provider.root, parent=provider.parent_uuid, traits=provider.traits,
        aggregates=provider.aggregates,
        inventories={rc: InventoryView(inv.total, inv.reserved, inv.min_unit, inv.max_unit, inv.step_size,
                                       inv.allocation_ratio) for rc, inv in provider.inventories.items()},
        usages=dict(provider.usages),
    )


def snapshot_of(providers: Iterable[Provider]) -> Snapshot:
    """Providers in creation order (the order Placement lists them)."""
    ordered = sorted(providers, key=lambda p: (p.created_at, p.uuid))
    return Snapshot({p.uuid: view(p) for p in ordered})


class CandidateSearch:
    """One request's reads; providers are read once each and kept for the request."""

    def __init__(self, store: PlacementStore, settings: PlacementCandidateSettings) -> None:
        self._store = store
        self._settings = settings
        self._read: dict[str, Provider | None] = {}

    # --- names ---------------------------------------------------------------------------------

    def _missing_traits(self, names: Sequence[str]) -> list[str]:
        custom = [n for n in names if not traits.is_standard(n)]
        known = self._store.existing_custom_traits(custom)
        return [n for n in names if not traits.is_standard(n) and n not in known]

    def _check_traits(self, names: Iterable[str]) -> None:
        ordered = list(dict.fromkeys(names))
        if ordered:
            missing = self._missing_traits(ordered)
            if missing:
                raise errors.Invalid(f"No such trait(s): {missing[0]}.")

    def _check_classes(self, group: RequestGroup) -> None:
        custom = [rc for rc in group.resources if not is_standard(rc)]
        known = self._store.existing_custom_classes(custom) if custom else set()
        for rc in group.resources:
            if not is_standard(rc) and rc not in known:
                raise errors.Invalid(
                    f"Invalid resource class in resources parameter: No such resource class {rc}.")

    def _no_member_named(self, group: RequestGroup) -> bool:
        """Some member_of set of the group whose aggregates' membership items name nobody: then nobody is in it
        (the items are hints that may name too many, never too few: decision 0047)."""
        return any(not self._store.members_of_any(any_of) for any_of in group.member_of)

    def _check_group_traits(self, group: RequestGroup) -> bool:
        """The group's trait names checked. False (no candidates, as upstream) when one is unknown but a
        member_of set of the group has nobody in it after all, its items naming only former members: read
        only on the way to that 400, since otherwise the search answers the same from the providers."""
        try:
            self._check_traits([t for any_of in group.required_traits for t in sorted(any_of)]
                               + sorted(group.forbidden_traits))
        except errors.Invalid:
            if any(not self._store.member_in_every([any_of]) for any_of in group.member_of):
                return False
            raise
        return True

    def _checked(self, query: CandidateQuery) -> bool:
        """False when the request has no candidates before any provider is read."""
        wide = query.wide
        self._check_traits([*sorted(wide.root_required), *sorted(wide.root_forbidden)])
        for index, group in enumerate(query.groups):
            try:
                self._check_classes(group)
                if group.member_of and self._no_member_named(group):
                    return False
                if not self._check_group_traits(group):
                    return False
            except errors.Invalid:
                if self._placement_stops_before(query, index):
                    return False
                raise
        return True

    def _placement_stops_before(self, query: CandidateQuery, index: int) -> bool:
        """Whether Placement answers nothing before it checks the names of group `index`: it searches group
        by group, each right after its names are checked, and stops with no candidates as soon as
        `root_required` matches no root or a group alone has none. Only on this error path, so every
        provider is read (one gsi1 Query and their items), as GET /resource_providers' `required` does."""
        wide = query.wide
        anchored = bool(wide.root_required or wide.root_forbidden)
        if index == 0 and not anchored:
            return False
        snapshot = snapshot_of(self._providers(self._store.provider_uuids()).values())
        if anchored and not anchors_filter(snapshot, wide):
            return True
        alone = replace(wide, limit=None, group_policy=None, same_subtrees=(), nested_aware=True, max_candidates=1)
        return any(not allocation_candidates(snapshot, [group], alone).candidates for group in query.groups[:index])

    # --- providers -----------------------------------------------------------------------------

    def _providers(self, uuids: Iterable[str]) -> dict[str, Provider]:
        ordered = list(dict.fromkeys(uuids))
        wanted = [u for u in ordered if u not in self._read]
        if wanted:
            found = self._store.providers_for_candidates(wanted, workers=BATCHES_AT_ONCE)
            for uuid in wanted:
                self._read[uuid] = found.get(uuid)
        return {u: p for u in ordered if (p := self._read.get(u)) is not None}

    def _trees(self, roots: Iterable[str]) -> list[Provider]:
        """Every provider of these trees. A root without children is its own tree; below one whose items know
        their children (`child_uuids`), the tree is read a level at a time by key, every tree's level in the
        same BatchGets; a tree where an item does not know them, or a child read elsewhere (moved since),
        is read by one gsi1 Query (those in parallel: their latencies do not add up)."""
        root_items = self._providers(roots)
        moved = [p.uuid for p in root_items.values() if p.parent_uuid]  # no longer a root: by the index
        by_level, unnamed = trees.members_by_level(
            [p for p in root_items.values() if not p.parent_uuid], self._providers)
        members = {root: [p.uuid for p in found] for root, found in by_level.items()}
        members.update(self._queried_trees([*moved, *sorted(unnamed)]))
        return list(self._providers(u for root in root_items for u in members[root]).values())

    def _queried_trees(self, roots: list[str]) -> dict[str, list[str]]:
        if len(roots) > 1:
            with ThreadPoolExecutor(max_workers=min(TREE_QUERIES_AT_ONCE, len(roots))) as pool:
                return dict(zip(roots, pool.map(self._store.tree_uuids, roots), strict=True))
        return {root: self._store.tree_uuids(root) for root in roots}

    def _trees_of(self, uuids: Iterable[str]) -> list[Provider]:
        return self._trees(dict.fromkeys(p.root for p in self._providers(uuids).values()))

    # --- the search ----------------------------------------------------------------------------

    def run(self, query: CandidateQuery) -> Result:
        wide = replace(query.wide, max_candidates=self._settings.max_candidates, strategy=self._settings.strategy)
        if not self._checked(query):
            return EMPTY
        groups = list(query.groups)
        want = min(wide.limit, wide.max_candidates) if wide.limit else wide.max_candidates
        sharing = self._store.sharing_providers()
        if not sharing:
            anchors = [g.in_tree for g in groups if g.in_tree]
            if anchors:
                found = self._providers(anchors)
                roots = {found[a].root for a in anchors if a in found}
                if len(found) < len(set(anchors)) or len(roots) != 1:  # a missing anchor, or two trees
                    return EMPTY
                return _cut(allocation_candidates(snapshot_of(self._trees(roots)), groups, wide), wide.limit)
            if wide.strategy == "depth-first":
                return self._tree_by_tree(groups, wide, want)
        holders = [u for g in groups for rc in g.resources for u in self._store.class_holders(rc)]
        linked = list(sharing)
        for provider in self._providers(sharing).values():
            for aggregate in sorted(provider.aggregates):
                linked += sorted(self._store.aggregate_members(aggregate))
        providers = self._trees_of([*holders, *linked])
        return _cut(allocation_candidates(snapshot_of(providers), groups, wide), wide.limit)

    def _tree_by_tree(self, groups: list[RequestGroup], wide: RequestWide, want: int) -> Result:
        """No sharing providers: trees are independent, so read them a page of the class index at a time."""
        driving = next(rc for g in groups for rc in g.resources)
        done: set[str] = set()
        kept: dict[object, Candidate] = {}
        summaries: list[Summary] = []
        for page in self._store.class_holder_pages(driving, PAGE):
            roots = [r for r in dict.fromkeys(p.root for p in self._providers(page).values()) if r not in done]
            if not roots:
                continue
            done.update(roots)
            snapshot = snapshot_of(self._trees(roots))
            # Before 1.29 the summaries after `limit` name every provider any candidate of a kept tree drew
            # from (upstream limits after generating): with trees there, `limit` does not bound the chunk.
            bound = wide.max_candidates if one_provider_per_tree(wide, snapshot.has_trees) else want
            chunk = replace(wide, limit=None, max_candidates=bound - len(kept))
            result = allocation_candidates(snapshot, groups, chunk)
            for candidate in result.candidates:
                kept.setdefault(candidate.key(), candidate)
            summaries += result.summaries
            if len(kept) >= want:
                break
        return _cut(Result(list(kept.values()), summaries), wide.limit)


def _cut(result: Result, limit: int | None) -> Result:
    """The first `limit` candidates, with the summaries of the trees they draw from."""
    candidates = result.candidates[:limit] if limit else result.candidates
    if len(candidates) == len(result.candidates) and candidates:
        return result
    if not candidates:
        return EMPTY
    return _with_trees_of(candidates, result.summaries)


def _with_trees_of(candidates: list[Candidate], summaries: list[Summary]) -> Result:
    roots = {s.root for s in summaries if any(s.uuid in c.resources for c in candidates)}
    return Result(candidates, [s for s in summaries if s.root in roots])
