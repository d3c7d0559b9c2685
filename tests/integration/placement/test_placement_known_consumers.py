"""A consumer read with its providers' generations in one call when the process knows what it holds
(decision 0051), and the same answer as two reads whatever another process changed meanwhile. "Another
process" is a second set of services on the same table, as two Lambda instances are; DynamoDB Local."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.runtime import Services
from tests.integration.placement.conftest import serving
from tests.integration.placement.helpers import claim, new_uuid, provider
from tests.integration.placement.test_placement_round_trips import trips

V = "1.39"


def read(placement: Any, services: Services, consumer: str) -> tuple[Any, dict[str, int]]:
    return trips(services, lambda: placement.get(f"/placement/allocations/{consumer}", version=V))


def generation(placement: Any, rp: str) -> int:
    return int(placement.get(f"/placement/resource_providers/{rp}", version=V).body["generation"])


def test_a_consumer_this_process_wrote_is_one_call_with_its_providers_generations(placement, services):
    a, b = provider(placement, VCPU={"total": 8}), provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    assert claim(placement, consumer, {b: {"VCPU": 1}, a: {"VCPU": 2}}).status == 204
    answer, calls = read(placement, services, consumer)
    assert answer.status == 200 and calls == {"BatchGetItem": 1}
    assert list(answer.body["allocations"]) == [b, a]  # the order written, as upstream
    assert {rp: held["generation"] for rp, held in answer.body["allocations"].items()} == {
        a: generation(placement, a), b: generation(placement, b)}
    assert answer.body["consumer_generation"] == 1


def test_a_consumer_first_read_here_is_two_calls_then_one(placement, services, other):
    rp = provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    with serving(other, services):
        assert claim(placement, consumer, {rp: {"VCPU": 1}}).status == 204
    first, calls = read(placement, services, consumer)
    assert first.status == 200 and calls == {"GetItem": 2}
    second, calls = read(placement, services, consumer)
    assert second.body == first.body and calls == {"BatchGetItem": 1}


def test_a_consumer_another_process_moved_shows_where_it_is_now(placement, services, other):
    a, b = provider(placement, VCPU={"total": 8}), provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    assert claim(placement, consumer, {a: {"VCPU": 1}}).status == 204
    with serving(other, services):
        assert claim(placement, consumer, {b: {"VCPU": 3}}, generation=1).status == 204
    answer, calls = read(placement, services, consumer)
    assert calls == {"BatchGetItem": 1, "GetItem": 1}  # it and a (as known), then b
    assert answer.body["allocations"] == {b: {"resources": {"VCPU": 3}, "generation": generation(placement, b)}}
    assert answer.body["consumer_generation"] == 2
    assert read(placement, services, consumer)[1] == {"BatchGetItem": 1}


def test_a_provider_another_process_wrote_on_shows_its_generation_now(placement, services, other):
    rp = provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    assert claim(placement, consumer, {rp: {"VCPU": 1}}).status == 204
    with serving(other, services):
        for _ in range(3):
            assert claim(placement, new_uuid(), {rp: {"VCPU": 1}}).status == 204
    answer, calls = read(placement, services, consumer)
    assert calls == {"BatchGetItem": 1}
    assert answer.body["allocations"][rp]["generation"] == generation(placement, rp) == 5  # inventory, 4 claims


def test_a_consumer_another_process_deleted_reads_as_none_and_is_forgotten(placement, services, other):
    rp = provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    assert claim(placement, consumer, {rp: {"VCPU": 1}}).status == 204
    with serving(other, services):
        assert placement.delete(f"/placement/allocations/{consumer}", version=V).status == 204
    answer, calls = read(placement, services, consumer)
    assert answer.status == 200 and answer.body == {"allocations": {}} and calls == {"BatchGetItem": 1}
    assert read(placement, services, consumer)[1] == {"GetItem": 1}


def test_a_provider_gone_is_left_out_as_by_two_reads(placement, services, other):
    a, b = provider(placement, VCPU={"total": 8}), provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    assert claim(placement, consumer, {a: {"VCPU": 1}}).status == 204
    with serving(other, services):
        assert claim(placement, consumer, {b: {"VCPU": 1}}, generation=1).status == 204
        assert placement.delete(f"/placement/resource_providers/{a}", version=V).status == 204
    answer, _ = read(placement, services, consumer)
    assert set(answer.body["allocations"]) == {b}


def test_none_kept_at_zero_every_read_is_two_calls(placement, services, store_server, monkeypatch):
    from chalicelib.runtime import build_services
    from tests.conftest import make_settings

    monkeypatch.setenv("RP_PLACEMENT_KNOWN_CONSUMERS", "0")
    process = build_services(make_settings(store_server.endpoint, services.table, **store_server.settings))
    rp = provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    with serving(process, services):
        assert claim(placement, consumer, {rp: {"VCPU": 1}}).status == 204
        for _ in range(2):
            answer, calls = read(placement, process, consumer)
            assert answer.status == 200 and calls == {"GetItem": 2}


@pytest.mark.parametrize("writes", [1, 2])
def test_a_consumer_emptied_by_a_post_here_reads_as_none(placement, services, writes):
    rp = provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    assert claim(placement, consumer, {rp: {"VCPU": 1}}).status == 204
    body = {consumer: {"allocations": {}, "project_id": "p", "user_id": "u", "consumer_generation": 1}}
    if writes == 2:
        body[new_uuid()] = {"allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": "p", "user_id": "u",
                            "consumer_generation": None}
    assert placement.post("/placement/allocations", body, version="1.28").status == 204
    answer, calls = read(placement, services, consumer)
    assert answer.body == {"allocations": {}} and calls == {"GetItem": 1}
