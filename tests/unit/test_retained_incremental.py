"""Issue 18 (pure): the scopes an event marks, an item's index entries, and the patch of a stored list.

Property: for any view and any change of it, patching the list computed before with the rows of the
marked scopes recomputed (from the items in them, the way the read takes them from the index) gives
the list computed from scratch after the change.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.retained.rules import Item, Project, SiteBinding, in_scopes, patch_list, retained_accounts
from chalicelib.store.keys import key_id
from chalicelib.view.events import EVENT_ADAPTER
from chalicelib.view.keys import index_keys, index_query, pair_scope, party_scope, project_scope
from chalicelib.view.marks import IndexedItem, by_counter, index_change, indexed, marked_scopes

P1, P2 = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
Q1, Q2 = "33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444"


def event(data: dict[str, Any]) -> Any:
    return EVENT_ADAPTER.validate_python(data)


ITEM = {"type": "accepted_item", "itemId": "it-1", "site": "k8s", "projectId": P1, "partyId": Q1, "generation": 2,
        "managementGeneration": 1, "required": True, "revision": 2}


def test_each_event_marks_the_scopes_of_the_rows_it_can_change_at_the_sites_it_feeds() -> None:
    assert marked_scopes(event({"type": "project", "projectId": P1, "state": "closed", "managementGeneration": 1,
                                "revision": 1})) == {"k8s": {project_scope(P1)}, "slurm": {project_scope(P1)}}
    assert marked_scopes(event({"type": "membership", "projectId": P1, "partyId": Q1, "generation": 1,
                                "state": "left", "revision": 1})) == {s: {pair_scope(P1, Q1)} for s in ("k8s", "slurm")}
    assert marked_scopes(event({"type": "party_site_binding", "partyId": Q1, "site": "slurm", "bindingId": "b",
                                "state": "retired", "revision": 1})) == {"slurm": {party_scope(Q1)}}
    assert marked_scopes(event(ITEM)) == {"k8s": {pair_scope(P1, Q1)}}
    old = {**ITEM, "projectId": P2}  # the item moved from (P2, Q1): both pairs
    assert marked_scopes(event(ITEM), old) == {"k8s": {pair_scope(P1, Q1), pair_scope(P2, Q1)}}
    assert marked_scopes(event({"type": "username", "site": "k8s", "username": "u", "partyId": Q1,
                                "verified": True, "revision": 1})) == {}
    assert marked_scopes(event({"type": "project_binding", "bindingId": "b", "projectId": P1,
                                "providerProjectRef": "r", "state": "established", "revision": 1})) == {}


def test_scopes_on_one_counter_are_one_update() -> None:
    counters = by_counter({"k8s": {pair_scope(P1, Q1), pair_scope(P2, Q1)}, "slurm": {pair_scope(P1, Q1)}})
    assert sum(len(s) for s in counters.values()) == 3
    assert {site for site, _ in counters} == {"k8s", "slurm"}


def test_only_required_items_are_indexed() -> None:
    assert indexed(None) is None
    assert indexed({**ITEM, "required": False}) is None
    assert indexed(ITEM) == IndexedItem("it-1", P1, Q1, 2, 1)


def test_index_change_replaces_the_old_entries() -> None:
    old = IndexedItem("it-1", P2, Q1, 1, 1)
    new = IndexedItem("it-1", P1, Q1, 2, 1)
    assert index_change("k8s", new, new).deletes == [] and index_change("k8s", new, new).puts == []
    change = index_change("k8s", old, new)
    assert [key_id(k) for k in change.deletes] == [key_id(k) for k in index_keys("k8s", P2, Q1, "it-1")]
    assert [key_id(i) for i in change.puts] == [key_id(k) for k in index_keys("k8s", P1, Q1, "it-1")]
    same_pair = index_change("k8s", IndexedItem("it-1", P1, Q1, 1, 1), new)
    assert same_pair.deletes == [] and len(same_pair.puts) == 2  # put again, never also deleted
    assert [key_id(k) for k in index_change("k8s", new, None).deletes] == [
        key_id(k) for k in index_keys("k8s", P1, Q1, "it-1")]


def test_every_scope_has_its_index_partition() -> None:
    by_project, by_party = index_keys("k8s", P1, Q1, "it-1")
    pair = index_query("k8s", pair_scope(P1, Q1))
    assert pair.partition == by_project["pk"]["S"] and by_project["sk"]["S"].startswith(pair.prefix or "")
    assert index_query("k8s", project_scope(P1)).partition == by_project["pk"]["S"]
    assert index_query("k8s", party_scope(Q1)).partition == by_party["pk"]["S"]
    assert index_query("k8s", project_scope(P1)).prefix is None


def test_in_scopes() -> None:
    row = (P1, Q1, "b", 1)
    assert in_scopes(row, frozenset({project_scope(P1)}))
    assert in_scopes(row, frozenset({party_scope(Q1)}))
    assert in_scopes(row, frozenset({pair_scope(P1, Q1)}))
    assert not in_scopes(row, frozenset({pair_scope(P1, Q2), pair_scope(P2, Q1), project_scope(P2), party_scope(Q2)}))
    with pytest.raises(ValueError) as refused:
        in_scopes(row, ["account#x"])
    assert str(refused.value) == "unknown scope 'account#x'"


# --- property -----------------------------------------------------------------------------------

PROJECTS, PARTIES = [P1, P2], [Q1, Q2]
items_ = st.lists(st.builds(Item, st.sampled_from(PROJECTS), st.sampled_from(PARTIES), st.integers(1, 3),
                            st.integers(1, 2), st.booleans()), max_size=8)
projects_ = st.dictionaries(st.sampled_from(PROJECTS), st.builds(Project, st.sampled_from(["active", "closed"]),
                                                                 st.integers(1, 2)))
bindings_ = st.dictionaries(st.sampled_from(PARTIES), st.builds(SiteBinding, st.sampled_from(["b1", "b2"]),
                                                                st.sampled_from(["established", "retired"])))
memberships_ = st.dictionaries(st.tuples(st.sampled_from(PROJECTS), st.sampled_from(PARTIES)), st.integers(1, 3))


@given(items_, projects_, bindings_, memberships_, st.data())
def test_patching_the_marked_scopes_gives_the_list_computed_from_scratch(items, projects, bindings, memberships,
                                                                         data) -> None:
    before = retained_accounts(items, projects, bindings, memberships)
    change = data.draw(st.sampled_from(["project", "binding", "membership", "item"]))
    if change == "project":
        p = data.draw(st.sampled_from(PROJECTS))
        projects = {**projects, p: data.draw(st.builds(Project, st.sampled_from(["active", "closed"]),
                                                       st.integers(1, 2)))}
        scopes = {project_scope(p)}
    elif change == "binding":
        q = data.draw(st.sampled_from(PARTIES))
        bindings = {**bindings, q: SiteBinding(data.draw(st.sampled_from(["b1", "b2"])),
                                               data.draw(st.sampled_from(["established", "retired"])))}
        scopes = {party_scope(q)}
    elif change == "membership":
        p, q = data.draw(st.sampled_from(PROJECTS)), data.draw(st.sampled_from(PARTIES))
        memberships = {**memberships, (p, q): data.draw(st.integers(1, 3))}
        scopes = {pair_scope(p, q)}
    else:
        new = data.draw(items_.filter(bool))[0]
        index = data.draw(st.integers(0, len(items))) if items else 0
        old = items[index] if index < len(items) else None
        items = [*items[:index], new, *items[index + 1:]]
        scopes = {pair_scope(new.project_id, new.party_id)}
        if old is not None:
            scopes.add(pair_scope(old.project_id, old.party_id))
    frozen = frozenset(scopes)
    # What the read takes from the index: the required items of the scopes.
    in_scope = [i for i in items if i.required and in_scopes((i.project_id, i.party_id, "", 0), frozen)]
    recomputed = retained_accounts(in_scope, projects, bindings, memberships)
    assert patch_list(before, frozen, recomputed) == retained_accounts(items, projects, bindings, memberships)


rows_ = st.lists(st.tuples(st.sampled_from(PROJECTS), st.sampled_from(PARTIES), st.sampled_from(["b1", "b2"]),
                           st.integers(1, 3)), unique=True, max_size=10).map(sorted)
scopes_ = st.sets(st.sampled_from([project_scope(p) for p in PROJECTS] + [party_scope(q) for q in PARTIES]
                                  + [pair_scope(p, q) for p in PROJECTS for q in PARTIES]), max_size=3)


@given(rows_, scopes_, rows_, scopes_, rows_)
def test_two_patches_compose_into_one(base, first_scopes, first_rows, second_scopes, second_rows) -> None:
    """A stored base and patch (scopes, rows), patched again, is the same base with one patch: the union
    of the scopes, the first patch's rows outside the second's scopes and the second's rows
    (materialized.py stores large lists this way)."""
    s1, s2 = frozenset(first_scopes), frozenset(second_scopes)
    r1 = [r for r in first_rows if in_scopes(r, s1)]  # a patch holds rows of its scopes only
    r2 = [r for r in second_rows if in_scopes(r, s2)]
    twice = patch_list(patch_list(base, s1, r1), s2, r2)
    assert patch_list(base, s1 | s2, patch_list(r1, s2, r2)) == twice
