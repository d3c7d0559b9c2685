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


def _as_written_before_0049(services, user: str, consumer_type: str) -> None:
    """Move a type's counters off the owners' items into the per-type items the version before decision 0049
    wrote (`T#<type>`, `UT#<user>#<type>`), as a table written by that version holds them."""
    client, table = services.client, services.table
    for owner, legacy in (("-", f"T#{consumer_type}"), (f"USER#{user}", f"UT#{user}#{consumer_type}")):
        key = {"pk": {"S": f"PLUSAGE#{PROJECT}"}, "sk": {"S": owner}}
        item = client.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
        moved = {name: value for name, value in item.items() if name.startswith(f"T#{consumer_type}#")}
        assert moved, "the counters are on the owner's item"
        client.update_item(TableName=table, Key=key, UpdateExpression="REMOVE " + ", ".join(
            f"#a{i}" for i in range(len(moved))), ExpressionAttributeNames={f"#a{i}": n for i, n in enumerate(moved)})
        client.put_item(TableName=table, Item={"pk": key["pk"], "sk": {"S": legacy},
                                               **{name.rsplit("#", 1)[1]: value for name, value in moved.items()}})


def test_counters_written_before_they_moved_onto_the_owners_items_are_summed(placement, services):
    """Decision 0049: per-type items of an earlier version are read with the owners' items, never written; a
    consumer counted in them and released now leaves nothing (a negative on the owner's item cancels them)."""
    service = services.placement
    rp = provider(placement, VCPU={"total": 100})
    old, new = new_uuid(), new_uuid()
    put(service, old, rp, 2, "u", "INSTANCE", None)
    _as_written_before_0049(services, "u", "INSTANCE")
    assert service.usages_by_consumer_type(PROJECT, None, None) == {"INSTANCE": {"VCPU": 2, "consumer_count": 1}}
    put(service, new, rp, 3, "u", "INSTANCE", None)
    expected = {"INSTANCE": {"VCPU": 5, "consumer_count": 2}}
    assert service.usages_by_consumer_type(PROJECT, None, None) == expected
    assert service.usages_by_consumer_type(PROJECT, "u", None) == expected
    assert service.usages_by_consumer_type(PROJECT, None, "INSTANCE") == expected
    assert service.usages_by_consumer_type(PROJECT, "u", "INSTANCE") == expected
    assert service.usages_by_consumer_type(PROJECT, "u", "all") == {"all": {"VCPU": 5, "consumer_count": 2}}
    service.delete_allocations(old)
    service.delete_allocations(new)
    assert service.usages_by_consumer_type(PROJECT, None, None) == {}
    assert service.usages_by_consumer_type(PROJECT, "u", "INSTANCE") == {}
    legacy = services.client.get_item(TableName=services.table, ConsistentRead=True, Key={
        "pk": {"S": f"PLUSAGE#{PROJECT}"}, "sk": {"S": "T#INSTANCE"}})["Item"]
    assert legacy["rc_VCPU"] == {"N": "2"}, "a legacy item is never written"


def test_a_write_moves_one_usage_item_per_owner(placement, services):
    """Every type's counters and the consumer type's on one item per owner: project and user, 2 items."""
    rp = provider(placement, VCPU={"total": 100})
    put(services.placement, new_uuid(), rp, 2, "u", "INSTANCE", None)
    found = services.client.query(TableName=services.table, ConsistentRead=True, KeyConditionExpression="pk = :pk",
                                  ExpressionAttributeValues={":pk": {"S": f"PLUSAGE#{PROJECT}"}})["Items"]
    assert sorted(item["sk"]["S"] for item in found) == ["-", "USER#u"]
    assert found[0]["T#INSTANCE#rc_VCPU"] == {"N": "2"} and found[0]["rc_VCPU"] == {"N": "2"}
