"""Allocation candidates (GET /allocation_candidates, microversion 1.10 on): pure, over a snapshot of trees.

The rules are Placement 16.0.0's (placement/objects/allocation_candidate.py and
research_context.py), restated over in-memory providers instead of SQL:

1. Each request group is matched on its own. A granular group (`resourcesN`,
   `use_same_provider`) needs one provider holding every class it asks for
   with its required traits and aggregates; the unsuffixed group may spread
   its classes over the providers of one tree and the sharing providers
   (`MISC_SHARES_VIA_AGGREGATE`) tied to that tree by an aggregate, and its
   traits are then met by those providers together. A group without an
   answer ends the search: no candidates.
2. The groups' answers are combined per anchor (the root of the tree an
   answer belongs to), one answer of every group per combination, in the
   order the groups were given, depth-first (every combination of the first
   anchor before the next) or breadth-first (anchors round robin).
3. A combination is kept when `group_policy=isolate` finds its granular
   groups on distinct providers, every `same_subtree` set of groups sits
   under one of its own providers, and the amounts of a class drawn twice
   from one provider still fit (capacity and `max_unit`). Equal combinations
   (the same amounts from the same providers, the same mappings) count once.
4. At most `max_candidates` are kept (Placement's `max_allocation_candidates`,
   unbounded there, bounded here), then `limit` of them are answered, with the
   summaries of the trees they use.

The bound is applied while generating: prefixes that already break capacity or
`isolate` are pruned (the answers are those of the unpruned product, in the
same order, since both rules only ever fail more as a combination grows), so a
wide symmetric tree (upstream bug 2070257: one root, eight children, six
groups) stops after `max_candidates` answers instead of walking 8^6
combinations. `max_examined` bounds the walk itself for combinations that fail
for other reasons (same_subtree), a limit upstream does not have.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

SHARING_TRAIT = "MISC_SHARES_VIA_AGGREGATE"
STRATEGIES = ("depth-first", "breadth-first")


# --- the snapshot ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class InventoryView:
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = 2_147_483_647
    step_size: int = 1
    allocation_ratio: float = 1.0

    @property
    def capacity(self) -> int:
        """What a summary shows and a combination is held to: Placement truncates to an integer."""
        return int((self.total - self.reserved) * self.allocation_ratio)

    def admits(self, used: int, amount: int) -> bool:
        """Placement's capacity check for one class of one provider (the float bound, as its SQL has it)."""
        return (used + amount <= (self.total - self.reserved) * self.allocation_ratio
                and self.min_unit <= amount <= self.max_unit and amount % self.step_size == 0)


@dataclass(frozen=True)
class ProviderView:
    uuid: str
    root: str
    parent: str | None = None
    traits: frozenset[str] = frozenset()
    aggregates: frozenset[str] = frozenset()
    inventories: Mapping[str, InventoryView] = field(default_factory=dict)
    usages: Mapping[str, int] = field(default_factory=dict)

    def used(self, rc: str) -> int:
        return self.usages.get(rc, 0)


@dataclass(frozen=True)
class Snapshot:
    """Providers by uuid, in the order the store lists them (creation order): answers keep that order."""

    providers: Mapping[str, ProviderView]

    def tree(self, root: str) -> list[ProviderView]:
        return [p for p in self.providers.values() if p.root == root]

    @property
    def has_trees(self) -> bool:
        return any(p.parent is not None for p in self.providers.values())


# --- the request -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RequestGroup:
    suffix: str = ""  # "" is the unsuffixed group
    resources: Mapping[str, int] = field(default_factory=dict)
    required_traits: tuple[frozenset[str], ...] = ()  # all of these sets, one trait of each (any-of: 1.39)
    forbidden_traits: frozenset[str] = frozenset()
    member_of: tuple[frozenset[str], ...] = ()  # in one aggregate of each set
    forbidden_aggregates: frozenset[str] = frozenset()
    in_tree: str | None = None

    @property
    def use_same_provider(self) -> bool:
        return self.suffix != ""


@dataclass(frozen=True)
class RequestWide:
    limit: int | None = None
    group_policy: str | None = None  # "isolate", "none" or None
    root_required: frozenset[str] = frozenset()
    root_forbidden: frozenset[str] = frozenset()
    same_subtrees: tuple[frozenset[str], ...] = ()
    nested_aware: bool = True  # from 1.29: candidates may use several providers of one tree
    max_candidates: int = 1000
    strategy: str = "depth-first"
    max_examined: int = 1_000_000


# --- the answer ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Candidate:
    anchor: str
    resources: Mapping[str, Mapping[str, int]]  # provider uuid -> class -> amount
    mappings: Mapping[str, tuple[str, ...]]  # group suffix -> provider uuids (1.34)

    def key(self) -> tuple[frozenset[tuple[str, str, int]], tuple[tuple[str, tuple[str, ...]], ...]]:
        """Placement's equality of allocation requests: the same amounts from the same providers and the same
        mappings (the anchor is not part of it)."""
        amounts = frozenset((rp, rc, n) for rp, res in self.resources.items() for rc, n in res.items())
        return amounts, tuple(sorted(self.mappings.items()))


@dataclass(frozen=True)
class Summary:
    uuid: str
    root: str
    parent: str | None
    traits: frozenset[str]
    resources: Mapping[str, tuple[int, int]]  # class -> (capacity, used)


@dataclass(frozen=True)
class Result:
    candidates: list[Candidate]
    summaries: list[Summary]
    steps: int = 0  # prefixes and combinations the walk looked at: its work, counted (not timed)


EMPTY = Result([], [])


# --- one group's answers -----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Answer:
    """One group's allocation request: which provider gives each class, under which anchor."""

    anchor: str
    parts: tuple[tuple[str, str, int], ...]  # (provider, class, amount)
    providers: frozenset[str]  # the group's mapping (a resourceless group still names its provider)
    same_provider: bool


def _satisfies(sets: Iterable[frozenset[str]], have: frozenset[str]) -> bool:
    return all(s & have for s in sets)


def _in_aggregates(snapshot: Snapshot, member_of: Sequence[frozenset[str]]) -> set[str]:
    """Providers whose own aggregates meet every set (one aggregate of each)."""
    return {p.uuid for p in snapshot.providers.values() if _satisfies(member_of, p.aggregates)}


def _in_any_aggregate(snapshot: Snapshot, aggregates: frozenset[str]) -> set[str]:
    return {p.uuid for p in snapshot.providers.values() if p.aggregates & aggregates}


def _with_resource(snapshot: Snapshot, rc: str, amount: int, tree_root: str | None) -> list[ProviderView]:
    return [p for p in snapshot.providers.values()
            if rc in p.inventories and (tree_root is None or p.root == tree_root)
            and p.inventories[rc].admits(p.used(rc), amount)]


def _sharing_anchors(snapshot: Snapshot, sharing: ProviderView) -> list[str]:
    """The roots of every tree with a provider in one of the sharing provider's aggregates (its own included
    when it is in an aggregate), in provider order."""
    roots: dict[str, None] = {}
    for p in snapshot.providers.values():
        if p.aggregates & sharing.aggregates:
            roots.setdefault(p.root)
    return list(roots)


@dataclass
class _Search:
    """What one request shares across its groups (RequestWideSearchContext)."""

    snapshot: Snapshot
    wide: RequestWide
    anchors: set[str] | None  # roots allowed by root_required / root_forbidden; None: every root
    sharing: set[str]
    has_trees: bool
    amounts: Counter[str] = field(default_factory=Counter)
    multi_group_classes: set[str] = field(default_factory=set)

    def anchored(self, root: str) -> bool:
        return self.anchors is None or root in self.anchors


def _group_answers(search: _Search, group: RequestGroup) -> list[_Answer]:
    """Every answer to one group on its own (empty: the group, and so the request, has none)."""
    snapshot = search.snapshot
    in_aggs: set[str] | None = None
    if group.member_of:
        in_aggs = _in_aggregates(snapshot, group.member_of)
        if not in_aggs:
            return []
    tree_root = None
    if group.in_tree is not None:
        anchor = snapshot.providers.get(group.in_tree)
        if anchor is None:
            return []
        tree_root = anchor.root
    with_resource: dict[str, list[ProviderView]] = {}
    for rc, amount in group.resources.items():
        with_resource[rc] = _with_resource(snapshot, rc, amount, tree_root)
        if not with_resource[rc]:
            return []
    if not group.use_same_provider and (search.sharing or search.has_trees):
        if group.required_traits and not any(
                p.traits & frozenset().union(*group.required_traits) for p in snapshot.providers.values()):
            return []
        return _tree_answers(search, group, in_aggs, with_resource)
    return _provider_answers(search, group, in_aggs, with_resource)


def _traits_and_aggregates(snapshot: Snapshot, group: RequestGroup,
                           in_aggs: set[str] | None) -> tuple[set[str] | None, set[str]]:
    """(providers that pass the group's trait and aggregate filters, or None when a filter left none; an empty
    set when no filter applied), and the providers a forbidden trait or aggregate excludes."""
    filtered: set[str] = set()
    if group.required_traits:
        filtered = {p.uuid for p in snapshot.providers.values() if _satisfies(group.required_traits, p.traits)}
        if not filtered:
            return None, set()
    if in_aggs is not None:
        filtered = (filtered & in_aggs) if filtered else set(in_aggs)
        if not filtered:
            return None, set()
    forbidden: set[str] = set()
    for bad in (_in_any_aggregate(snapshot, group.forbidden_aggregates) if group.forbidden_aggregates else set(),
                {p.uuid for p in snapshot.providers.values() if p.traits & group.forbidden_traits}
                if group.forbidden_traits else set()):
        forbidden |= bad
        if filtered:
            filtered -= bad
            if not filtered:
                return None, set()
    return filtered, forbidden


def _provider_answers(search: _Search, group: RequestGroup, in_aggs: set[str] | None,
                      with_resource: Mapping[str, list[ProviderView]]) -> list[_Answer]:
    """Answers from one provider each (a granular group, or no trees and no sharing providers at all)."""
    snapshot = search.snapshot
    filtered, forbidden = _traits_and_aggregates(snapshot, group, in_aggs)
    if filtered is None:
        return []
    first = True
    for providers in with_resource.values():
        ids = {p.uuid for p in providers}
        if first:
            first = False
            filtered = (filtered & ids) if filtered else ids - forbidden
        else:
            filtered &= ids
        if not filtered:
            return []
    if with_resource:
        matched = [p for p in next(reversed(list(with_resource.values()))) if p.uuid in filtered]
    else:  # a resourceless group: providers the filters name (none, when no filter applied)
        matched = [p for p in snapshot.providers.values() if p.uuid in filtered and p.uuid not in forbidden]
    answers: list[_Answer] = []
    for provider in matched:
        parts = tuple((provider.uuid, rc, amount) for rc, amount in group.resources.items())
        answer = _Answer(provider.root, parts, frozenset({provider.uuid}), group.use_same_provider)
        if search.anchored(provider.root):
            answers.append(answer)
        if SHARING_TRAIT in provider.traits:
            for anchor in _sharing_anchors(snapshot, provider):
                if anchor != provider.root and search.anchored(anchor):
                    answers.append(_Answer(anchor, parts, answer.providers, group.use_same_provider))
    return answers


def _tree_answers(search: _Search, group: RequestGroup, in_aggs: set[str] | None,
                  with_resource: Mapping[str, list[ProviderView]]) -> list[_Answer]:
    """Answers of the unsuffixed group: its classes from the providers of one tree and the sharing providers
    tied to that tree, its traits met by those providers together."""
    snapshot = search.snapshot
    bad_aggs = _in_any_aggregate(snapshot, group.forbidden_aggregates) if group.forbidden_aggregates else set()
    merged: set[tuple[str, str, str]] | None = None  # (provider, anchor root, class)
    for rc, providers in with_resource.items():
        entries = {(p.uuid, p.root, rc) for p in providers}
        sharing = {p.uuid for p in providers if p.uuid in search.sharing and (in_aggs is None or p.uuid in in_aggs)}
        if sharing and group.in_tree is None:
            for uuid in sharing:
                entries |= {(uuid, anchor, rc) for anchor in _sharing_anchors(snapshot, snapshot.providers[uuid])}
        if search.anchors is not None:
            entries = {e for e in entries if e[1] in search.anchors}
        if in_aggs is not None:
            entries = {e for e in entries if e[0] in in_aggs or e[1] in in_aggs}
        if bad_aggs:
            entries = {e for e in entries if e[0] not in bad_aggs and e[1] not in bad_aggs}
        if not entries:
            return []
        if merged is None:
            merged = entries
        else:
            common = {e[1] for e in merged} & {e[1] for e in entries}
            merged = {e for e in merged | entries if e[1] in common}
        if not merged:
            return []
    if merged is None:
        return []
    if (group.required_traits or group.forbidden_traits) and not search.sharing:
        merged = _trees_with_traits(snapshot, merged, group)
    return _combine_in_trees(snapshot, group, merged)


def _trees_with_traits(snapshot: Snapshot, entries: set[tuple[str, str, str]],
                       group: RequestGroup) -> set[tuple[str, str, str]]:
    """Keep the trees that may still meet the traits: their providers without a forbidden trait hold one of
    each required set between them (a tree is dropped only when it can never meet them)."""
    good_by_root: dict[str, set[str]] = defaultdict(set)
    for uuid, root, _rc in entries:
        if not snapshot.providers[uuid].traits & group.forbidden_traits:
            good_by_root[root].add(uuid)
    if not group.required_traits:
        return {e for e in entries if e[1] in good_by_root}
    keep = {root for root, uuids in good_by_root.items()
            if _satisfies(group.required_traits, frozenset().union(*(snapshot.providers[u].traits for u in uuids)))}
    return {e for e in entries if e[1] in keep}


def _combine_in_trees(snapshot: Snapshot, group: RequestGroup,
                      entries: set[tuple[str, str, str]]) -> list[_Answer]:
    by_tree: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    order = {uuid: i for i, uuid in enumerate(snapshot.providers)}
    for uuid, root, rc in sorted(entries, key=lambda e: (order.get(e[1], 0), e[2], order[e[0]])):
        by_tree[root][rc].append(uuid)
    answers: dict[tuple[str, tuple[tuple[str, str, int], ...]], _Answer] = {}
    for root, by_class in by_tree.items():
        classes = sorted(by_class)
        for chosen in itertools.product(*(by_class[rc] for rc in classes)):
            providers = [snapshot.providers[u] for u in chosen]
            if any(p.traits & group.forbidden_traits for p in providers):
                continue
            if not _satisfies(group.required_traits, frozenset().union(*(p.traits for p in providers))):
                continue
            parts = tuple((u, rc, group.resources[rc]) for u, rc in zip(chosen, classes, strict=True))
            answers.setdefault((root, parts), _Answer(root, parts, frozenset(chosen), False))
    return list(answers.values())


# --- combining the groups ----------------------------------------------------------------------------

def anchors_filter(snapshot: Snapshot, wide: RequestWide) -> set[str] | None:
    """The roots `root_required` / `root_forbidden` allow; None when the request names neither."""
    if not (wide.root_required or wide.root_forbidden):
        return None
    return {p.uuid for p in snapshot.providers.values()
            if p.parent is None and wide.root_required <= p.traits and not (p.traits & wide.root_forbidden)}


def _capacity_of(snapshot: Snapshot, uuid: str, rc: str) -> tuple[int, int, int]:
    """(capacity, used, max_unit) as Placement's provider summary holds them."""
    provider = snapshot.providers[uuid]
    inventory = provider.inventories[rc]
    return inventory.capacity, provider.used(rc), inventory.max_unit


def _overdrawn(snapshot: Snapshot, answers: Sequence[_Answer]) -> bool:
    """Whether the amounts of these answers, added up per provider and class, exceed capacity or max_unit."""
    drawn: dict[tuple[str, str], int] = defaultdict(int)
    for answer in answers:
        for uuid, rc, amount in answer.parts:
            drawn[(uuid, rc)] += amount
            capacity, used, max_unit = _capacity_of(snapshot, uuid, rc)
            if used + drawn[(uuid, rc)] > capacity or drawn[(uuid, rc)] > max_unit:
                return True
    return False


def _isolation_broken(answers: Sequence[_Answer]) -> bool:
    """group_policy=isolate: the granular groups so far each on a provider of its own."""
    seen: set[str] = set()
    for answer in answers:
        if answer.same_provider:
            (uuid,) = answer.providers
            if uuid in seen:
                return True
            seen.add(uuid)
    return False


def _pruned_product(lists: Sequence[Sequence[_Answer]],
                    dead_end: Callable[[Sequence[_Answer]], bool]) -> Iterator[tuple[_Answer, ...]]:
    """itertools.product's order, without the branches whose prefix is already a dead end."""
    def grow(index: int, prefix: tuple[_Answer, ...]) -> Iterator[tuple[_Answer, ...]]:
        if index == len(lists):
            yield prefix
            return
        for item in lists[index]:
            longer = (*prefix, item)
            if not dead_end(longer):
                yield from grow(index + 1, longer)

    return grow(0, ())


def _round_robin(generators: Sequence[Iterator[tuple[_Answer, ...]]]) -> Iterator[tuple[_Answer, ...]]:
    active = list(generators)
    while active:
        still = []
        for generator in active:
            item = next(generator, None)
            if item is not None:
                still.append(generator)
                yield item
        active = still


def _ancestors(snapshot: Snapshot, uuid: str) -> set[str]:
    """`uuid` and its ancestors, up to the first one the snapshot lacks (a tree read while it moved)."""
    found = {uuid}
    parent = snapshot.providers[uuid].parent
    while parent is not None and parent not in found:
        found.add(parent)
        above = snapshot.providers.get(parent)
        parent = above.parent if above is not None else None
    return found


def _overall_capacity_fits(search: _Search, by_suffix: Mapping[str, Sequence[_Answer]]) -> bool:
    """A tree is dropped before its combinations are walked when, for a class several groups ask for, the
    providers the groups found there hold less in all than the groups ask together (upstream bug 2160721)."""
    if not search.multi_group_classes:
        return True
    providers = {uuid for answers in by_suffix.values() for a in answers for uuid, _rc, _n in a.parts}
    for rc in search.multi_group_classes:
        # A provider reserving more than its total (the reshaper stores one, as upstream) has no room, not less.
        available = sum(max(_capacity_of(search.snapshot, uuid, rc)[0], 0) for uuid in providers
                        if rc in search.snapshot.providers[uuid].inventories)
        if search.amounts[rc] > available:
            return False
    return True


def _consolidated(answers: Sequence[_Answer], suffixes: Sequence[str]) -> Candidate:
    resources: dict[str, dict[str, int]] = {}
    mappings: dict[str, set[str]] = defaultdict(set)
    for answer, suffix in zip(answers, suffixes, strict=True):
        for uuid, rc, amount in answer.parts:
            per = resources.setdefault(uuid, {})
            per[rc] = per.get(rc, 0) + amount
        mappings[suffix] |= answer.providers
    return Candidate(answers[0].anchor, resources, {s: tuple(sorted(u)) for s, u in mappings.items()})


def allocation_candidates(snapshot: Snapshot, groups: Sequence[RequestGroup], wide: RequestWide) -> Result:
    """The candidates Placement would answer for these groups (the unsuffixed one first when present)."""
    if wide.strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {wide.strategy!r}")
    anchors = anchors_filter(snapshot, wide)
    if anchors is not None and not anchors:
        return EMPTY
    sharing = {p.uuid for p in snapshot.providers.values() if SHARING_TRAIT in p.traits}
    search = _Search(snapshot, wide, anchors, sharing, snapshot.has_trees)
    per_group: dict[str, list[_Answer]] = {}
    for group in groups:
        for rc, amount in group.resources.items():
            if rc in search.amounts:
                search.multi_group_classes.add(rc)
            search.amounts[rc] += amount
        answers = _group_answers(search, group)
        if not answers:
            return EMPTY
        per_group[group.suffix] = answers
    return _merge(search, per_group)


def _merge(search: _Search, per_group: Mapping[str, list[_Answer]]) -> Result:
    snapshot, wide = search.snapshot, search.wide
    suffixes = list(per_group)
    by_anchor: dict[str, dict[str, list[_Answer]]] = defaultdict(lambda: defaultdict(list))
    for suffix, answers in per_group.items():
        for answer in answers:
            by_anchor[answer.anchor][suffix].append(answer)
    isolate = wide.group_policy == "isolate"
    steps = 0

    def dead_end(prefix: Sequence[_Answer]) -> bool:
        nonlocal steps
        steps += 1
        return (isolate and _isolation_broken(prefix)) or _overdrawn(snapshot, prefix)

    generators = [
        _pruned_product([by_suffix[s] for s in suffixes], dead_end)
        for by_suffix in by_anchor.values()
        if set(by_suffix) == set(suffixes) and _overall_capacity_fits(search, by_suffix)
    ]
    walk = itertools.chain(*generators) if wide.strategy == "depth-first" else _round_robin(generators)
    one_per_tree_only = one_provider_per_tree(wide, search.has_trees)
    kept: dict[object, Candidate] = {}
    for examined, combination in enumerate(walk, start=1):
        candidate = _consolidated(combination, suffixes) if _same_subtree_ok(
            snapshot, wide, combination, suffixes) else None
        # Before 1.29 upstream drops a candidate drawing from two providers of a tree before it applies
        # `limit`: such a candidate counts towards no bound here either.
        if candidate is None or (one_per_tree_only and not _one_per_tree(snapshot, candidate)):
            if examined >= wide.max_examined:
                break
            continue
        kept.setdefault(candidate.key(), candidate)
        if 0 <= wide.max_candidates <= len(kept) or examined >= wide.max_examined:  # < 0: unbounded, as upstream
            break
    candidates = list(kept.values())
    if not candidates:
        return Result([], [], steps)
    summaries = _summaries(snapshot, candidates, wide, search)
    if wide.limit is not None and wide.limit < len(candidates):
        # As upstream's limit_results: the summaries of every tree a kept candidate draws from, as they were
        # before the cut (before 1.29 these name the providers any candidate drew from).
        candidates = candidates[:wide.limit]
        roots = {snapshot.providers[u].root for c in candidates for u in c.resources}
        summaries = [s for s in summaries if s.root in roots]
    return Result(candidates, summaries, steps)


def one_provider_per_tree(wide: RequestWide, has_trees: bool) -> bool:
    """Before 1.29 (nested_aware False), where trees exist, a candidate draws from one provider of a tree at
    most, and summaries show only the providers drawn from."""
    return not wide.nested_aware and has_trees


def _one_per_tree(snapshot: Snapshot, candidate: Candidate) -> bool:
    return len({snapshot.providers[u].root for u in candidate.resources}) == len(candidate.resources)


def _same_subtree_ok(snapshot: Snapshot, wide: RequestWide, combination: Sequence[_Answer],
                     suffixes: Sequence[str]) -> bool:
    for together in wide.same_subtrees:
        uuids: set[str] = set()
        for answer, suffix in zip(combination, suffixes, strict=True):
            if suffix in together:
                uuids |= answer.providers
        if len(uuids) > 1 and not set.intersection(*(_ancestors(snapshot, u) for u in uuids)) & uuids:
            return False
    return True


def _summaries(snapshot: Snapshot, candidates: Sequence[Candidate], wide: RequestWide,
               search: _Search) -> list[Summary]:
    """Every provider of every tree a candidate draws from (before 1.29 only the providers drawn from, when
    trees exist), with its capacity and usage per class and its traits."""
    roots = {snapshot.providers[u].root for c in candidates for u in c.resources}
    used_providers = {u for c in candidates for u in c.resources}
    summaries = []
    for provider in snapshot.providers.values():
        if provider.root not in roots:
            continue
        if one_provider_per_tree(wide, search.has_trees) and provider.uuid not in used_providers:
            continue
        resources = {rc: (inv.capacity, provider.used(rc)) for rc, inv in provider.inventories.items()}
        summaries.append(Summary(provider.uuid, provider.root, provider.parent, provider.traits, resources))
    return summaries
