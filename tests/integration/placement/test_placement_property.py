"""Random sequences of claims, moves and releases on DynamoDB Local keep every derived count exact:
provider usage = the sum of its consumers' allocations, within capacity; /usages per project and
per (project, user) = the sum of their consumers' allocations."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.placement.helpers import claim, new_uuid, provider

PROJECTS = [("p-a", "u-1"), ("p-a", "u-2"), ("p-b", "u-1")]

operation = st.one_of(
    st.tuples(st.just("claim"), st.integers(0, 3), st.integers(0, 2), st.integers(0, 2), st.integers(1, 4)),
    st.tuples(st.just("release"), st.integers(0, 3)),
    st.tuples(st.just("empty"), st.integers(0, 3)),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(operation, min_size=1, max_size=8))
def test_usage_counters_stay_exact(placement, ops):
    tag = new_uuid()[:8]
    rps = [provider(placement, VCPU={"total": 6}) for _ in range(2)]
    consumers = [new_uuid() for _ in range(4)]
    owners = {c: PROJECTS[i % len(PROJECTS)] for i, c in enumerate(consumers)}
    owners = {c: (f"{p}-{tag}", f"{u}-{tag}") for c, (p, u) in owners.items()}
    left_at_0: set[str] = set()  # emptied by a first write: kept at generation 0, shown without allocations
    for op in ops:
        consumer = consumers[op[1]]
        shown = placement.get(f"/placement/allocations/{consumer}", version="1.28").body
        generation = shown.get("consumer_generation", 0 if consumer in left_at_0 else None)
        if op[0] == "claim":
            _, _, rp_index, owner_index, amount = op
            project, user = (f"{PROJECTS[owner_index][0]}-{tag}", f"{PROJECTS[owner_index][1]}-{tag}")
            answer = claim(placement, consumer, {rps[rp_index % 2]: {"VCPU": amount}}, generation, project, user)
            assert answer.status in (204, 409), answer.body
            if answer.status == 204:
                owners[consumer] = (project, user)
                left_at_0.discard(consumer)
        elif op[0] == "release":
            answer = placement.delete(f"/placement/allocations/{consumer}")
            assert answer.status in (204, 404)
        else:
            body = {"allocations": {}, "project_id": owners[consumer][0], "user_id": owners[consumer][1],
                    "consumer_generation": generation}
            assert placement.put(f"/placement/allocations/{consumer}", body, version="1.28").status == 204
            if not shown["allocations"]:
                left_at_0.add(consumer)

    per_rp: dict[str, int] = defaultdict(int)
    per_project: dict[str, int] = defaultdict(int)
    per_user: dict[tuple[str, str], int] = defaultdict(int)
    for consumer in consumers:
        shown = placement.get(f"/placement/allocations/{consumer}", version="1.28").body
        for rp, entry in shown["allocations"].items():
            amount = entry["resources"]["VCPU"]
            per_rp[rp] += amount
            per_project[shown["project_id"]] += amount
            per_user[(shown["project_id"], shown["user_id"])] += amount
    for rp in rps:
        usage = placement.get(f"/placement/resource_providers/{rp}/usages").body["usages"]["VCPU"]
        assert usage == per_rp[rp] <= 6
    for project, user in {owners[c] for c in consumers} | set(per_user):
        totals = placement.get(f"/placement/usages?project_id={project}", version="1.9").body["usages"]
        assert totals.get("VCPU", 0) == per_project[project]
        mine = placement.get(f"/placement/usages?project_id={project}&user_id={user}", version="1.9").body["usages"]
        assert mine.get("VCPU", 0) == per_user[(project, user)]
