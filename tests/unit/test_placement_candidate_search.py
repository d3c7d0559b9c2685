"""What GET /allocation_candidates reads (candidate_search.py) over a fake store: the names checked in
upstream's order, the tree-by-tree read that stops at `limit`, `in_tree`'s one tree, the full read with
sharing providers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.config import PlacementCandidateSettings
from chalicelib.placement import candidate_search, errors
from chalicelib.placement.candidate_query import parse
from chalicelib.placement.candidate_search import CandidateSearch
from chalicelib.placement.candidates import allocation_candidates
from chalicelib.placement.models import Inventory, Provider


class FakeStore:
    """The store's candidate reads over a dict of providers, counting what is read."""

    def __init__(self, providers: list[Provider], aggregates: dict[str, set[str]] | None = None,
                 sharing: list[str] | None = None, custom: set[str] | None = None) -> None:
        self.by_uuid = {p.uuid: p for p in providers}
        self.aggregates = aggregates or {}
        self.sharing = sharing or []
        self.custom = custom or set()
        self.read: list[str] = []
        self.calls: list[str] = []

    def class_holder_pages(self, rc: str, page_size: int) -> Iterator[list[str]]:
        holders = self.class_holders(rc)
        for i in range(0, len(holders), page_size):
            self.calls.append("page")
            yield holders[i:i + page_size]

    def class_holders(self, rc: str) -> list[str]:
        return sorted(u for u, p in self.by_uuid.items() if rc in p.inventories)

    def sharing_providers(self) -> list[str]:
        return list(self.sharing)

    def aggregate_members(self, aggregate: str) -> set[str]:
        self.calls.append(f"agg:{aggregate}")
        return set(self.aggregates.get(aggregate, set()))

    def members_of_any(self, aggregates: frozenset[str]) -> set[str]:
        return set().union(*(self.aggregate_members(a) for a in sorted(aggregates)))

    def member_in_every(self, member_of: list[frozenset[str]]) -> bool:
        """As the store: the membership items name the providers (`aggregates`, hints that may name more), and
        a provider counts only when its own aggregates say so."""
        self.calls.append("member_in_every")
        named = set.intersection(*(set().union(*(self.aggregates.get(a, set()) for a in s)) for s in member_of))
        return any(u in self.by_uuid and all(self.by_uuid[u].aggregates & s for s in member_of) for u in named)

    def tree_uuids(self, root: str) -> list[str]:
        self.calls.append(f"tree:{root}")
        return [u for u, p in self.by_uuid.items() if p.root == root]

    def providers_for_candidates(self, uuids: list[str], workers: int = 1) -> dict[str, Provider]:
        self.read += uuids
        return {u: self.by_uuid[u] for u in uuids if u in self.by_uuid}

    def existing_custom_traits(self, names: list[str]) -> set[str]:
        self.calls.append("traits")
        return {n for n in names if n in self.custom}

    def existing_custom_classes(self, names: list[str]) -> set[str]:
        self.calls.append("classes")
        return {n for n in names if n in self.custom}


def compute(uuid: str, *, traits: frozenset[str] = frozenset(), children: int = 0,
            aggregates: frozenset[str] = frozenset(), kids: frozenset[str] = frozenset(),
            **inventories: int) -> Provider:
    return Provider(uuid=uuid, name=uuid, children=children, traits=traits, aggregates=aggregates, child_uuids=kids,
                    inventories={rc: Inventory(total=n) for rc, n in (inventories or {"VCPU": 8}).items()},
                    created_at=int(uuid[-4:], 16) if uuid[-4:].isalnum() else 0)


def child(uuid: str, root: str, **inventories: int) -> Provider:
    return Provider(uuid=uuid, name=uuid, parent_uuid=root, root_uuid=root,
                    inventories={rc: Inventory(total=n) for rc, n in inventories.items()})


def search(store: FakeStore, query: str, version: tuple[int, int] = (1, 36), bound: int = 1000) -> Any:
    params: dict[str, list[str]] = {}
    for part in query.split("&"):
        name, _, value = part.partition("=")
        params.setdefault(name, []).append(value)
    settings = PlacementCandidateSettings(bound, "depth-first")
    return CandidateSearch(store, settings).run(parse(params, version))  # type: ignore[arg-type]


PAGE = candidate_search.PAGE
MANY = PAGE * 2 + PAGE // 2  # two and a half pages of the class index


def test_tree_by_tree_reading_stops_at_the_page_that_holds_limit_candidates():
    store = FakeStore([compute(f"cn-{i:04x}") for i in range(MANY)])
    result = search(store, "resources=VCPU:1&limit=3")
    assert len(result.candidates) == 3 and len(result.summaries) == 3
    assert store.calls.count("page") == 1 and len(store.read) == PAGE
    everything = FakeStore([compute(f"cn-{i:04x}") for i in range(MANY)])
    assert len(search(everything, "resources=VCPU:1", bound=MANY).candidates) == MANY
    assert everything.calls.count("page") == 3


def test_the_bound_stops_reading_without_a_limit():
    store = FakeStore([compute(f"cn-{i:04x}") for i in range(MANY)])
    assert len(search(store, "resources=VCPU:1", bound=PAGE + 1).candidates) == PAGE + 1
    assert store.calls.count("page") == 2


def test_a_nested_tree_is_read_whole_and_a_flat_root_costs_no_query():
    store = FakeStore([compute("cn-0001", children=1, VCPU=8), child("dev-0001", "cn-0001", CUSTOM_DEV=2),
                       compute("cn-0002")], custom={"CUSTOM_DEV"})
    result = search(store, "resources=VCPU:1,CUSTOM_DEV:1")
    assert [sorted(c.resources) for c in result.candidates] == [["cn-0001", "dev-0001"]]
    assert {s.uuid for s in result.summaries} == {"cn-0001", "dev-0001"}
    assert [c for c in store.calls if c.startswith("tree:")] == ["tree:cn-0001"]


def test_a_tree_whose_items_know_their_children_is_read_by_key_a_level_at_a_time():
    store = FakeStore([compute("cn-0001", children=1, kids=frozenset({"numa-0001"}), VCPU=8),
                       Provider(uuid="numa-0001", name="numa-0001", parent_uuid="cn-0001", root_uuid="cn-0001",
                                children=1, child_uuids=frozenset({"dev-0001"})),
                       child("dev-0001", "cn-0001", CUSTOM_DEV=2)], custom={"CUSTOM_DEV"})
    result = search(store, "resources=VCPU:1,CUSTOM_DEV:1")
    assert [sorted(c.resources) for c in result.candidates] == [["cn-0001", "dev-0001"]]
    assert not [c for c in store.calls if c.startswith("tree:")]
    assert store.read == ["cn-0001", "numa-0001", "dev-0001"]


def test_a_child_read_in_another_tree_has_its_tree_read_by_query():
    moved = Provider(uuid="dev-0001", name="dev-0001", parent_uuid="cn-0002", root_uuid="cn-0002",
                     inventories={"CUSTOM_DEV": Inventory(total=2)})
    store = FakeStore([compute("cn-0001", children=1, kids=frozenset({"dev-0001"}), VCPU=8), moved],
                      custom={"CUSTOM_DEV"})
    assert search(store, "resources=VCPU:1,CUSTOM_DEV:1").candidates == []
    assert [c for c in store.calls if c.startswith("tree:")] == ["tree:cn-0001"]


def test_in_tree_reads_that_tree_only():
    store = FakeStore([compute("cn-0001"), compute("cn-0002")])
    result = search(store, "resources=VCPU:1&in_tree=00000000-0000-0000-0000-000000000002")
    assert result.candidates == [] and "page" not in store.calls  # no such provider: empty, nothing else read
    store = FakeStore([compute("00000000-0000-0000-0000-000000000002"), compute("cn-0001")])
    result = search(store, "resources=VCPU:1&in_tree=00000000-0000-0000-0000-000000000002")
    assert [list(c.resources) for c in result.candidates] == [["00000000-0000-0000-0000-000000000002"]]
    assert "page" not in store.calls and "cn-0001" not in store.read


def test_with_sharing_providers_everything_the_request_touches_is_read():
    shared = compute("ss-0001", traits=frozenset({"MISC_SHARES_VIA_AGGREGATE"}), aggregates=frozenset({"agg"}),
                     DISK_GB=100)
    cn = compute("cn-0001", aggregates=frozenset({"agg"}), VCPU=8)
    store = FakeStore([shared, cn], aggregates={"agg": {"ss-0001", "cn-0001"}}, sharing=["ss-0001"])
    result = search(store, "resources=VCPU:1,DISK_GB:10")
    assert [sorted(c.resources) for c in result.candidates] == [["cn-0001", "ss-0001"]]
    assert "page" not in store.calls and "agg:agg" in store.calls


@pytest.mark.parametrize(("query", "detail"), [
    ("resources=CUSTOM_NOPE:1&root_required=CUSTOM_NOT_A_TRAIT", "No such trait(s): CUSTOM_NOT_A_TRAIT."),
    ("resources=CUSTOM_NOPE:1&required=CUSTOM_NOT_A_TRAIT",
     "Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE."),
    ("resources=VCPU:1&required=CUSTOM_NOT_A_TRAIT", "No such trait(s): CUSTOM_NOT_A_TRAIT."),
])
def test_names_are_checked_in_upstreams_order(query, detail):
    with pytest.raises(errors.Invalid) as refused:
        search(FakeStore([compute("cn-0001")]), query)
    assert refused.value.detail == detail


def test_a_member_of_nobody_is_in_answers_nothing_before_the_traits_are_checked():
    agg = "11111111-1111-1111-1111-111111111111"
    query = f"resources=VCPU:1&member_of={agg}&required=CUSTOM_NOT_A_TRAIT"
    result = search(FakeStore([compute("cn-0001")]), query)
    assert result.candidates == [] and result.summaries == []


def test_a_membership_item_whose_provider_is_no_longer_a_member_counts_for_nothing():
    """Membership items are hints (decision 0047): one left behind by an interrupted write names a provider
    whose own aggregates do not hold the aggregate, and the member_of is as empty as with no item at all."""
    agg = "11111111-1111-1111-1111-111111111111"
    query = f"resources=VCPU:1&member_of={agg}&required=CUSTOM_NOT_A_TRAIT"
    result = search(FakeStore([compute("cn-0001", VCPU=4)], aggregates={agg: {"cn-0001"}}), query)
    assert result.candidates == [] and result.summaries == []


# --- read tree by tree, answer as if everything were read -------------------------------------------

ROOT_TRAITS = ["HW_CPU_X86_AVX", "COMPUTE_STATUS_DISABLED"]


@st.composite
def worlds(draw: Any) -> tuple[list[Provider], str]:
    providers: list[Provider] = []
    for t in range(draw(st.integers(1, 5))):
        root = f"r{t}"
        kids = draw(st.integers(0, 2))
        known = draw(st.booleans())  # the root item knows its children's uuids, or (written before) not
        providers.append(Provider(uuid=root, name=root, children=kids, created_at=len(providers),
                                  child_uuids=frozenset(f"{root}c{k}" for k in range(kids)) if known else frozenset(),
                                  traits=frozenset(draw(st.sets(st.sampled_from(ROOT_TRAITS)))),
                                  inventories={rc: Inventory(total=draw(st.integers(1, 3)))
                                               for rc in draw(st.sets(st.sampled_from(["VCPU", "DISK_GB"])))}))
        for k in range(kids):
            providers.append(Provider(uuid=f"{root}c{k}", name=f"{root}c{k}", parent_uuid=root, root_uuid=root,
                                      created_at=len(providers),
                                      traits=frozenset(draw(st.sets(st.sampled_from(["HW_CPU_X86_AVX"])))),
                                      inventories={rc: Inventory(total=draw(st.integers(1, 3)))
                                                   for rc in draw(st.sets(st.sampled_from(["VCPU", "DISK_GB"])))}))
    query = draw(st.sampled_from([
        "resources=VCPU:1", "resources=VCPU:1,DISK_GB:1", "resources=VCPU:1&required=HW_CPU_X86_AVX",
        "resources=VCPU:1&root_required=!COMPUTE_STATUS_DISABLED",
        "resources1=VCPU:1&resources2=VCPU:1&group_policy=isolate",
        "resources1=VCPU:1&resources2=DISK_GB:1&group_policy=none",
        "resources=DISK_GB:1&resources1=VCPU:1&required1=HW_CPU_X86_AVX&group_policy=none",
    ]))
    return providers, query


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_reading_tree_by_tree_finds_what_reading_everything_finds(world):
    providers, query = world
    candidate_search.PAGE = 2  # several pages, trees split over them
    try:
        lazy = search(FakeStore(providers), query)
    finally:
        candidate_search.PAGE = PAGE
    params: dict[str, list[str]] = {}
    for part in query.split("&"):
        name, _, value = part.partition("=")
        params.setdefault(name, []).append(value)
    parsed = parse(params, (1, 36))
    everything = allocation_candidates(candidate_search.snapshot_of(providers), list(parsed.groups), parsed.wide)
    assert {c.key() for c in lazy.candidates} == {c.key() for c in everything.candidates}
    assert {s.uuid for s in lazy.summaries} == {s.uuid for s in everything.summaries}
