"""GET /placement/allocation_candidates end to end (flat providers; trees, traits and sharing come through
the gabbits once their endpoints exist): the answer's shapes by microversion and its reads."""

from __future__ import annotations

import pytest

from tests.integration.placement.helpers import claim, new_uuid, provider

COMPUTE = {"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096, "reserved": 512}, "DISK_GB": {"total": 100}}


def candidates(placement, query: str, version: str = "1.28"):
    return placement.get(f"/placement/allocation_candidates?{query}", version=version)


def test_a_flat_provider_is_a_candidate_with_its_summary_in_each_shape(placement):
    rp = provider(placement, **COMPUTE)
    answer = candidates(placement, "resources=VCPU:2,MEMORY_MB:1024")
    assert answer.status == 200, answer.body
    mine = [r for r in answer.body["allocation_requests"] if rp in r["allocations"]]
    assert mine == [{"allocations": {rp: {"resources": {"VCPU": 2, "MEMORY_MB": 1024}}}}]
    assert answer.body["provider_summaries"][rp] == {"resources": {
        "VCPU": {"capacity": 8, "used": 0}, "MEMORY_MB": {"capacity": 3584, "used": 0},
        "DISK_GB": {"capacity": 100, "used": 0}}, "traits": []}
    assert answer.header("cache-control") == "no-cache" and answer.header("last-modified")
    old = candidates(placement, "resources=VCPU:2", version="1.10")
    assert {"resource_provider": {"uuid": rp}, "resources": {"VCPU": 2}} in [
        a for r in old.body["allocation_requests"] for a in r["allocations"]]
    assert old.body["provider_summaries"][rp] == {"resources": {"VCPU": {"capacity": 8, "used": 0}}}
    assert candidates(placement, "resources=VCPU:1", version="1.9").status == 404


def test_usage_and_capacity_decide_and_limit_cuts(placement):
    cls = f"CUSTOM_C{new_uuid().replace('-', '')[:12].upper()}"
    assert placement.put(f"/placement/resource_classes/{cls}", None, version="1.7").status == 201
    a, b = provider(placement, **{cls: {"total": 4}}), provider(placement, **{cls: {"total": 4}})
    assert claim(placement, new_uuid(), {a: {cls: 3}}).status == 204
    found = candidates(placement, f"resources={cls}:2").body
    assert [list(r["allocations"]) for r in found["allocation_requests"]] == [[b]]
    assert set(found["provider_summaries"]) == {b}
    both = candidates(placement, f"resources={cls}:1", version="1.16").body
    assert len(both["allocation_requests"]) == 2
    one = candidates(placement, f"resources={cls}:1&limit=1", version="1.16").body
    assert len(one["allocation_requests"]) == 1 and len(one["provider_summaries"]) == 1


@pytest.mark.parametrize(("query", "detail"), [
    ("resources=VCPU:0", "Requested resource VCPU requires amount >= 1. Got: 0."),
    ("resources=VCPU", "Badly formed resources parameter"),
    ("resources=CUSTOM_NOPE_NOPE:1", "No such resource class CUSTOM_NOPE_NOPE."),
    ("resources=VCPU:1&limit=0", "Invalid query string parameters"),
    ("resources1=VCPU:1&resources2=VCPU:1", 'The "group_policy" parameter is required'),
])
def test_bad_queries_are_400_in_upstreams_words(placement, query, detail):
    answer = candidates(placement, query, version="1.28")
    assert answer.status == 400
    assert detail in answer.body["errors"][0]["detail"]


def test_the_read_is_no_scan_and_stops_at_the_page_that_holds_limit_candidates(placement, services, monkeypatch):
    """No sharing provider: the class index is read a page (here 100 holders) at a time, and reading stops there."""
    from chalicelib.placement import candidate_search

    monkeypatch.setattr(candidate_search, "PAGE", 100)
    cls = f"CUSTOM_L{new_uuid().replace('-', '')[:12].upper()}"
    assert placement.put(f"/placement/resource_classes/{cls}", None, version="1.7").status == 201
    for _ in range(130):
        provider(placement, **{cls: {"total": 1}})
    services.round_trips.reset()
    assert len(candidates(placement, f"resources={cls}:1&limit=2", version="1.16")
               .body["allocation_requests"]) == 2
    calls = dict(services.round_trips.calls)
    assert "Scan" not in calls
    # the custom class's check (one key: a GetItem), then one page's providers; the index page and PLSHARE:
    # one Query each
    assert calls == {"GetItem": 1, "BatchGetItem": 1, "Query": 2}, calls
    services.round_trips.reset()
    assert len(candidates(placement, f"resources={cls}:1", version="1.16").body["allocation_requests"]) == 130
    assert dict(services.round_trips.calls).get("BatchGetItem", 0) == 2  # both pages read, nothing more


def test_in_tree_answers_from_that_tree_alone(placement):
    rp, other = provider(placement, **COMPUTE), provider(placement, **COMPUTE)
    answer = candidates(placement, f"resources=VCPU:1&in_tree={rp}", version="1.31")
    assert answer.status == 200, answer.body
    assert [list(r["allocations"]) for r in answer.body["allocation_requests"]] == [[rp]]
    assert other not in answer.body["provider_summaries"]
    assert candidates(placement, f"resources=VCPU:1&in_tree={new_uuid()}", version="1.31").body == {
        "allocation_requests": [], "provider_summaries": {}}
