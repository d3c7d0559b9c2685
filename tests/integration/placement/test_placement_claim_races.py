"""Claims racing the writes that change what a scheduler matched on (issue 15): aggregates, a parent and
a candidate answer gone stale. Real threads against DynamoDB Local; a claim never over-commits, and a
tree or aggregate write never loses a claim or is lost itself."""

from __future__ import annotations

from typing import Any

from tests.integration.placement.helpers import claim, new_uuid, provider
from tests.integration.placement.test_placement_concurrency import run_threads

V = "1.39"


def _usage(placement: Any, rp: str, rc: str) -> int:
    return int(placement.get(f"/placement/resource_providers/{rp}/usages", version=V).body["usages"][rc])


def _put_aggregates(placement: Any, rp: str, aggregates: list[str]) -> int:
    """Read-then-write with the provider generation, retried on 409 as a client does."""
    for _ in range(50):
        current = placement.get(f"/placement/resource_providers/{rp}/aggregates", version=V).body
        answer = placement.put(f"/placement/resource_providers/{rp}/aggregates",
                               {"aggregates": aggregates,
                                "resource_provider_generation": current["resource_provider_generation"]},
                               version=V)
        if answer.status != 409:
            return int(answer.status)
    return 409


def test_claims_racing_aggregate_writes_never_over_commit_and_lose_nothing(placement):
    rp = provider(placement, VCPU={"total": 4})
    aggregates = [[new_uuid()] for _ in range(5)]

    def work(i: int) -> int:
        if i % 2:
            return int(claim(placement, new_uuid(), {rp: {"VCPU": 1}}).status)
        return _put_aggregates(placement, rp, aggregates[i // 2])

    statuses = run_threads(10, work)
    claimed = [s for i, s in enumerate(statuses) if i % 2]
    assert all(s == 200 for i, s in enumerate(statuses) if not i % 2), statuses
    assert claimed.count(204) == 4 and claimed.count(409) == 1, claimed  # 5 claims, room for 4
    assert _usage(placement, rp, "VCPU") == 4
    final = placement.get(f"/placement/resource_providers/{rp}/aggregates", version=V).body["aggregates"]
    assert final in aggregates  # one writer's whole set, never a mix


def test_claims_racing_a_reparent_keep_their_usage_and_the_tree_stays_whole(placement):
    parents = [provider(placement), provider(placement)]
    child = provider(placement, VCPU={"total": 3})

    def move(parent: str) -> int:
        for _ in range(50):
            current = placement.get(f"/placement/resource_providers/{child}", version=V).body
            answer = placement.put(f"/placement/resource_providers/{child}",
                                   {"name": current["name"], "parent_provider_uuid": parent}, version=V)
            if answer.status != 409:
                return int(answer.status)
        return 409

    def work(i: int) -> int:
        if i % 2:
            return int(claim(placement, new_uuid(), {child: {"VCPU": 1}}).status)
        return move(parents[(i // 2) % 2])

    statuses = run_threads(8, work)
    claimed = [s for i, s in enumerate(statuses) if i % 2]
    assert all(s == 200 for i, s in enumerate(statuses) if not i % 2), statuses
    assert claimed.count(204) == 3 and claimed.count(409) == 1, claimed
    assert _usage(placement, child, "VCPU") == 3
    shown = placement.get(f"/placement/resource_providers/{child}", version=V).body
    assert shown["parent_provider_uuid"] in parents and shown["root_provider_uuid"] == shown["parent_provider_uuid"]
    tree = placement.get(f"/placement/resource_providers?in_tree={shown['root_provider_uuid']}", version=V).body
    assert {p["uuid"] for p in tree["resource_providers"]} == {shown["parent_provider_uuid"], child}


def test_a_stale_candidate_answer_never_over_commits(placement):
    """Every claimant reads candidates first (all see room), then all claim at once: the claims' conditions,
    not the candidate answer, decide; exactly the capacity is claimed."""
    rp = provider(placement, VCPU={"total": 3}, MEMORY_MB={"total": 3072})
    answers = [placement.get("/placement/allocation_candidates?resources=VCPU:1,MEMORY_MB:1024", version=V)
               for _ in range(6)]
    assert all(a.status == 200 and len(a.body["allocation_requests"]) == 1 for a in answers)

    def work(i: int) -> int:
        request = answers[i].body["allocation_requests"][0]["allocations"]
        allocations = {u: dict(a["resources"]) for u, a in request.items()}
        return int(claim(placement, new_uuid(), allocations).status)

    statuses = run_threads(6, work)
    assert statuses.count(204) == 3 and statuses.count(409) == 3, statuses
    assert _usage(placement, rp, "VCPU") == 3 and _usage(placement, rp, "MEMORY_MB") == 3072
    after = placement.get("/placement/allocation_candidates?resources=VCPU:1,MEMORY_MB:1024", version=V)
    assert after.status == 200 and after.body["allocation_requests"] == []
