"""Round trips of Placement writes, counted at botocore's send hook (not by reading code)."""

from __future__ import annotations

from tests.integration.placement.helpers import PROJECT, USER, claim, new_uuid, provider


def trips(services, fn):
    services.round_trips.reset()
    answer = fn()
    return answer, dict(services.round_trips.calls)


def test_an_allocation_write_over_k_providers_is_one_batch_get_and_one_transaction(placement, services):
    rps = [provider(placement, VCPU={"total": 8}, DISK_GB={"total": 100}) for _ in range(3)]
    wanted = {rp: {"VCPU": 1, "DISK_GB": 10} for rp in rps}
    answer, calls = trips(services, lambda: claim(placement, new_uuid(), wanted))
    assert answer.status == 204
    assert calls == {"BatchGetItem": 1, "TransactWriteItems": 1}


def test_moving_and_replacing_a_consumer_still_costs_two(placement, services):
    a, b = provider(placement, VCPU={"total": 8}), provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    assert claim(placement, consumer, {a: {"VCPU": 2}}).status == 204
    answer, calls = trips(services, lambda: claim(placement, consumer, {b: {"VCPU": 2}}, generation=1))
    assert answer.status == 204 and calls == {"BatchGetItem": 1, "TransactWriteItems": 1}
    assert placement.get(f"/placement/resource_providers/{a}/usages").body["usages"] == {"VCPU": 0}
    # the old provider's generation did not move (Placement moves only providers in the new set)
    assert placement.get(f"/placement/resource_providers/{a}").body["generation"] == 2


def test_post_allocations_for_many_consumers_is_two_round_trips(placement, services):
    rp = provider(placement, VCPU={"total": 100})
    body = {new_uuid(): {"allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": PROJECT, "user_id": USER,
                         "consumer_generation": None} for _ in range(10)}
    answer, calls = trips(services, lambda: placement.post("/placement/allocations", body, version="1.28"))
    assert answer.status == 204 and calls == {"BatchGetItem": 1, "TransactWriteItems": 1}


def test_reads_cost_at_most_two(placement, services):
    rp = provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    claim(placement, consumer, {rp: {"VCPU": 1}})
    # the consumer written by this process: it and its provider in one BatchGet (decision 0051)
    for path, budget in ((f"/placement/allocations/{consumer}", 1), (f"/placement/resource_providers/{rp}/usages", 1),
                         (f"/placement/usages?project_id={PROJECT}", 1),
                         (f"/placement/resource_providers/{rp}/allocations", 1)):
        answer, calls = trips(services, lambda p=path: placement.get(p, version="1.28"))
        assert answer.status == 200 and sum(calls.values()) <= budget, (path, calls)


def test_a_tree_is_listed_a_level_a_call_whatever_else_is_stored(placement, services):
    """in_tree: the anchor (GetItem), then each level below it by the uuids its parents name (one BatchGet);
    a flat root is one GetItem. No index Query."""
    root = provider(placement)
    for _ in range(3):
        assert placement.post("/placement/resource_providers", {"name": new_uuid(), "parent_provider_uuid": root},
                              version="1.20").status == 200
    for _ in range(5):
        provider(placement)  # other providers: not read
    answer, calls = trips(services, lambda: placement.get(f"/placement/resource_providers?in_tree={root}",
                                                          version="1.14"))
    assert len(answer.body["resource_providers"]) == 4
    assert calls == {"GetItem": 1, "BatchGetItem": 1}
    flat = provider(placement)
    answer, calls = trips(services, lambda: placement.get(f"/placement/resource_providers?in_tree={flat}",
                                                          version="1.14"))
    assert [p["uuid"] for p in answer.body["resource_providers"]] == [flat] and calls == {"GetItem": 1}


def test_a_child_is_created_in_two_calls_and_member_of_reads_only_the_members(placement, services):
    root = provider(placement)
    answer, calls = trips(services, lambda: placement.post(
        "/placement/resource_providers", {"name": new_uuid(), "parent_provider_uuid": root}, version="1.20"))
    assert answer.status == 200 and calls == {"GetItem": 1, "TransactWriteItems": 1}
    aggregate = new_uuid()
    assert placement.put(f"/placement/resource_providers/{root}/aggregates",
                         {"aggregates": [aggregate], "resource_provider_generation": 0}, version="1.19").status == 200
    answer, calls = trips(services, lambda: placement.get(f"/placement/resource_providers?member_of={aggregate}",
                                                          version="1.3"))
    assert [p["uuid"] for p in answer.body["resource_providers"]] == [root]
    assert calls == {"Query": 1, "GetItem": 1}  # its one member: a batch of one key is a GetItem


def test_traits_named_in_a_list_are_read_by_key_not_the_whole_registry(placement, services):
    """GET /traits?name=in: (Nova's check for the traits it has not seen): one BatchGet of the custom names
    that could exist, however many custom traits are stored; no Query of the registry."""
    for n in range(30):
        assert placement.put(f"/placement/traits/CUSTOM_REGISTRY_{n}", None, version="1.6").status in (201, 204)
    asked = ["CUSTOM_REGISTRY_3", "CUSTOM_REGISTRY_7", "CUSTOM_NEVER_MADE", "HW_CPU_X86_AVX",
             "custom_registry_3", "CUSTOM_" + "X" * 300, ""]
    answer, calls = trips(services, lambda: placement.get("/placement/traits?name=in:" + ",".join(asked),
                                                          version="1.6"))
    assert answer.status == 200
    assert answer.body["traits"] == ["CUSTOM_REGISTRY_3", "CUSTOM_REGISTRY_7", "HW_CPU_X86_AVX"]
    assert calls == {"BatchGetItem": 1}
    # only standard names: nothing to read
    answer, calls = trips(services, lambda: placement.get("/placement/traits?name=in:HW_CPU_X86_AVX,NOT_A_TRAIT",
                                                          version="1.6"))
    assert answer.status == 200 and answer.body["traits"] == ["HW_CPU_X86_AVX"] and calls == {}


def test_more_than_a_hundred_names_are_read_a_hundred_at_a_time(placement, services):
    made = [f"CUSTOM_MANY_{n:03d}" for n in range(0, 150, 3)]
    for name in made:
        assert placement.put(f"/placement/traits/{name}", None, version="1.6").status in (201, 204)
    asked = [f"CUSTOM_MANY_{n:03d}" for n in range(150)]
    answer, calls = trips(services, lambda: placement.get("/placement/traits?name=in:" + ",".join(asked),
                                                          version="1.15"))
    assert answer.status == 200 and answer.body["traits"] == made
    assert calls == {"BatchGetItem": 2}
    assert answer.header("last-modified")


def test_a_prefix_list_reads_the_registry_from_the_prefix_on(placement, services):
    """GET /traits?name=startswith: one Query of the custom traits from the prefix's literal start (its items
    counted at the wire), not the whole registry; the LIKE filter (`_` any one character) decides the rest."""
    tag = new_uuid()[:6].upper()
    made = [f"CUSTOM_PFX{tag}_A", f"CUSTOM_PFX{tag}_B", f"CUSTOM_PFX{tag}XC", f"CUSTOM_OTHER{tag}"]
    for name in made:
        assert placement.put(f"/placement/traits/{name}", None, version="1.6").status == 201
    returned: list[int] = []

    def count(parsed, model, **_):
        if model.name == "Query":
            returned.append(parsed.get("Count", 0))

    services.client.meta.events.register("after-call.dynamodb", count)
    try:
        answer, calls = trips(services, lambda: placement.get(f"/placement/traits?name=startswith:custom_pfx{tag}_",
                                                              version="1.6"))
    finally:
        services.client.meta.events.unregister("after-call.dynamodb", count)
    assert answer.status == 200 and answer.body["traits"] == sorted(made[:3])
    assert calls == {"Query": 1} and returned == [3]
    # a prefix longer than any name: an empty answer, as upstream, not a key condition DynamoDB refuses
    answer = placement.get("/placement/traits?name=startswith:CUSTOM_" + "A" * 2000, version="1.6")
    assert answer.status == 200 and answer.body["traits"] == []


def test_a_resources_list_reads_the_holders_of_one_class_from_its_index(placement, services):
    """`resources` without a narrower filter: one consistent Query of the resource-class index of a class it
    names (a custom one first) and a BatchGet of those providers only, not every provider."""
    name = f"CUSTOM_LISTED_{new_uuid()[:8].upper()}"
    assert placement.put(f"/placement/resource_classes/{name}", None, version="1.7").status == 201
    holders = {provider(placement, VCPU={"total": 8}, **{name: {"total": 4}}) for _ in range(2)}
    provider(placement, VCPU={"total": 8}, **{name: {"total": 1}})  # holds the class, lacks room: read, not listed
    for _ in range(4):
        provider(placement, VCPU={"total": 8})  # hold VCPU only: not read
    asked: list[dict] = []

    def record(params, **_):
        asked.append(params)

    services.client.meta.events.register("provide-client-params.dynamodb", record)
    try:
        answer, calls = trips(services, lambda: placement.get(
            f"/placement/resource_providers?resources=VCPU:1,{name}:2", version="1.4"))
    finally:
        services.client.meta.events.unregister("provide-client-params.dynamodb", record)
    assert answer.status == 200
    assert {p["uuid"] for p in answer.body["resource_providers"]} == holders
    assert calls == {"GetItem": 1, "Query": 1, "BatchGetItem": 1}  # the custom class known, its index, its holders
    query = next(p for p in asked if "KeyConditionExpression" in p)
    assert query["ConsistentRead"] is True and query["ExpressionAttributeValues"][":pk"]["S"] == f"PLRCX#{name}"
    read = [len(keys["Keys"]) for p in asked for keys in p.get("RequestItems", {}).values()]
    assert read == [len(holders) + 1]  # the three providers holding the class, no other
    # an unknown class is 400 before any index is read
    answer, calls = trips(services, lambda: placement.get(
        "/placement/resource_providers?resources=CUSTOM_NEVER_MADE_X:1", version="1.4"))
    assert answer.status == 400 and calls == {"GetItem": 1}


def test_a_provider_write_reads_the_provider_once(placement, services):
    """The handler's read for its 404 is the write's first read: PUT aggregates, PUT the provider and every
    inventory write cost one GetItem and one transaction (a retry reads again)."""
    rp = provider(placement)
    answer, calls = trips(services, lambda: placement.put(
        f"/placement/resource_providers/{rp}/aggregates",
        {"aggregates": [new_uuid()], "resource_provider_generation": 0}, version="1.19"))
    assert answer.status == 200 and calls == {"GetItem": 1, "TransactWriteItems": 1}
    answer, calls = trips(services, lambda: placement.put(f"/placement/resource_providers/{rp}",
                                                          {"name": new_uuid()}, version="1.14"))
    assert answer.status == 200 and calls == {"GetItem": 1, "TransactWriteItems": 1}
    inventories = f"/placement/resource_providers/{rp}/inventories"

    def generation() -> int:
        return int(placement.get(inventories, version="1.28").body["resource_provider_generation"])

    writes = [
        lambda g: placement.put(inventories, {"resource_provider_generation": g,
                                              "inventories": {"VCPU": {"total": 8}}}, version="1.28"),
        lambda g: placement.post(inventories, {"resource_class": "DISK_GB", "total": 100}, version="1.28"),
        lambda g: placement.put(f"{inventories}/VCPU", {"resource_provider_generation": g, "total": 16},
                                version="1.28"),
        lambda g: placement.delete(f"{inventories}/DISK_GB", version="1.28"),
        lambda g: placement.delete(inventories, version="1.28"),
    ]
    for write, status in zip(writes, (200, 201, 200, 204, 204), strict=True):
        current = generation()
        answer, calls = trips(services, lambda: write(current))  # noqa: B023 - called at once
        assert answer.status == status and calls == {"GetItem": 1, "TransactWriteItems": 1}, (answer.body, calls)
