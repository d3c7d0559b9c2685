"""Usage by consumer type (1.38) on the store: the per-type counters move with every allocation write and
delete, consumer counts included, and a user whose id extends another's with `#` is told apart.
(The HTTP answers are the gabbits' consumer-types files; these drive the service directly, any version.)"""

from __future__ import annotations

from chalicelib.placement.models import ConsumerWrite
from tests.integration.placement.helpers import PROJECT, new_uuid, provider


def put(service, consumer: str, rp: str, amount: int, user: str, consumer_type: str | None,
        generation: int | None) -> None:
    service.write_allocations([ConsumerWrite(
        uuid=consumer, project_id=PROJECT, user_id=user, allocations={rp: {"VCPU": amount}} if amount else {},
        generation=generation, check_generation=True, consumer_type=consumer_type)], single=True)


def test_counters_follow_writes_type_changes_and_deletes(placement, services):
    service = services.placement
    rp = provider(placement, VCPU={"total": 100})
    a, b, c = new_uuid(), new_uuid(), new_uuid()
    put(service, a, rp, 2, "u", "INSTANCE", None)
    put(service, b, rp, 3, "u", None, None)  # below 1.38: no type
    put(service, c, rp, 5, "v", "MIGRATION", None)
    assert service.usages_by_consumer_type(PROJECT, None, None) == {
        "INSTANCE": {"VCPU": 2, "consumer_count": 1}, "unknown": {"VCPU": 3, "consumer_count": 1},
        "MIGRATION": {"VCPU": 5, "consumer_count": 1}}
    assert service.usages_by_consumer_type(PROJECT, None, "all") == {"all": {"VCPU": 10, "consumer_count": 3}}
    put(service, b, rp, 4, "u", None, 1)  # still no type sent: stays unknown
    put(service, a, rp, 2, "u", "MIGRATION", 1)  # the type changes
    assert service.usages_by_consumer_type(PROJECT, "u", None) == {
        "unknown": {"VCPU": 4, "consumer_count": 1}, "MIGRATION": {"VCPU": 2, "consumer_count": 1}}
    assert service.usages_by_consumer_type(PROJECT, None, "MIGRATION") == {
        "MIGRATION": {"VCPU": 7, "consumer_count": 2}}
    service.delete_allocations(c)
    put(service, b, rp, 0, "u", None, 2)  # emptied: the consumer goes
    assert service.usages_by_consumer_type(PROJECT, None, None) == {"MIGRATION": {"VCPU": 2, "consumer_count": 1}}
    assert service.usages_by_consumer_type(PROJECT, None, "unknown") == {}
    assert service.usage_totals(PROJECT, None) == {"VCPU": 2}


def test_a_user_whose_id_extends_another_is_told_apart(placement, services):
    service = services.placement
    rp = provider(placement, VCPU={"total": 100})
    put(service, new_uuid(), rp, 1, "u", "INSTANCE", None)
    put(service, new_uuid(), rp, 2, "u#X", "INSTANCE", None)  # its counter's sk: UT#u#X#INSTANCE
    assert service.usages_by_consumer_type(PROJECT, "u", None) == {"INSTANCE": {"VCPU": 1, "consumer_count": 1}}
    assert service.usages_by_consumer_type(PROJECT, "u#X", None) == {"INSTANCE": {"VCPU": 2, "consumer_count": 1}}
    assert service.usages_by_consumer_type(PROJECT, None, None) == {"INSTANCE": {"VCPU": 3, "consumer_count": 2}}
