"""Traits on DynamoDB Local: custom traits counted by their holders (a trait in use is never deleted, even
when the delete races the writes that add it), provider generations, the sharing-provider index."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from chalicelib.placement import items
from tests.integration.placement.helpers import claim, new_uuid, provider
from tests.integration.placement.test_placement_concurrency import run_threads

V = "1.39"
NO_AGGREGATE = "22222222-2222-4222-8222-222222222222"
NO_PROVIDER = "33333333-3333-4333-8333-333333333333"


def _set(placement: Any, rp: str, traits: list[str], generation: int) -> Any:
    return placement.put(f"/placement/resource_providers/{rp}/traits",
                         {"traits": traits, "resource_provider_generation": generation}, version="1.28")


def _refs(services: Any, name: str) -> int | None:
    item = services.placement.store.custom_trait(name)
    return None if item is None else int(item["refs"])


def _holders(placement: Any, rps: list[str], name: str) -> int:
    return sum(name in placement.get(f"/placement/resource_providers/{rp}/traits", version="1.28").body["traits"]
               for rp in rps)


@pytest.mark.parametrize("deleters", [1, 3, 6])
def test_a_delete_racing_the_writes_that_add_a_trait_never_leaves_a_provider_holding_a_deleted_trait(
        placement, services, deleters):
    name = f"CUSTOM_RACE_{deleters}_{new_uuid()[:8].upper()}"
    assert placement.put(f"/placement/traits/{name}", version="1.28").status == 201
    rps = [provider(placement) for _ in range(6)]

    def work(i: int) -> int:
        if i < deleters:
            return placement.delete(f"/placement/traits/{name}", version="1.28").status
        return _set(placement, rps[i % 6], [name, "HW_CPU_X86_SHA"], 0).status

    statuses = run_threads(deleters + 6, work)
    assert set(statuses) <= {200, 204, 400, 404, 409}, statuses
    holders = _holders(placement, rps, name)
    if placement.get(f"/placement/traits/{name}", version="1.28").status == 204:
        assert _refs(services, name) == holders
    else:
        assert holders == 0 and _refs(services, name) is None
    assert (statuses.count(200) > 0) == (holders > 0)
    assert not (200 in statuses and 204 in statuses)  # a trait deleted was held by no one, then or since


def test_an_in_use_trait_is_409_and_deletable_once_released(placement, services):
    name = f"CUSTOM_INUSE_{new_uuid()[:8].upper()}"
    placement.put(f"/placement/traits/{name}", version="1.28")
    a, b = provider(placement), provider(placement)
    assert _set(placement, a, [name], 0).status == 200
    assert _set(placement, b, [name], 0).status == 200
    assert _refs(services, name) == 2
    refused = placement.delete(f"/placement/traits/{name}", version="1.28")
    assert refused.status == 409
    assert refused.body["errors"][0]["detail"].strip().endswith(f"The trait {name} is in use by a resource provider.")
    assert placement.delete(f"/placement/resource_providers/{a}/traits", version="1.28").status == 204
    assert placement.delete(f"/placement/resource_providers/{b}", version="1.28").status == 204  # releases it too
    assert _refs(services, name) == 0
    assert placement.delete(f"/placement/traits/{name}", version="1.28").status == 204


def test_a_stale_generation_is_409_concurrent_update_and_racing_writers_one_wins(placement):
    rp = provider(placement)
    answers = run_threads(6, lambda i: _set(placement, rp, ["HW_CPU_X86_SHA", f"STORAGE_DISK_{'SSD' if i else 'HDD'}"],
                                            0))
    statuses = Counter(a.status for a in answers)
    assert statuses == {200: 1, 409: 5}, statuses
    for answer in answers:
        if answer.status == 409:
            assert answer.body["errors"][0]["code"] == "placement.concurrent_update"
    shown = placement.get(f"/placement/resource_providers/{rp}/traits", version="1.28").body
    assert shown["resource_provider_generation"] == 1


def test_the_same_traits_again_write_nothing_and_keep_the_generation(placement):
    rp = provider(placement)
    assert _set(placement, rp, ["HW_CPU_X86_SHA"], 0).body["resource_provider_generation"] == 1
    assert _set(placement, rp, ["HW_CPU_X86_SHA"], 1).body["resource_provider_generation"] == 1
    assert placement.delete(f"/placement/resource_providers/{rp}/traits", version="1.28").status == 204
    assert placement.delete(f"/placement/resource_providers/{rp}/traits", version="1.28").status == 204
    assert placement.get(f"/placement/resource_providers/{rp}", version="1.28").body["generation"] == 2


def test_traits_writes_and_claims_on_one_provider_do_not_fail_each_other(placement):
    """A claim is conditioned on the inventory version, which a traits write leaves alone; a traits write
    retries after a claim moved the provider (DELETE carries no generation)."""
    rp = provider(placement, VCPU={"total": 100})

    def work(i: int) -> int:
        if i % 2:
            return claim(placement, new_uuid(), {rp: {"VCPU": 1}}).status
        return placement.delete(f"/placement/resource_providers/{rp}/traits", version="1.28").status

    statuses = run_threads(10, work)
    assert statuses.count(204) == 10, statuses


def test_unknown_traits_are_named(placement, services):
    rp = provider(placement)
    answer = _set(placement, rp, ["CUSTOM_NOT_THERE_1", "HW_CPU_X86_SHA", "NOT_A_TRAIT"], 0)
    assert answer.status == 400
    assert answer.body["errors"][0]["detail"].strip().endswith("No such trait CUSTOM_NOT_THERE_1, NOT_A_TRAIT")
    # Custom names only: the transaction's conditions find them missing, and every one is named.
    placement.put("/placement/traits/CUSTOM_THERE", version="1.28")
    answer = _set(placement, rp, ["CUSTOM_GONE_B", "CUSTOM_THERE", "CUSTOM_GONE_A"], 0)
    assert answer.status == 400
    assert answer.body["errors"][0]["detail"].strip().endswith("No such trait CUSTOM_GONE_B, CUSTOM_GONE_A")
    assert _refs(services, "CUSTOM_THERE") == 0  # nothing of the refused write was applied


def test_a_provider_with_too_many_custom_traits_is_refused_before_any_write(placement):
    rp = provider(placement)
    names = [f"CUSTOM_MANY_{i}" for i in range(items.MAX_CUSTOM_TRAITS + 1)]
    answer = _set(placement, rp, names, 0)
    assert answer.status == 400 and "at most 64 custom traits" in answer.body["errors"][0]["detail"]


def test_sharing_providers_are_listed_from_their_index(placement, services):
    store = services.placement.store
    shared, plain = provider(placement), provider(placement)
    assert _set(placement, shared, ["MISC_SHARES_VIA_AGGREGATE"], 0).status == 200
    assert _set(placement, plain, ["HW_CPU_X86_SHA"], 0).status == 200
    assert shared in store.sharing_providers() and plain not in store.sharing_providers()
    assert _set(placement, shared, ["HW_CPU_X86_SHA"], 1).status == 200
    assert shared not in store.sharing_providers()
    assert _set(placement, shared, ["MISC_SHARES_VIA_AGGREGATE"], 2).status == 200
    assert placement.delete(f"/placement/resource_providers/{shared}", version="1.28").status == 204
    assert shared not in store.sharing_providers()


def test_the_required_filter(placement):
    a, b, c = provider(placement), provider(placement), provider(placement)
    _set(placement, a, ["HW_CPU_X86_SHA", "STORAGE_DISK_SSD"], 0)
    _set(placement, b, ["STORAGE_DISK_SSD"], 0)

    def listed(query: str, version: str = "1.28") -> set[str] | int:
        answer = placement.get(f"/placement/resource_providers?{query}", version=version)
        if answer.status != 200:
            return answer.status
        return {p["uuid"] for p in answer.body["resource_providers"]} & {a, b, c}

    assert listed("required=STORAGE_DISK_SSD") == {a, b}
    assert listed("required=STORAGE_DISK_SSD,!HW_CPU_X86_SHA") == {b}
    assert listed("required=!STORAGE_DISK_SSD") == {c}
    assert listed("required=!STORAGE_DISK_SSD", "1.21") == 400
    assert listed("required=HW_CPU_X86_SHA&required=STORAGE_DISK_SSD") == {a, b}  # the last one, before 1.39
    assert listed(f"required=STORAGE_DISK_SSD&uuid={b}") == {b}
    assert listed("required=BOGUS_TRAIT") == 400
    assert listed(f"required=BOGUS_TRAIT&in_tree={new_uuid()}") == set()  # an unknown tree first, as upstream
    assert listed("required=HW_CPU_X86_SHA", "1.17") == 400


def test_a_required_custom_trait_nobody_holds_lists_nothing_after_the_same_checks(placement):
    """Answered from the trait's holder count without reading providers; the answer and its refusals are
    those of reading them (unknown required traits 400; then nothing, before forbidden traits and classes are
    looked up)."""
    held, unheld = (f"CUSTOM_{tag}_{new_uuid()[:8].upper()}" for tag in ("HELD", "UNHELD"))
    for name in (held, unheld):
        assert placement.put(f"/placement/traits/{name}", version="1.28").status == 201
    a, b = provider(placement), provider(placement)
    _set(placement, a, [held], 0)

    def listed(query: str, version: str = "1.39") -> set[str] | int:
        answer = placement.get(f"/placement/resource_providers?{query}", version=version)
        return answer.status if answer.status != 200 else \
            {p["uuid"] for p in answer.body["resource_providers"]} & {a, b}

    assert listed(f"required={held}") == {a}
    assert listed(f"required={unheld}") == set()
    assert listed(f"required={held}&required={unheld}") == set()
    assert listed(f"required=in:{held},{unheld}") == {a}
    assert listed(f"required={unheld}&uuid={a}") == set()
    assert listed(f"required={unheld}&resources=VCPU:1") == set()
    assert listed(f"required={unheld}&resources=CUSTOM_NO_SUCH_CLASS:1") == set()  # as upstream: no class lookup
    assert listed(f"required={held}&resources=CUSTOM_NO_SUCH_CLASS:1") == 400
    assert listed(f"required={unheld},CUSTOM_NO_SUCH_TRAIT") == 400
    assert listed(f"required={unheld},!CUSTOM_NO_SUCH_TRAIT") == set()  # nobody has the required: no lookup
    assert listed(f"required={held},!CUSTOM_NO_SUCH_TRAIT") == 400
    _set(placement, b, [unheld], 0)
    assert listed(f"required={unheld}") == {b}


@pytest.mark.parametrize(("query", "status"), [
    # upstream's order (_get_all_by_filters_from_db), each case checked against Placement 16.0.0: an unknown
    # in_tree lists nothing; an unknown required trait is 400; no provider at all with the required traits
    # lists nothing; an unknown forbidden trait is 400; an aggregate without members lists nothing; an
    # unknown class is 400
    ("required=CUSTOM_UNHELD&resources=CUSTOM_NO_SUCH_CLASS:1", 200),
    ("required=CUSTOM_HELD&resources=CUSTOM_NO_SUCH_CLASS:1", 400),
    ("required=HW_CPU_X86_SSE&resources=CUSTOM_NO_SUCH_CLASS:1", 200),  # a standard trait nobody holds
    ("required=CUSTOM_UNHELD,!CUSTOM_NOPE", 200),
    ("required=CUSTOM_HELD,!CUSTOM_NOPE", 400),
    (f"required=CUSTOM_UNHELD&member_of=in:{NO_AGGREGATE}&resources=CUSTOM_NO:1", 200),
    (f"required=CUSTOM_HELD&member_of=in:{NO_AGGREGATE}&resources=CUSTOM_NO:1", 200),
    (f"required=CUSTOM_HELD&uuid={NO_PROVIDER}&resources=CUSTOM_NO:1", 400),
    (f"in_tree={NO_PROVIDER}&required=CUSTOM_NOPE", 200),
    (f"required=CUSTOM_HELD,!CUSTOM_NOPE&member_of=in:{NO_AGGREGATE}", 400),
    ("required=CUSTOM_NOPE&resources=CUSTOM_NO:1", 400),
])
def test_a_list_refuses_and_answers_nothing_in_upstreams_order(placement, query, status):
    for name in ("CUSTOM_HELD", "CUSTOM_UNHELD"):
        assert placement.put(f"/placement/traits/{name}", version="1.28").status in (201, 204)
    rp = provider(placement)
    assert _set(placement, rp, ["CUSTOM_HELD"], 0).status == 200
    answer = placement.get(f"/placement/resource_providers?{query}", version="1.39")
    assert answer.status == status, answer.body
    if status == 200:
        assert answer.body["resource_providers"] == []


@pytest.mark.parametrize(("query", "status"), [
    # no provider at all in every member_of lists nothing before an unknown class, whatever else narrows the
    # list (a global step upstream, its provider_ids_matching_aggregates); each case checked against
    # Placement 16.0.0. {a} is in {g1}, {b} in {g2}; {none} has no member.
    ("name={a_name}&member_of=in:{none}&resources=CUSTOM_NO:1", 200),
    ("in_tree={a}&member_of=in:{none}&resources=CUSTOM_NO:1", 200),
    ("uuid={a}&member_of={none}&resources=CUSTOM_NO:1", 200),
    ("member_of={g1}&member_of={g2}&resources=CUSTOM_NO:1", 200),  # each has members, none in both
    ("uuid={a}&member_of={g1}&member_of={g2}&resources=CUSTOM_NO:1", 200),
    ("uuid={b}&member_of={g1}&resources=CUSTOM_NO:1", 400),  # someone is in {g1}: the class is looked up
    ("member_of=in:{g1},{none}&resources=CUSTOM_NO:1", 400),
    ("member_of=!{g1}&resources=CUSTOM_NO:1", 400),  # a forbidden aggregate empties nothing
    ("member_of={g1}&member_of={g2}&required=CUSTOM_NOPE", 400),  # traits come before aggregates
    ("member_of={none}&required=!CUSTOM_NOPE", 400),
    ("member_of={g1}&member_of={g2}", 200),
])
def test_nobody_in_every_member_of_lists_nothing_before_an_unknown_class(placement, query, status):
    a_name = new_uuid()
    a, b = provider(placement, a_name), provider(placement)
    g1, g2, none = new_uuid(), new_uuid(), new_uuid()
    for rp, aggregate in ((a, g1), (b, g2)):
        body = {"resource_provider_generation": 0, "aggregates": [aggregate]}
        assert placement.put(f"/placement/resource_providers/{rp}/aggregates", body, version="1.39").status == 200
    answer = placement.get("/placement/resource_providers?" + query.format(a=a, b=b, a_name=a_name, g1=g1, g2=g2,
                                                                            none=none), version="1.39")
    assert answer.status == status, answer.body
    if status == 200:
        assert answer.body["resource_providers"] == []


def test_round_trips_of_the_traits_endpoints(placement, services):
    """Counted at botocore's send hook: what docs/placement.md's traits table says each endpoint reads."""
    from tests.integration.placement.test_placement_round_trips import trips

    name = f"CUSTOM_TRIPS_{new_uuid()[:8].upper()}"
    rp = provider(placement)
    cases = [
        (lambda: placement.put(f"/placement/traits/{name}", version="1.28"), 201, {"PutItem": 1}),
        (lambda: placement.put(f"/placement/traits/{name}", version="1.28"), 204, {"PutItem": 1, "GetItem": 1}),
        (lambda: placement.get(f"/placement/traits/{name}", version="1.28"), 204, {"GetItem": 1}),
        (lambda: placement.get("/placement/traits/HW_CPU_X86_SHA", version="1.28"), 204, {}),
        (lambda: placement.get("/placement/traits?name=startswith:CUSTOM_", version="1.28"), 200, {"Query": 1}),
        (lambda: _set(placement, rp, [name, "HW_CPU_X86_SHA"], 0), 200, {"GetItem": 1, "TransactWriteItems": 1}),
        (lambda: _set(placement, rp, [name, "HW_CPU_X86_SHA"], 1), 200, {"GetItem": 1}),  # unchanged: no write
        (lambda: placement.get(f"/placement/resource_providers/{rp}/traits", version="1.28"), 200, {"GetItem": 1}),
        (lambda: placement.get(f"/placement/resource_providers?required={name}&uuid={rp}", version="1.28"), 200,
         {"GetItem": 2}),  # the trait (a batch of one key is a GetItem), the provider
        (lambda: placement.delete(f"/placement/resource_providers/{rp}/traits", version="1.28"), 204,
         {"GetItem": 1, "TransactWriteItems": 1}),
        # Now held by no provider: its holder count answers, no provider is read.
        (lambda: placement.get(f"/placement/resource_providers?required={name}", version="1.28"), 200,
         {"GetItem": 1}),
        (lambda: placement.get(f"/placement/resource_providers?required=in:{name},HW_CPU_X86_SHA", version="1.39"),
         200, {"GetItem": 2, "Query": 1}),  # a standard trait's holders are not counted: every provider read
        # (the registry Query, then this table's one provider)
        (lambda: placement.delete(f"/placement/traits/{name}", version="1.28"), 204, {"DeleteItem": 1}),
    ]
    for call, status, expected in cases:
        answer, calls = trips(services, call)
        assert answer.status == status and calls == expected, (answer.status, calls, expected)

