"""Allocation candidates (chalicelib/placement/candidates.py), rule by rule: the cases the brute-force oracle
of test_placement_candidates.py does not pin down or reaches only by chance.

Each expectation is upstream Placement 16.0.0's (placement/objects/allocation_candidate.py and
research_context.py) where upstream defines it. Upstream answers in no defined order (its candidates are
sets); the order checked here is this generator's own (Snapshot: the snapshot's provider order, which
`limit` and the candidate bound cut from). `steps` and `max_examined` are this generator's too: its counted
work and the bound upstream does not have.
"""

from __future__ import annotations

import pytest

from chalicelib.placement.candidates import (
    SHARING_TRAIT,
    InventoryView,
    RequestWide,
    Summary,
    allocation_candidates,
)
from tests.unit.test_placement_candidates import group, numa_host, picks, rp, snapshot


def amounts(candidate):
    return {uuid: dict(res) for uuid, res in candidate.resources.items()}


# --- capacity ------------------------------------------------------------------------------------------

NO_ROOM = [
    ("usage fills it", rp("cn", VCPU=4, used={"VCPU": 4})),
    ("reserved holds it all", rp("cn", VCPU=InventoryView(total=4, reserved=4))),
    ("usage and reserved together", rp("cn", VCPU=InventoryView(total=4, reserved=2), used={"VCPU": 2})),
]


@pytest.mark.parametrize("suffix", ["", "1"])
@pytest.mark.parametrize(("why", "provider"), NO_ROOM, ids=[row[0] for row in NO_ROOM])
def test_a_class_no_provider_has_room_for_ends_the_search_before_any_combination(why, provider, suffix):
    for snap in (snapshot(provider), snapshot(provider, rp("child", root="cn", parent="cn", DISK_GB=10))):
        result = allocation_candidates(snap, [group(suffix, VCPU=1)], RequestWide())
        assert (result.candidates, result.summaries, result.steps) == ([], [], 0)


@pytest.mark.parametrize(("amount", "fits"), [(3, True), (4, True), (5, False)])
def test_an_amount_up_to_max_unit_fits_and_one_above_does_not(amount, fits):
    snap = snapshot(rp("cn", VCPU=InventoryView(total=8, max_unit=4)))
    for suffix in ("", "1"):
        result = allocation_candidates(snap, [group(suffix, VCPU=amount)], RequestWide())
        assert [amounts(c) for c in result.candidates] == ([{"cn": {"VCPU": amount}}] if fits else [])


SHARED_DRAWS = [
    # (total, used, amounts of groups "1" and "2", what the one candidate draws, or None)
    (4, 0, (2, 2), 4),  # the two groups fill it exactly
    (4, 2, (1, 1), 2),
    (4, 2, (1, 2), None),  # each fits alone; together they exceed what the usage leaves
    (4, 0, (3, 2), None),
]


@pytest.mark.parametrize(("total", "used", "asked", "drawn"), SHARED_DRAWS)
def test_groups_drawing_one_class_from_one_provider_must_fit_its_capacity_together(total, used, asked, drawn):
    snap = snapshot(rp("cn", VCPU=total, used={"VCPU": used}))
    groups = [group("1", VCPU=asked[0]), group("2", VCPU=asked[1])]
    result = allocation_candidates(snap, groups, RequestWide(group_policy="none"))
    assert [amounts(c) for c in result.candidates] == ([{"cn": {"VCPU": drawn}}] if drawn else [])


def reserved_beyond_total():
    """A tree where one inventory reserves more than its total (POST /reshaper stores it unchecked, as
    upstream's reshaper does): capacity int((1 - 2) * 1.0) = -1, so that provider takes no part in the class."""
    return snapshot(rp("cn", MEMORY_MB=1),
                    rp("c", root="cn", parent="cn", MEMORY_MB=InventoryView(total=1, reserved=2), DISK_GB=10))


@pytest.mark.parametrize("groups", [
    [group(MEMORY_MB=1, DISK_GB=1)],
    [group(DISK_GB=1), group("1", MEMORY_MB=1)],
], ids=["one group", "a class per group"])
def test_an_inventory_reserved_beyond_its_total_hides_no_room_another_provider_has(groups):
    result = allocation_candidates(reserved_beyond_total(), groups, RequestWide(group_policy="none"))
    assert [amounts(c) for c in result.candidates] == [{"cn": {"MEMORY_MB": 1}, "c": {"DISK_GB": 1}}]
    assert {s.uuid: s.resources["MEMORY_MB"] for s in result.summaries} == {"cn": (1, 0), "c": (-1, 0)}


STEPS = [
    # (what, snapshot, groups, steps, candidates, summaries)
    ("one group, two providers: one combination each",
     snapshot(rp("a", VCPU=1), rp("b", VCPU=1)), [group(VCPU=1)], 2, 2, 2),
    ("two groups on one provider: the first group's prefix, then the combination",
     snapshot(rp("cn", VCPU=4)), [group("1", VCPU=1), group("2", VCPU=1)], 2, 1, 1),
    ("max_unit breaks the combination: walked, nothing kept",
     snapshot(rp("cn", VCPU=InventoryView(total=4, max_unit=3))), [group("1", VCPU=2), group("2", VCPU=2)], 2, 0, 0),
    ("the tree holds less than the groups ask together: dropped unwalked (upstream bug 2160721)",
     snapshot(rp("cn", VCPU=4)), [group("1", VCPU=3), group("2", VCPU=3)], 0, 0, 0),
    ("a provider reserving beyond its total adds no room to that sum: dropped unwalked",
     snapshot(rp("cn", VCPU=2), rp("c", root="cn", parent="cn", VCPU=InventoryView(total=1, reserved=2), DISK_GB=10)),
     [group("1", VCPU=2), group("2", VCPU=1), group("3", DISK_GB=1)], 0, 0, 0),
]


@pytest.mark.parametrize(("what", "snap", "groups", "steps", "count", "summaries"), STEPS,
                         ids=[row[0] for row in STEPS])
def test_steps_count_every_prefix_the_walk_looks_at(what, snap, groups, steps, count, summaries):
    result = allocation_candidates(snap, groups, RequestWide(group_policy="none"))
    assert (result.steps, len(result.candidates), len(result.summaries)) == (steps, count, summaries)


# --- one provider per group: traits and aggregates ---------------------------------------------------

FLAT = snapshot(
    rp("a", traits=["CUSTOM_T"], aggs=["X"], VCPU=4),
    rp("b", aggs=["X"], VCPU=4),
    rp("c", traits=["CUSTOM_T"], VCPU=4),
    rp("d", aggs=["BAD"], VCPU=4),
    rp("e", traits=["CUSTOM_OFF"], VCPU=4),
    rp("f", VCPU=4),
)

ONE_PROVIDER_FILTERS = [
    # (group filters, the providers answered)
    ({"traits": ["CUSTOM_T"]}, {"a", "c"}),
    ({"member_of": ["X"]}, {"a", "b"}),
    ({"traits": ["CUSTOM_T"], "member_of": ["X"]}, {"a"}),
    ({"forbidden_aggs": ["BAD"]}, {"a", "b", "c", "e", "f"}),
    ({"forbidden": ["CUSTOM_OFF"]}, {"a", "b", "c", "d", "f"}),
    ({"forbidden": ["CUSTOM_OFF"], "forbidden_aggs": ["BAD"]}, {"a", "b", "c", "f"}),
    ({"traits": ["CUSTOM_T"], "forbidden_aggs": ["X"]}, {"c"}),
    ({"member_of": ["X"], "forbidden": ["CUSTOM_T"]}, {"b"}),
]


@pytest.mark.parametrize("suffix", ["", "1"])
@pytest.mark.parametrize(("filters", "answered"), ONE_PROVIDER_FILTERS)
def test_a_group_on_one_provider_takes_those_with_its_traits_and_aggregates_and_none_forbidden(
        filters, answered, suffix):
    result = allocation_candidates(FLAT, [group(suffix, VCPU=1, **filters)], RequestWide())
    assert picks(result) == {(u,) for u in answered}
    assert {c.mappings[suffix] for c in result.candidates} == {(u,) for u in answered}


TWO_CLASSES = snapshot(
    rp("cn1", VCPU=4, MEMORY_MB=512),
    rp("cn2", traits=["CUSTOM_T"], VCPU=4),
    rp("cn3", traits=["CUSTOM_T"], VCPU=4, MEMORY_MB=512),
    rp("cn4", MEMORY_MB=512),
)


@pytest.mark.parametrize("suffix", ["", "1"])
@pytest.mark.parametrize(("traits", "answered"), [((), {"cn1", "cn3"}), (["CUSTOM_T"], {"cn3"})])
def test_a_group_on_one_provider_needs_every_class_it_asks_for_from_that_provider(traits, answered, suffix):
    result = allocation_candidates(TWO_CLASSES, [group(suffix, traits=traits, VCPU=1, MEMORY_MB=64)], RequestWide())
    assert [amounts(c) for c in result.candidates] == [{u: {"VCPU": 1, "MEMORY_MB": 64}} for u in sorted(answered)]


# --- trees: the unsuffixed group's aggregates ----------------------------------------------------------

def child_in_aggregate():
    return snapshot(rp("cn"), rp("c1", root="cn", parent="cn", aggs=["A"], VCPU=4),
                    rp("c2", root="cn", parent="cn", VCPU=4))


@pytest.mark.parametrize(("filters", "answered"), [
    ({"member_of": ["A"]}, {("c1",)}),  # the provider itself in the aggregate (its root is not)
    ({"forbidden_aggs": ["A"]}, {("c2",)}),  # the provider itself in it excludes it (its root is not)
])
def test_in_a_tree_a_provider_in_the_aggregate_counts_even_when_its_root_is_not(filters, answered):
    assert picks(allocation_candidates(child_in_aggregate(), [group(VCPU=1, **filters)], RequestWide())) == answered


@pytest.mark.parametrize(("wide", "answered"), [
    (RequestWide(), {("cn1-numa",), ("cn2-numa",)}),
    (RequestWide(root_forbidden=frozenset({"COMPUTE_STATUS_DISABLED"})), {("cn2-numa",)}),
    (RequestWide(root_required=frozenset({"COMPUTE_STATUS_DISABLED"})), {("cn1-numa",)}),
])
def test_root_required_and_root_forbidden_pick_the_trees_the_unsuffixed_group_spreads_over(wide, answered):
    snap = snapshot(rp("cn1", traits=["COMPUTE_STATUS_DISABLED"]), rp("cn1-numa", root="cn1", parent="cn1", VCPU=4),
                    rp("cn2"), rp("cn2-numa", root="cn2", parent="cn2", VCPU=4))
    assert picks(allocation_candidates(snap, [group(VCPU=1)], wide)) == answered


def traits_in_a_tree():
    return snapshot(rp("cn"), rp("c1", root="cn", parent="cn", traits=["CUSTOM_OFF"], VCPU=4),
                    rp("c2", root="cn", parent="cn", traits=["CUSTOM_T"], VCPU=4),
                    rp("c3", root="cn", parent="cn", VCPU=4))


@pytest.mark.parametrize(("filters", "answered"), [
    ({"forbidden": ["CUSTOM_OFF"]}, {("c2",), ("c3",)}),
    ({"traits": ["CUSTOM_T"]}, {("c2",)}),
    ({"traits": ["CUSTOM_T"], "forbidden": ["CUSTOM_OFF"]}, {("c2",)}),
])
def test_in_a_tree_the_unsuffixed_group_skips_each_combination_its_traits_refuse_and_keeps_the_rest(
        filters, answered):
    assert picks(allocation_candidates(traits_in_a_tree(), [group(VCPU=1, **filters)], RequestWide())) == answered


# --- sharing providers ---------------------------------------------------------------------------------

def shared_disk():
    return snapshot(rp("cn1", aggs=["agg"], VCPU=8),
                    rp("ss", traits=[SHARING_TRAIT], aggs=["agg"], DISK_GB=100))


@pytest.mark.parametrize(("member_of", "found"), [
    ((), [{"cn1": {"VCPU": 1}, "ssA": {"DISK_GB": 10}}, {"cn1": {"VCPU": 1}, "ssB": {"DISK_GB": 10}}]),
    (["A"], [{"cn1": {"VCPU": 1}, "ssA": {"DISK_GB": 10}}]),  # ssB shares with cn1 through B only
    (["B"], [{"cn1": {"VCPU": 1}, "ssB": {"DISK_GB": 10}}]),
])
def test_member_of_lets_the_unsuffixed_group_use_only_sharing_providers_in_the_aggregate(member_of, found):
    snap = snapshot(rp("cn1", aggs=["A", "B"], VCPU=8),
                    rp("ssA", traits=[SHARING_TRAIT], aggs=["A"], DISK_GB=100),
                    rp("ssB", traits=[SHARING_TRAIT], aggs=["B"], DISK_GB=100))
    result = allocation_candidates(snap, [group(VCPU=1, DISK_GB=10, member_of=member_of)], RequestWide())
    assert [amounts(c) for c in result.candidates] == found


@pytest.mark.parametrize(("policy", "found"), [("none", [{"ss": {"DISK_GB": 20}}]), ("isolate", [])])
def test_isolate_keeps_two_granular_groups_off_one_sharing_provider_under_every_tree_it_serves(policy, found):
    groups = [group("1", DISK_GB=10), group("2", DISK_GB=10)]
    result = allocation_candidates(shared_disk(), groups, RequestWide(group_policy=policy))
    assert [amounts(c) for c in result.candidates] == found


def test_a_sharing_provider_answers_granular_groups_only_under_trees_that_root_required_allows():
    snap = snapshot(
        rp("cn1", aggs=["agg"]),
        rp("cn3", traits=["CUSTOM_COMPUTE"], aggs=["agg"]),
        rp("ss1", traits=[SHARING_TRAIT], aggs=["agg"], VCPU=8),
        rp("ss2", traits=[SHARING_TRAIT], aggs=["agg"], DISK_GB=100),
    )
    groups = [group("1", VCPU=1), group("2", DISK_GB=10)]
    result = allocation_candidates(snap, groups, RequestWide(group_policy="none",
                                                             root_required=frozenset({"CUSTOM_COMPUTE"})))
    assert [(c.anchor, amounts(c)) for c in result.candidates] == [
        ("cn3", {"ss1": {"VCPU": 1}, "ss2": {"DISK_GB": 10}})]
    assert {s.uuid for s in result.summaries} == {"ss1", "ss2"}


@pytest.mark.parametrize(("in_tree", "found"), [
    (None, [{"cn1": {"VCPU": 1}, "ss": {"DISK_GB": 10}}]),
    ("ss", []),  # the unsuffixed group stays in the sharing provider's own tree: not anchored at cn1
])
def test_in_tree_keeps_the_unsuffixed_group_in_that_tree_even_on_a_sharing_provider(in_tree, found):
    groups = [group(DISK_GB=10, in_tree=in_tree), group("1", VCPU=1)]
    result = allocation_candidates(shared_disk(), groups, RequestWide(group_policy="none"))
    assert [amounts(c) for c in result.candidates] == found


# --- group_policy and same_subtree ---------------------------------------------------------------------

def test_isolate_leaves_the_unsuffixed_group_free_to_share_a_provider_with_a_granular_one():
    result = allocation_candidates(numa_host(), [group(VCPU=1), group("1", VCPU=1)],
                                   RequestWide(group_policy="isolate"))
    assert {(c.mappings[""], c.mappings["1"]) for c in result.candidates} == {
        (("numa0",), ("numa0",)), (("numa0",), ("numa1",)), (("numa1",), ("numa0",)), (("numa1",), ("numa1",))}


def test_same_subtree_over_one_provider_holds_without_reading_its_ancestors():
    """Upstream's _check_same_subtree answers True for a single provider before it looks up any parent: so does
    this one, even for a tree read while it moved (its parent not in the snapshot)."""
    snap = snapshot(rp("c", root="gone", parent="gone", VCPU=4, DISK_GB=10))
    wide = RequestWide(group_policy="none", same_subtrees=(frozenset({"1", "2"}),))
    result = allocation_candidates(snap, [group("1", VCPU=1), group("2", DISK_GB=1)], wide)
    assert [amounts(c) for c in result.candidates] == [{"c": {"VCPU": 1, "DISK_GB": 1}}]


# --- order and bounds ----------------------------------------------------------------------------------

def test_the_unsuffixed_group_answers_a_trees_providers_in_snapshot_order():
    children = [rp(f"c{i}", root="r", parent="r", VCPU=1) for i in reversed(range(8))]  # c7 created first
    result = allocation_candidates(snapshot(rp("r"), *children), [group(VCPU=1)], RequestWide())
    assert [next(iter(c.resources)) for c in result.candidates] == [f"c{i}" for i in reversed(range(8))]


def test_the_unsuffixed_group_answers_trees_in_the_order_of_their_roots():
    snap = snapshot(rp("ra", VCPU=4), rp("rb", VCPU=4),  # the roots, ra first; their disks the other way round
                    rp("rb-disk", root="rb", parent="rb", DISK_GB=10),
                    rp("ra-disk", root="ra", parent="ra", DISK_GB=10))
    result = allocation_candidates(snap, [group(VCPU=1, DISK_GB=1)], RequestWide())
    assert [c.anchor for c in result.candidates] == ["ra", "rb"]
    assert [c.anchor for c in allocation_candidates(snap, [group(VCPU=1, DISK_GB=1)], RequestWide(limit=1)).candidates
            ] == ["ra"]


def test_a_tree_whose_root_the_snapshot_lacks_still_answers_and_comes_first():
    """A tree read while it moved can arrive without its root: its providers still answer, ordered as the
    first tree (the root they name has no place in the snapshot)."""
    snap = snapshot(rp("a", DISK_GB=1), rp("b", VCPU=1), rp("c", root="gone", parent="gone", VCPU=1))
    result = allocation_candidates(snap, [group(VCPU=1)], RequestWide())
    assert [(c.anchor, amounts(c)) for c in result.candidates] == [
        ("gone", {"c": {"VCPU": 1}}), ("b", {"b": {"VCPU": 1}})]
    assert [s.uuid for s in result.summaries] == ["b", "c"]


def two_trees():
    return snapshot(rp("a"), rp("a1", root="a", parent="a", VCPU=1), rp("a2", root="a", parent="a", VCPU=1),
                    rp("b"), rp("b1", root="b", parent="b", VCPU=1))


@pytest.mark.parametrize(("strategy", "order"), [("depth-first", ["a1", "a2", "b1"]),
                                                  ("breadth-first", ["a1", "b1", "a2"])])
def test_every_candidate_is_answered_tree_by_tree_or_round_robin(strategy, order):
    result = allocation_candidates(two_trees(), [group(VCPU=1)], RequestWide(strategy=strategy))
    assert [next(iter(c.resources)) for c in result.candidates] == order


def test_an_unknown_strategy_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^unknown strategy 'sideways'$"):
        allocation_candidates(two_trees(), [group(VCPU=1)], RequestWide(strategy="sideways"))


@pytest.mark.parametrize(("max_examined", "count"), [(1, 1), (2, 2), (3, 3), (4, 3)])
def test_max_examined_stops_the_walk_after_that_many_combinations(max_examined, count):
    snap = snapshot(rp("a", VCPU=1), rp("b", VCPU=1), rp("c", VCPU=1))
    result = allocation_candidates(snap, [group(VCPU=1)], RequestWide(max_examined=max_examined))
    assert [c.anchor for c in result.candidates] == ["a", "b", "c"][:count]


@pytest.mark.parametrize(("max_examined", "nics"), [(1, ["pf0"]), (3, ["pf0"]), (4, ["pf0", "pf1"])])
def test_max_examined_counts_the_combinations_same_subtree_refuses(max_examined, nics):
    # Walked in order: (numa0, pf0) kept, (numa0, pf1) and (numa1, pf0) refused, (numa1, pf1) kept.
    groups = [group("_CPU", VCPU=1), group("_NIC", SRIOV_NET_VF=1)]
    wide = RequestWide(group_policy="none", same_subtrees=(frozenset({"_CPU", "_NIC"}),), max_examined=max_examined)
    result = allocation_candidates(numa_host(), groups, wide)
    assert [c.mappings["_NIC"][0] for c in result.candidates] == nics


# --- summaries -----------------------------------------------------------------------------------------

def test_summaries_show_each_provider_of_the_tree_with_capacity_usage_parent_and_traits():
    snap = snapshot(
        rp("cn", traits=["CUSTOM_T"], VCPU=8, used={"VCPU": 3}),
        rp("c", root="cn", parent="cn", MEMORY_MB=InventoryView(total=100, reserved=20, allocation_ratio=1.5),
           used={"MEMORY_MB": 7}),
        rp("other", VCPU=8),
    )
    result = allocation_candidates(snap, [group(VCPU=1)], RequestWide(limit=1))
    assert result.summaries == [
        Summary("cn", "cn", None, frozenset({"CUSTOM_T"}), {"VCPU": (8, 3)}),
        Summary("c", "cn", "cn", frozenset(), {"MEMORY_MB": (120, 7)}),
    ]


def test_before_1_29_summaries_show_only_the_providers_drawn_from():
    result = allocation_candidates(numa_host(), [group(VCPU=1)], RequestWide(nested_aware=False))
    assert picks(result) == {("numa0",), ("numa1",)}
    assert [s.uuid for s in result.summaries] == ["numa0", "numa1"]


def test_a_snapshot_lists_a_trees_providers_by_its_root_in_snapshot_order():
    snap = snapshot(rp("b"), rp("a"), rp("b1", root="b", parent="b"), rp("a1", root="a", parent="a"))
    assert [p.uuid for p in snap.tree("b")] == ["b", "b1"]
    assert [p.uuid for p in snap.tree("a")] == ["a", "a1"]
    assert snap.tree("b1") == []


def test_groups_sharing_a_class_count_no_room_on_a_provider_reserving_beyond_its_total():
    """The tree-level pre-check (upstream bug 2160721) adds up what the tree holds of a class several groups
    ask for: a provider reserving more than its total adds nothing to it (not less than nothing), as upstream
    checks each provider on its own."""
    snap = snapshot(rp("cn", MEMORY_MB=2),
                    rp("c", root="cn", parent="cn", MEMORY_MB=InventoryView(total=1, reserved=2), DISK_GB=10))
    groups = [group("1", MEMORY_MB=1), group("2", MEMORY_MB=1), group("3", DISK_GB=1)]
    result = allocation_candidates(snap, groups, RequestWide(group_policy="none"))
    assert [amounts(c) for c in result.candidates] == [{"cn": {"MEMORY_MB": 2}, "c": {"DISK_GB": 1}}]


@pytest.mark.parametrize(("max_candidates", "count"), [(-1, 3), (0, 1), (1, 1), (2, 2), (3, 3)])
def test_max_candidates_bounds_the_answer_and_only_a_negative_bound_is_none(max_candidates, count):
    """Upstream's `max_allocation_candidates`: stop once that many are kept (checked after each is kept, so 0
    keeps one); a negative value is unbounded."""
    snap = snapshot(rp("a", VCPU=1), rp("b", VCPU=1), rp("c", VCPU=1))
    result = allocation_candidates(snap, [group(VCPU=1)], RequestWide(max_candidates=max_candidates))
    assert [c.anchor for c in result.candidates] == ["a", "b", "c"][:count]


def test_same_subtree_in_a_tree_read_without_its_root_looks_only_at_the_ancestors_it_has():
    """A tree read while it moved can arrive without its root: same_subtree walks up to the first ancestor
    the snapshot lacks, instead of failing on it."""
    snap = snapshot(rp("numa", root="gone", parent="gone", VCPU=2),
                    rp("pf", root="gone", parent="numa", CUSTOM_VF=2), rp("other", root="gone", parent="gone",
                                                                         CUSTOM_VF=2))
    wide = RequestWide(group_policy="none", same_subtrees=(frozenset({"1", "2"}),))
    result = allocation_candidates(snap, [group("1", VCPU=1), group("2", CUSTOM_VF=1)], wide)
    assert [amounts(c) for c in result.candidates] == [{"numa": {"VCPU": 1}, "pf": {"CUSTOM_VF": 1}}]


@pytest.mark.parametrize(("limit", "max_candidates"), [(1, 1000), (None, 1)])
def test_before_1_29_a_candidate_using_two_providers_of_a_tree_is_dropped_before_limit_and_bound(
        limit, max_candidates):
    """Upstream drops them (exclude_nested_providers) before limit_results: the flat node still answers."""
    snap = snapshot(rp("tree", DISK_GB=500), rp("child", root="tree", parent="tree", MEMORY_MB=2048),
                    rp("flat", DISK_GB=50, MEMORY_MB=4096))
    wide = RequestWide(nested_aware=False, limit=limit, max_candidates=max_candidates)
    result = allocation_candidates(snap, [group(MEMORY_MB=512, DISK_GB=1)], wide)
    assert [amounts(c) for c in result.candidates] == [{"flat": {"MEMORY_MB": 512, "DISK_GB": 1}}]


@pytest.mark.parametrize(("max_examined", "answered"), [(1, []), (2, ["flat"])])
def test_before_1_29_max_examined_counts_the_candidates_dropped_for_using_two_providers_of_a_tree(
        max_examined, answered):
    snap = snapshot(rp("tree", DISK_GB=500), rp("child", root="tree", parent="tree", MEMORY_MB=2048),
                    rp("flat", DISK_GB=50, MEMORY_MB=4096))
    wide = RequestWide(nested_aware=False, max_examined=max_examined)
    result = allocation_candidates(snap, [group(MEMORY_MB=512, DISK_GB=1)], wide)
    assert [c.anchor for c in result.candidates] == answered


def test_before_1_29_limit_keeps_the_summaries_of_every_provider_any_candidate_drew_from_in_the_kept_trees():
    """Upstream's limit_results keeps each summary whose root a kept candidate's tree has: below 1.29 that is
    every provider a candidate drew from (before the cut) in those trees, not only the kept candidate's."""
    snap = snapshot(rp("root"), rp("c1", root="root", parent="root", VCPU=4),
                    rp("c2", root="root", parent="root", VCPU=4), rp("other", VCPU=4))
    result = allocation_candidates(snap, [group(VCPU=1)], RequestWide(nested_aware=False, limit=1))
    assert [amounts(c) for c in result.candidates] == [{"c1": {"VCPU": 1}}]
    assert [s.uuid for s in result.summaries] == ["c1", "c2"]
