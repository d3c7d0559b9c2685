"""The allocation-candidate generator (chalicelib/placement/candidates.py): cases, then a brute-force oracle.

The cases are the shapes Placement's own gabbits seed (a compute node with NUMA children, shared storage
in an aggregate, granular groups with isolate, same_subtree, root_required). The property test draws
small random trees and requests and compares every answer with an oracle that states the rules
declaratively: every way of giving each group its classes, kept when every rule holds.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.placement.candidates import (
    SHARING_TRAIT,
    InventoryView,
    ProviderView,
    RequestGroup,
    RequestWide,
    Snapshot,
    allocation_candidates,
)


def snapshot(*providers: ProviderView) -> Snapshot:
    return Snapshot({p.uuid: p for p in providers})


def rp(uuid, root=None, parent=None, traits=(), aggs=(), used=None, **inventories) -> ProviderView:
    invs = {rc: inv if isinstance(inv, InventoryView) else InventoryView(total=inv)
            for rc, inv in inventories.items()}
    return ProviderView(uuid, root or uuid, parent, frozenset(traits), frozenset(aggs), invs, dict(used or {}))


def group(suffix="", traits=(), forbidden=(), member_of=(), forbidden_aggs=(), in_tree=None, **resources):
    return RequestGroup(suffix, resources, tuple(frozenset(t.split("|")) for t in traits), frozenset(forbidden),
                        tuple(frozenset(m.split("|")) for m in member_of), frozenset(forbidden_aggs), in_tree)


def answers(result):
    return sorted(tuple(sorted((u, rc, n) for u, res in c.resources.items() for rc, n in res.items()))
                  for c in result.candidates)


def picks(result):
    return {tuple(sorted(c.resources)) for c in result.candidates}


# --- cases -------------------------------------------------------------------------------------------

def test_a_flat_compute_node_answers_one_candidate_from_itself():
    snap = snapshot(rp("cn1", VCPU=8, MEMORY_MB=2048), rp("cn2", VCPU=1, MEMORY_MB=2048))
    result = allocation_candidates(snap, [group(VCPU=2, MEMORY_MB=1024)], RequestWide())
    assert answers(result) == [(("cn1", "MEMORY_MB", 1024), ("cn1", "VCPU", 2))]
    assert [s.uuid for s in result.summaries] == ["cn1"]
    assert result.summaries[0].resources == {"VCPU": (8, 0), "MEMORY_MB": (2048, 0)}
    assert result.candidates[0].mappings == {"": ("cn1",)}


def test_capacity_counts_reserved_ratio_usage_and_the_unit_rules():
    inv = InventoryView(total=10, reserved=2, allocation_ratio=1.5, min_unit=2, max_unit=6, step_size=2)
    assert inv.capacity == 12
    snap = snapshot(rp("cn", VCPU=inv, used={"VCPU": 8}))
    for amount, fits in [(2, True), (4, True), (6, False), (1, False), (3, False), (8, False)]:
        assert bool(allocation_candidates(snap, [group(VCPU=amount)], RequestWide()).candidates) is fits, amount


def test_shared_storage_serves_every_compute_node_in_its_aggregate():
    ss = rp("ss", traits=[SHARING_TRAIT], aggs=["agg"], DISK_GB=1000)
    snap = snapshot(rp("cn1", aggs=["agg"], VCPU=8), rp("cn2", aggs=["agg"], VCPU=8), rp("cn3", VCPU=8), ss)
    result = allocation_candidates(snap, [group(VCPU=1, DISK_GB=100)], RequestWide())
    assert picks(result) == {("cn1", "ss"), ("cn2", "ss")}
    assert {c.anchor for c in result.candidates} == {"cn1", "cn2"}
    assert {s.uuid for s in result.summaries} == {"cn1", "cn2", "ss"}


def test_a_sharing_provider_alone_is_one_candidate_however_many_anchors():
    ss = rp("ss", traits=[SHARING_TRAIT], aggs=["agg"], DISK_GB=1000)
    snap = snapshot(rp("cn1", aggs=["agg"], VCPU=8), rp("cn2", aggs=["agg"], VCPU=8), ss)
    assert answers(allocation_candidates(snap, [group(DISK_GB=10)], RequestWide())) == [(("ss", "DISK_GB", 10),)]


def test_a_granular_group_on_a_sharing_provider_joins_every_tree_it_shares_with():
    ss = rp("ss", traits=[SHARING_TRAIT], aggs=["agg"], DISK_GB=1000)
    snap = snapshot(rp("cn1", aggs=["agg"], VCPU=8), rp("cn2", VCPU=8), ss)
    result = allocation_candidates(snap, [group("1", VCPU=1), group("2", DISK_GB=10)],
                                   RequestWide(group_policy="none"))
    assert {(c.anchor, c.mappings["1"], c.mappings["2"]) for c in result.candidates} == {("cn1", ("cn1",), ("ss",))}


def numa_host():
    return snapshot(
        rp("cn", traits=["HW_CPU_X86_AVX"], DISK_GB=100),
        rp("numa0", root="cn", parent="cn", traits=["CUSTOM_NUMA"], VCPU=4, MEMORY_MB=2048),
        rp("numa1", root="cn", parent="cn", traits=["CUSTOM_NUMA"], VCPU=4, MEMORY_MB=2048),
        rp("pf0", root="cn", parent="numa0", traits=["CUSTOM_PHYSNET1"], SRIOV_NET_VF=4),
        rp("pf1", root="cn", parent="numa1", traits=["CUSTOM_PHYSNET1"], SRIOV_NET_VF=4),
    )


def test_the_unsuffixed_group_spreads_over_a_tree():
    result = allocation_candidates(numa_host(), [group(VCPU=2, MEMORY_MB=512, DISK_GB=10)], RequestWide())
    assert picks(result) == {("cn", "numa0"), ("cn", "numa1"), ("cn", "numa0", "numa1")}
    assert len(result.candidates) == 4  # VCPU and MEMORY_MB each from either NUMA node
    assert {s.uuid for s in result.summaries} == {"cn", "numa0", "numa1", "pf0", "pf1"}


def test_before_1_29_a_candidate_takes_one_provider_per_tree():
    wide = RequestWide(nested_aware=False)
    assert allocation_candidates(numa_host(), [group(VCPU=2, DISK_GB=10)], wide).candidates == []
    result = allocation_candidates(numa_host(), [group(VCPU=2, MEMORY_MB=10)], wide)
    assert picks(result) == {("numa0",), ("numa1",)}


def test_traits_of_the_unsuffixed_group_are_met_by_its_providers_together():
    result = allocation_candidates(numa_host(), [group(VCPU=1, SRIOV_NET_VF=1, traits=["HW_CPU_X86_AVX"])],
                                   RequestWide())
    assert result.candidates == []  # cn has the trait but gives nothing
    result = allocation_candidates(numa_host(), [group(VCPU=1, DISK_GB=1, traits=["HW_CPU_X86_AVX"])],
                                   RequestWide())
    assert picks(result) == {("cn", "numa0"), ("cn", "numa1")}
    result = allocation_candidates(numa_host(), [group(VCPU=1, DISK_GB=1, forbidden=["HW_CPU_X86_AVX"])],
                                   RequestWide())
    assert result.candidates == []


def test_granular_groups_with_isolate_take_distinct_providers():
    groups = [group("1", SRIOV_NET_VF=1, traits=["CUSTOM_PHYSNET1"]),
              group("2", SRIOV_NET_VF=1, traits=["CUSTOM_PHYSNET1"])]
    both = allocation_candidates(numa_host(), groups, RequestWide(group_policy="none"))
    assert {c.mappings["1"] + c.mappings["2"] for c in both.candidates} == {
        ("pf0", "pf0"), ("pf0", "pf1"), ("pf1", "pf0"), ("pf1", "pf1")}
    isolated = allocation_candidates(numa_host(), groups, RequestWide(group_policy="isolate"))
    assert {c.mappings["1"] + c.mappings["2"] for c in isolated.candidates} == {("pf0", "pf1"), ("pf1", "pf0")}
    same = [c for c in both.candidates if c.mappings["1"] == c.mappings["2"]]
    assert all(c.resources[c.mappings["1"][0]] == {"SRIOV_NET_VF": 2} for c in same)  # amounts consolidated


@pytest.mark.parametrize(("first", "second", "found"), [
    ({"VCPU": 1}, {"SRIOV_NET_VF": 1}, {(("numa0",), ("pf0",)), (("numa1",), ("pf1",))}),
    ({"DISK_GB": 1}, {"SRIOV_NET_VF": 1}, {(("cn",), ("pf0",)), (("cn",), ("pf1",))}),  # a root, its grandchildren
], ids=["siblings' children", "root and grandchildren"])
def test_same_subtree_keeps_groups_under_one_of_their_providers(first, second, found):
    groups = [group("_A", **first), group("_B", **second)]
    wide = RequestWide(group_policy="none", same_subtrees=(frozenset({"_A", "_B"}),))
    result = allocation_candidates(numa_host(), groups, wide)
    assert {(c.mappings["_A"], c.mappings["_B"]) for c in result.candidates} == found


def test_root_required_filters_the_anchors():
    snap = snapshot(rp("cn1", traits=["COMPUTE_STATUS_DISABLED"], VCPU=8), rp("cn2", VCPU=8))
    wide = RequestWide(root_forbidden=frozenset({"COMPUTE_STATUS_DISABLED"}))
    assert picks(allocation_candidates(snap, [group(VCPU=1)], wide)) == {("cn2",)}
    wide = RequestWide(root_required=frozenset({"COMPUTE_STATUS_DISABLED"}))
    assert picks(allocation_candidates(snap, [group(VCPU=1)], wide)) == {("cn1",)}


def test_member_of_on_a_root_spans_its_tree_and_forbidden_aggregates_exclude_it():
    snap = snapshot(rp("cn", aggs=["a"]), rp("child", root="cn", parent="cn", VCPU=4), rp("other", VCPU=4))
    assert picks(allocation_candidates(snap, [group(VCPU=1, member_of=["a"])], RequestWide())) == {("child",)}
    assert picks(allocation_candidates(snap, [group(VCPU=1, forbidden_aggs=["a"])], RequestWide())) == {
        ("other",)}
    assert allocation_candidates(snap, [group(VCPU=1, member_of=["nope"])], RequestWide()).candidates == []


def test_in_tree_limits_a_group_to_the_tree_of_a_provider():
    snap = snapshot(rp("cn1", VCPU=4), rp("cn2", VCPU=4))
    assert picks(allocation_candidates(snap, [group(VCPU=1, in_tree="cn2")], RequestWide())) == {("cn2",)}
    assert allocation_candidates(snap, [group(VCPU=1, in_tree="missing")], RequestWide()).candidates == []


def test_two_groups_on_one_provider_must_fit_together():
    snap = snapshot(rp("cn", VCPU=InventoryView(total=4, max_unit=3)))
    wide = RequestWide(group_policy="none")
    assert allocation_candidates(snap, [group("1", VCPU=2), group("2", VCPU=2)], wide).candidates == []  # 4 > max 3
    assert len(allocation_candidates(snap, [group("1", VCPU=1), group("2", VCPU=2)], wide).candidates) == 1


def test_limit_and_the_candidate_bound_and_the_strategies():
    snap = snapshot(*(rp(f"cn{i}", VCPU=4) for i in range(6)))
    assert [c.anchor for c in allocation_candidates(snap, [group(VCPU=1)], RequestWide(limit=2)).candidates] == [
        "cn0", "cn1"]
    bounded = allocation_candidates(snap, [group(VCPU=1)], RequestWide(max_candidates=3))
    assert len(bounded.candidates) == 3 and {s.uuid for s in bounded.summaries} == {"cn0", "cn1", "cn2"}
    two = snapshot(rp("a"), rp("a1", root="a", parent="a", VCPU=2), rp("a2", root="a", parent="a", VCPU=2),
                   rp("b"), rp("b1", root="b", parent="b", VCPU=2), rp("b2", root="b", parent="b", VCPU=2))
    groups = [group("1", VCPU=1), group("2", VCPU=1)]
    depth = allocation_candidates(two, groups, RequestWide(group_policy="isolate", max_candidates=2))
    breadth = allocation_candidates(two, groups, RequestWide(group_policy="isolate", max_candidates=2,
                                                             strategy="breadth-first"))
    assert [c.anchor for c in depth.candidates] == ["a", "a"]
    assert [c.anchor for c in breadth.candidates] == ["a", "b"]
    with pytest.raises(ValueError):
        allocation_candidates(two, groups, RequestWide(strategy="sideways"))


def test_a_wide_symmetric_tree_stops_at_the_bound():
    # Upstream bug 2070257: one root, eight children, six isolated groups: 8^6 combinations unpruned.
    children = [rp(f"c{i}", root="r", parent="r", VCPU=1) for i in range(8)]
    snap = snapshot(rp("r"), *children)
    groups = [group(str(n), VCPU=1) for n in range(1, 7)]
    started = time.process_time()
    result = allocation_candidates(snap, groups, RequestWide(group_policy="isolate", max_candidates=1000))
    assert len(result.candidates) == 1000
    assert all(len(c.resources) == 6 for c in result.candidates)
    assert result.steps < 12_000  # the walk's work, counted: 8^6 = 262,144 combinations unpruned
    assert time.process_time() - started < 30  # a hang guard, not a timing assertion (well under 1 s here)


@pytest.mark.parametrize("policy", ["none", "isolate"])
@pytest.mark.parametrize("strategy", ["depth-first", "breadth-first"])
def test_the_wide_tree_with_room_everywhere_costs_steps_in_proportion_to_the_bound(policy, strategy):
    """Bug 2070257's shape with every child able to serve every group (no pruning helps): the walk stops at
    the bound, its steps a small multiple of it whatever the 8^6 product."""
    children = [rp(f"c{i}", root="r", parent="r", VCPU=8) for i in range(8)]
    snap = snapshot(rp("r"), *children)
    groups = [group(str(n), VCPU=1) for n in range(1, 7)]
    for bound in (10, 1000):
        wide = RequestWide(group_policy=policy, max_candidates=bound, strategy=strategy)
        result = allocation_candidates(snap, groups, wide)
        assert len(result.candidates) == bound
        assert result.steps <= 12 * bound + 100


def test_a_resourceless_granular_group_names_the_provider_its_traits_pick():
    result = allocation_candidates(numa_host(), [group(VCPU=1), group("X", traits=["CUSTOM_PHYSNET1"])],
                                   RequestWide(group_policy="none"))
    assert {c.mappings["X"] for c in result.candidates} == {("pf0",), ("pf1",)}


# --- the oracle ----------------------------------------------------------------------------------------

def _linked(snap: Snapshot, sharing: ProviderView) -> set[str]:
    return {p.root for p in snap.providers.values() if p.aggregates & sharing.aggregates}


def _admits(p: ProviderView, rc: str, n: int) -> bool:
    return rc in p.inventories and p.inventories[rc].admits(p.used(rc), n)


def _sets_met(sets, have) -> bool:
    return all(s & have for s in sets)


def oracle(snap: Snapshot, groups, wide: RequestWide):
    providers = snap.providers
    sharing = {u for u, p in providers.items() if SHARING_TRAIT in p.traits}
    spread = snap.has_trees or bool(sharing)
    roots = {p.root for p in providers.values()} | {a for s in sharing for a in _linked(snap, providers[s])}
    if wide.root_required or wide.root_forbidden:
        roots = {r for r in roots if providers[r].parent is None and wide.root_required <= providers[r].traits
                 and not providers[r].traits & wide.root_forbidden}
    found = {}
    for anchor in sorted(roots):
        options_per_group = []
        for g in groups:
            in_tree_root = providers[g.in_tree].root if g.in_tree in providers else None
            if g.in_tree is not None and in_tree_root is None:
                return set()
            bad = {u for u, p in providers.items() if p.aggregates & g.forbidden_aggregates}
            in_aggs = {u for u, p in providers.items() if _sets_met(g.member_of, p.aggregates)}
            own = [u for u, p in providers.items() if p.root == anchor]
            linked = [s for s in sharing if anchor in _linked(snap, providers[s]) and providers[s].root != anchor]
            options = []
            if g.use_same_provider or not spread:
                pool = own + (linked if g.use_same_provider or spread else [])
                for u in pool:
                    p = providers[u]
                    if in_tree_root is not None and p.root != in_tree_root:
                        continue
                    if u in linked and SHARING_TRAIT not in p.traits:
                        continue
                    ok = (all(_admits(p, rc, n) for rc, n in g.resources.items())
                          and _sets_met(g.required_traits, p.traits) and not p.traits & g.forbidden_traits
                          and (not g.member_of or u in in_aggs) and u not in bad)
                    if ok and (g.resources or g.required_traits or g.member_of):
                        options.append(({(u, rc): n for rc, n in g.resources.items()}, frozenset({u})))
            else:
                classes = sorted(g.resources)
                if in_tree_root is not None and anchor != in_tree_root:
                    options_per_group.append([])
                    continue
                pool = own + (linked if in_tree_root is None else [])
                for chosen in itertools.product(pool, repeat=len(classes)):
                    ps = [providers[u] for u in chosen]
                    if not all(_admits(p, rc, g.resources[rc]) for p, rc in zip(ps, classes, strict=True)):
                        continue
                    if any(u in linked and g.member_of and u not in in_aggs for u in chosen):
                        continue
                    if g.member_of and not all(u in in_aggs or anchor in in_aggs for u in chosen):
                        continue
                    if any(u in bad or anchor in bad for u in chosen):
                        continue
                    if any(p.traits & g.forbidden_traits for p in ps):
                        continue
                    if not _sets_met(g.required_traits, frozenset().union(*(p.traits for p in ps))):
                        continue
                    options.append(({(u, rc): g.resources[rc] for u, rc in zip(chosen, classes, strict=True)},
                                     frozenset(chosen)))
            options_per_group.append(options)
        for combo in itertools.product(*options_per_group):
            if wide.group_policy == "isolate":
                granular = [next(iter(m)) for (_, m), g in zip(combo, groups, strict=True) if g.use_same_provider]
                if len(set(granular)) != len(granular):
                    continue
            ok = True
            for together in wide.same_subtrees:
                uuids = set().union(*(m for (_, m), g in zip(combo, groups, strict=True) if g.suffix in together))
                if len(uuids) > 1:
                    def ancestors(u):
                        out = {u}
                        while providers[u].parent:
                            u = providers[u].parent
                            out.add(u)
                        return out
                    if not set.intersection(*(ancestors(u) for u in uuids)) & uuids:
                        ok = False
            drawn = defaultdict(int)
            for amounts, _ in combo:
                for key, n in amounts.items():
                    drawn[key] += n
            for (u, rc), n in drawn.items():
                inv = providers[u].inventories[rc]
                if providers[u].used(rc) + n > inv.capacity or n > inv.max_unit:
                    ok = False
            if not ok:
                continue
            if not wide.nested_aware and snap.has_trees:
                used = {u for u, _ in drawn}
                if len({providers[u].root for u in used}) != len(used):
                    continue
            mappings = defaultdict(set)
            for (_, m), g in zip(combo, groups, strict=True):
                mappings[g.suffix] |= m
            key = (frozenset((u, rc, n) for (u, rc), n in drawn.items()),
                   tuple(sorted((s, tuple(sorted(m))) for s, m in mappings.items())))
            found[key] = True
    return set(found)


TRAITS = ["T1", "T2", SHARING_TRAIT]
CLASSES = ["VCPU", "DISK_GB"]


@st.composite
def worlds(draw):
    count = draw(st.integers(1, 5))
    providers = []
    for i in range(count):
        parent = draw(st.sampled_from([None, *[p.uuid for p in providers]])) if providers else None
        root = next(p.root for p in providers if p.uuid == parent) if parent else f"p{i}"
        traits = draw(st.sets(st.sampled_from(TRAITS), max_size=2))
        if parent is not None:
            traits.discard(SHARING_TRAIT)
        aggs = draw(st.sets(st.sampled_from(["a", "b"]), max_size=2))
        invs = {rc: InventoryView(total=draw(st.integers(1, 6)), max_unit=draw(st.integers(1, 6)))
                for rc in draw(st.sets(st.sampled_from(CLASSES), max_size=2))}
        used = {rc: draw(st.integers(0, inv.total)) for rc, inv in invs.items()}
        providers.append(ProviderView(f"p{i}", root, parent, frozenset(traits), frozenset(aggs), invs, used))
    snap = Snapshot({p.uuid: p for p in providers})
    groups = []
    for suffix in draw(st.sampled_from([[""], ["", "1"], ["1", "2"], ["", "1", "2"]])):
        resources = {rc: draw(st.integers(1, 3)) for rc in draw(st.sets(st.sampled_from(CLASSES), min_size=1))}
        required = tuple(frozenset({t}) for t in draw(st.sets(st.sampled_from(["T1", "T2"]), max_size=1)))
        forbidden = frozenset(draw(st.sets(st.sampled_from(["T1", "T2"]), max_size=1)) - set().union(*required))
        member_of = tuple(frozenset({a}) for a in draw(st.sets(st.sampled_from(["a", "b"]), max_size=1)))
        groups.append(RequestGroup(suffix, resources, required, forbidden, member_of))
    wide = RequestWide(group_policy=draw(st.sampled_from(["none", "isolate"])),
                       nested_aware=draw(st.booleans()), max_candidates=10_000)
    return snap, groups, wide


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_the_generator_agrees_with_the_oracle(world):
    snap, groups, wide = world
    result = allocation_candidates(snap, groups, wide)
    # Compared as sets: two equal frozensets may list (and repr) their items in different orders.
    got = {c.key() for c in result.candidates}
    assert got == oracle(snap, groups, wide)
    assert len(got) == len(result.candidates)  # no candidate twice
