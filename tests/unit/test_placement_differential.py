"""The fuzzer's one judgement that lets an answer of ours differ from the reference's without failing:
candidates the reference drops by its anchor-blind dedup (`differential.anchor_blind_drops`). It must
name that case and nothing wider, or it would hide a bug of ours."""

from __future__ import annotations

from typing import Any

import pytest

from tests.placement_conformance.differential import Answer, Step, anchor_blind_drops, compare, without_limit

A, B, C = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002", \
    "cccccccc-0000-4000-8000-000000000003"
QUERY = "/allocation_candidates?resources=VCPU:4,DISK_GB:2&resources1=MEMORY_MB:1024&group_policy=none"


def request(**by_provider: dict[str, int]) -> dict[str, Any]:
    return {"allocations": {p: {"resources": r} for p, r in by_provider.items()}}


KEPT_1 = request(**{A: {"MEMORY_MB": 1024, "VCPU": 4, "DISK_GB": 2}})
KEPT_B = request(**{A: {"MEMORY_MB": 1024, "VCPU": 4}, B: {"DISK_GB": 2}})  # B, a sharing root, paired with A
KEPT_C = request(**{A: {"MEMORY_MB": 1024}, C: {"VCPU": 4, "DISK_GB": 2}})   # C: a child of A
DROPPED = request(**{A: {"MEMORY_MB": 1024}, B: {"VCPU": 4, "DISK_GB": 2}})  # B serving the group alone
SUMMARY = {"resources": {"VCPU": {"capacity": 8, "used": 0}}, "traits": []}


def step(sharing: list[str], roots: dict[str, str] | None = None, query: str = QUERY) -> Step:
    return Step("candidates", "GET", query, "1.25",
                meta={"sharing_roots": sharing, "roots": roots or {A: A, B: B, C: A}})


def body(requests: list[dict[str, Any]], summaries: list[str]) -> dict[str, Any]:
    return {"allocation_requests": requests, "provider_summaries": {u: SUMMARY for u in summaries}}


def test_named_when_the_reference_lacks_only_requests_of_a_sharing_root() -> None:
    named = anchor_blind_drops(step([B]), body([KEPT_1, KEPT_B], [A, B, C]),
                               body([KEPT_1, DROPPED, KEPT_B], [A, B, C]))
    assert named is not None and named.startswith("1 allocation requests the reference dropped")


def test_our_summaries_may_add_the_trees_only_the_dropped_requests_use() -> None:
    c_own_root = {A: A, B: B, C: C}   # C a root of its own here, used by no dropped request
    assert anchor_blind_drops(step([B], c_own_root), body([KEPT_B], [A, B]),
                              body([KEPT_B, DROPPED], [A, B])) is not None
    assert anchor_blind_drops(step([B], c_own_root), body([KEPT_B], [A, B]),
                              body([KEPT_B, DROPPED], [A, B, C])) is None


def test_named_when_the_reference_answered_none_of_the_sharing_root() -> None:
    assert anchor_blind_drops(step([B]), body([KEPT_1], [A]), body([KEPT_1, DROPPED], [A, B])) is not None


def test_not_named_for_one_group_where_either_anchor_gives_the_same_request() -> None:
    one_group = "/allocation_candidates?resources=VCPU:4,DISK_GB:2"
    kept, alone = request(**{A: {"VCPU": 4, "DISK_GB": 2}}), request(**{B: {"VCPU": 4, "DISK_GB": 2}})
    assert anchor_blind_drops(step([B], query=one_group), body([kept], [A]), body([kept, alone], [A, B])) is None


@pytest.mark.parametrize(("case", "sharing", "theirs", "ours"), [
    ("no sharing root known", [], body([KEPT_B], [A, B]), body([KEPT_B, DROPPED], [A, B])),
    ("the extra holds no sharing root", [B], body([KEPT_B], [A, B, C]), body([KEPT_B, KEPT_C], [A, B, C])),
    ("the reference has one ours lacks", [B], body([KEPT_1, KEPT_B], [A, B]), body([KEPT_B, DROPPED], [A, B])),
    ("the same requests", [B], body([KEPT_B], [A, B]), body([KEPT_B], [A, B])),
    ("ours asks other amounts", [B], body([KEPT_B], [A, B]),
     body([KEPT_B, request(**{A: {"MEMORY_MB": 1024}, B: {"VCPU": 5, "DISK_GB": 2}})], [A, B])),
    ("a common summary differs", [B], body([KEPT_B], [A, B]),
     {"allocation_requests": [KEPT_B, DROPPED],
      "provider_summaries": {A: {"resources": {}, "traits": []}, B: SUMMARY}}),
])
def test_not_named(case: str, sharing: list[str], theirs: Any, ours: Any) -> None:
    assert anchor_blind_drops(step(sharing), theirs, ours) is None, case


@pytest.mark.parametrize(("path", "full"), [
    ("/allocation_candidates?resources=DISK_GB:2&limit=3", "/allocation_candidates?resources=DISK_GB:2"),
    # a repeated limit (a mutated query): every one goes, not only the first
    ("/allocation_candidates?resources=DISK_GB:2&limit=3&limit=3", "/allocation_candidates?resources=DISK_GB:2"),
    ("/allocation_candidates?limit=2&resources=VCPU:1&required=!CUSTOM_X", "/allocation_candidates?resources=VCPU:1"
     "&required=!CUSTOM_X"),
    ("/allocation_candidates?limit=1", "/allocation_candidates"),
    # other parameters stay byte for byte, even one whose name starts like it
    ("/allocation_candidates?resources=VCPU%3A1&limits=2&limit=1",
     "/allocation_candidates?resources=VCPU%3A1&limits=2"),
])
def test_the_full_set_is_asked_without_any_limit(path: str, full: str) -> None:
    assert without_limit(path) == full


@pytest.mark.parametrize(("ours", "category"), [(500, "status"), (503, "status"), (400, "reference-bug"),
                                                (200, "reference-bug")])
def test_an_upstream_crash_is_soft_unless_ours_crashes_too(ours, category):
    put = Step("put_inventories", "PUT", "/resource_providers/x/inventories", "1.14", {"inventories": {}})
    crashed = Answer(500, {}, {"errors": [{"detail": "'int' object is not iterable"}]})
    found = compare(put, crashed, Answer(ours, {}, {"errors": [{"detail": "x"}]}))
    assert [d.category for d in found] == [category]
