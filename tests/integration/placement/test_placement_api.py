"""The Placement API end to end on DynamoDB Local: auth, negotiation, headers, limits."""

from __future__ import annotations

import json
import re

import pytest

from chalicelib.auth.keys import generate_key, hash_key
from tests.integration.placement.helpers import PROJECT, USER, claim, new_uuid, provider

REQ_ID = r"req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.mark.parametrize("path", ["/placement", "/placement/"])
def test_version_document_needs_no_token(placement, path):
    answer = placement.get(path, token=None)
    assert answer.status == 200
    assert answer.body == {"versions": [{"id": "v1.0", "max_version": "1.39", "min_version": "1.0",
                                         "status": "CURRENT", "links": [{"rel": "self", "href": ""}]}]}
    assert answer.header("openstack-api-version") == "placement 1.0"
    assert answer.header("vary") == "openstack-api-version"


@pytest.mark.parametrize("token", [None, "wrong", "site-key"])
def test_anything_else_needs_a_placement_key(placement, services, token):
    if token == "site-key":  # a valid key of another principal is not a Placement key
        token = generate_key()
        services.keys.add(hash_key(token), "site:k8s")
    answer = placement.get("/placement/resource_providers", token=token, version="1.23")
    assert answer.status == 401
    error = answer.body["errors"][0]
    assert (error["status"], error["title"]) == (401, "Unauthorized")
    assert answer.header("x-openstack-request-id") == error["request_id"]


@pytest.mark.parametrize(("header", "status", "version"), [
    ("placement latest", 200, "placement 1.39"),
    ("placement 1.17", 200, "placement 1.17"),
    ("placement 1.40", 406, None),
    ("placement 2.0", 406, None),
    ("placement one.two", 400, None),
])
def test_microversion_negotiation(placement, header, status, version):
    answer = placement.get("/placement/resource_providers", headers={"openstack-api-version": header})
    assert answer.status == status
    assert answer.header("openstack-api-version") == version
    if status == 406:
        assert answer.body["errors"][0]["max_version"] == "1.39"


def test_request_id_header_and_error_body(placement):
    answer = placement.get(f"/placement/resource_providers/{new_uuid()}", version="1.23")
    assert answer.status == 404
    error = answer.body["errors"][0]
    assert error["code"] == "placement.undefined_code" and error["title"] == "Not Found"
    assert re.fullmatch(REQ_ID, answer.header("x-openstack-request-id"))
    assert error["request_id"] == answer.header("x-openstack-request-id")
    assert "code" not in placement.get(f"/placement/resource_providers/{new_uuid()}", version="1.22").body["errors"][0]


def test_create_provider_status_location_and_links_by_microversion(placement):
    old = placement.post("/placement/resource_providers", {"name": "a"}, version="1.19")
    assert old.status == 201 and old.body is None and old.header("content-type") is None
    assert old.header("location").startswith("http://127.0.0.1:8000/placement/resource_providers/")
    new = placement.post("/placement/resource_providers", {"name": "b"}, version="1.20")
    assert new.status == 200
    rels = {link["rel"]: link["href"] for link in new.body["links"]}
    assert rels["self"] == f"/placement/resource_providers/{new.body['uuid']}"
    assert set(rels) == {"self", "inventories", "usages", "aggregates", "traits", "allocations"}
    assert new.body["parent_provider_uuid"] is None and new.body["root_provider_uuid"] == new.body["uuid"]


def test_cache_headers_only_from_1_15(placement):
    rp = provider(placement)
    assert placement.get(f"/placement/resource_providers/{rp}", version="1.14").header("cache-control") is None
    answer = placement.get(f"/placement/resource_providers/{rp}", version="1.15")
    assert answer.header("cache-control") == "no-cache" and answer.header("last-modified").endswith("GMT")


def test_claim_usage_and_release(placement):
    rp = provider(placement, VCPU={"total": 4}, MEMORY_MB={"total": 1024, "reserved": 24})
    consumer = new_uuid()
    put = claim(placement, consumer, {rp: {"VCPU": 2, "MEMORY_MB": 1000}})
    assert put.status == 204 and put.header("content-type") is None and put.header("cache-control") is None
    usages = placement.get(f"/placement/resource_providers/{rp}/usages", version="1.28").body
    assert usages == {"resource_provider_generation": 2, "usages": {"VCPU": 2, "MEMORY_MB": 1000}}
    totals = placement.get(f"/placement/usages?project_id={PROJECT}&user_id={USER}", version="1.9").body
    assert totals == {"usages": {"VCPU": 2, "MEMORY_MB": 1000}}
    over = claim(placement, new_uuid(), {rp: {"MEMORY_MB": 1}})
    assert over.status == 409 and "would exceed the capacity" in over.body["errors"][0]["detail"]
    shown = placement.get(f"/placement/allocations/{consumer}", version="1.28").body
    assert shown["consumer_generation"] == 1 and shown["allocations"][rp]["generation"] == 2
    assert placement.delete(f"/placement/resource_providers/{rp}", version="1.23").body["errors"][0]["code"] == (
        "placement.resource_provider.inuse")
    assert placement.delete(f"/placement/allocations/{consumer}").status == 204
    assert placement.get(f"/placement/usages?project_id={PROJECT}", version="1.9").body == {"usages": {}}
    assert placement.get(f"/placement/allocations/{consumer}").body == {"allocations": {}}
    assert placement.delete(f"/placement/resource_providers/{rp}").status == 204
    assert placement.get(f"/placement/resource_providers/{rp}").status == 404


def test_list_providers_with_filters(placement):
    a, b = provider(placement, name="alpha"), provider(placement, name="beta")
    everything = placement.get("/placement/resource_providers").body["resource_providers"]
    assert {p["uuid"] for p in everything} == {a, b}
    def listed(query: str) -> list[str]:
        return [p["uuid"] for p in placement.get(f"/placement/resource_providers?{query}").body["resource_providers"]]

    assert listed("name=beta") == [b]
    assert listed(f"uuid={a}") == [a]


def test_a_write_over_the_transaction_limit_is_a_deterministic_400(placement, services):
    rp = provider(placement, VCPU={"total": 1000})
    body = {new_uuid(): {"allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": PROJECT, "user_id": USER,
                         "consumer_generation": None} for _ in range(60)}
    answer = placement.post("/placement/allocations", body, version="1.28")
    assert answer.status == 400
    assert "limit is 100" in answer.body["errors"][0]["detail"]
    assert placement.get(f"/placement/resource_providers/{rp}/usages").body["usages"] == {"VCPU": 0}


def test_no_scan_anywhere(placement, services):
    services.round_trips.reset()
    rp = provider(placement, VCPU={"total": 8})
    claim(placement, new_uuid(), {rp: {"VCPU": 1}})
    for path in ("/placement/resource_providers", f"/placement/resource_providers/{rp}/allocations",
                 f"/placement/usages?project_id={PROJECT}", "/placement/resource_classes"):
        assert placement.get(path, version="1.28").status == 200
    assert "Scan" not in services.round_trips.calls


def test_custom_resource_class_lifecycle(placement):
    assert placement.put("/placement/resource_classes/CUSTOM_GOLD", version="1.7").status == 201
    assert placement.put("/placement/resource_classes/CUSTOM_GOLD", version="1.7").status == 204
    rp = provider(placement, CUSTOM_GOLD={"total": 2})
    in_use = placement.delete("/placement/resource_classes/CUSTOM_GOLD", version="1.7")
    assert in_use.status == 409 and "Class is in use in inventory" in in_use.body["errors"][0]["detail"]
    assert placement.delete(f"/placement/resource_providers/{rp}").status == 204
    assert placement.delete("/placement/resource_classes/CUSTOM_GOLD", version="1.7").status == 204
    names = [c["name"] for c in placement.get("/placement/resource_classes", version="1.7").body["resource_classes"]]
    assert names[:3] == ["VCPU", "MEMORY_MB", "DISK_GB"] and "CUSTOM_GOLD" not in names


def test_rewriting_the_same_allocations_moves_both_generations_and_keeps_usage(placement):
    rp = provider(placement, VCPU={"total": 4})
    consumer = new_uuid()
    assert claim(placement, consumer, {rp: {"VCPU": 4}}).status == 204
    again = claim(placement, consumer, {rp: {"VCPU": 4}}, generation=1)
    assert again.status == 204, again.body
    shown = placement.get(f"/placement/allocations/{consumer}", version="1.28").body
    assert shown["consumer_generation"] == 2 and shown["allocations"][rp]["generation"] == 3
    assert placement.get(f"/placement/resource_providers/{rp}/usages").body["usages"] == {"VCPU": 4}


def test_an_inventory_change_between_read_and_write_is_never_ignored(placement, services):
    """The claim read the inventory (room for 2 more); before its transaction is sent, the inventory
    shrinks to what is already used. The transaction's inventory condition fails and the re-decided
    claim is refused instead of over-committing."""
    from chalicelib.store.client import make_client

    rp = provider(placement, VCPU={"total": 4})
    assert claim(placement, new_uuid(), {rp: {"VCPU": 2}}).status == 204
    other = make_client(services.settings)  # a second writer, on its own connection
    shrunk: list[int] = []

    def shrink_first(**_):
        if not shrunk:
            shrunk.append(1)
            from chalicelib.placement.models import Inventory
            from chalicelib.placement.store import PlacementStore

            store = PlacementStore(other, services.table)
            store.write_inventories(store.provider(rp), {"VCPU": Inventory(total=2)})

    services.client.meta.events.register("before-send.dynamodb.TransactWriteItems", shrink_first)
    try:
        refused = claim(placement, new_uuid(), {rp: {"VCPU": 2}})
    finally:
        services.client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", shrink_first)
    assert shrunk and refused.status == 409
    assert "would exceed the capacity" in refused.body["errors"][0]["detail"]
    assert placement.get(f"/placement/resource_providers/{rp}/usages").body["usages"] == {"VCPU": 2}


def test_wrong_methods_and_media_types_in_placements_format(placement):
    wrong = placement.get("/placement/allocations", version="1.13")
    assert wrong.status == 405 and wrong.header("allow") == "POST"
    assert "The method GET is not allowed for this resource." in wrong.body["errors"][0]["detail"]
    rp = provider(placement)
    assert placement.delete(f"/placement/resource_providers/{rp}/inventories", version="1.4").status == 405
    assert placement.post("/placement/allocations", {}, version="1.12").status == 404  # route gated at 1.13
    assert placement.get(f"/placement/usages?project_id={PROJECT}", version="1.8").status == 404
    text = placement.post("/placement/resource_providers", raw=b"name=x", headers={"content-type": "text/plain"})
    assert text.status == 415 and "The media type text/plain is not supported" in text.body["errors"][0]["detail"]
    head = placement.request("HEAD", f"/placement/resource_providers/{rp}")  # issue 14 item 27: as Placement
    assert head.status == 405 and head.body is None and head.header("allow") == "GET, DELETE, PUT"


def test_listing_more_providers_than_one_batch_get_returns_them_all(placement, services):
    created = {provider(placement, name=f"rp-{i:03d}") for i in range(105)}
    services.round_trips.reset()
    listed = placement.get("/placement/resource_providers").body["resource_providers"]
    assert {p["uuid"] for p in listed} == created
    assert services.round_trips.calls["BatchGetItem"] == 2 and "Scan" not in services.round_trips.calls


def test_provider_names_are_unique_through_create_rename_and_delete(placement):
    a, b = provider(placement, name="alpha"), provider(placement, name="beta")
    taken = placement.post("/placement/resource_providers", {"name": "alpha"}, version="1.23")
    assert taken.status == 409 and taken.body["errors"][0]["code"] == "placement.duplicate_name"
    clash = placement.put(f"/placement/resource_providers/{b}", {"name": "alpha"}, version="1.23")
    assert clash.status == 409 and "Conflicting resource provider alpha already exists" in (
        clash.body["errors"][0]["detail"])
    renamed = placement.put(f"/placement/resource_providers/{a}", {"name": "gamma"})
    assert renamed.status == 200 and renamed.body["name"] == "gamma" and renamed.body["generation"] == 0
    assert placement.put(f"/placement/resource_providers/{b}", {"name": "alpha"}).status == 200  # alpha is free
    assert placement.delete(f"/placement/resource_providers/{a}").status == 204
    assert placement.post("/placement/resource_providers", {"name": "gamma"}).status == 201  # so is gamma


def test_two_auth_tokens_are_401_even_when_one_is_valid(placement):
    from app import app

    event_headers = {"x-auth-token": placement.key, "host": "127.0.0.1:8000"}
    event = {
        "resource": "/placement/resource_providers", "path": "/placement/resource_providers",
        "httpMethod": "GET", "headers": event_headers,
        "multiValueHeaders": {"x-auth-token": ["rp_wrong", placement.key], "host": ["127.0.0.1:8000"]},
        "queryStringParameters": None, "multiValueQueryStringParameters": None, "pathParameters": None,
        "stageVariables": None, "body": None, "isBase64Encoded": False,
        "requestContext": {"httpMethod": "GET", "resourcePath": "/placement/resource_providers",
                           "path": "/placement/resource_providers", "requestId": "r-1"},
    }
    from chalice.local import LambdaContext

    response = app(event, LambdaContext("resource-provisioning", 1024, max_runtime_ms=30000))
    assert response["statusCode"] == 401
    assert placement.get("/placement/resource_providers").status == 200


LONG = "CUSTOM_" + "A" * 2000  # longer than any class or trait, and than a DynamoDB key can hold


@pytest.mark.parametrize(("method", "path", "body", "version", "status", "detail"), [
    ("GET", f"/resource_providers?resources={LONG}:1", None, "1.4", 400, "No such resource class"),
    ("GET", f"/resource_providers?required={LONG}", None, "1.18", 400, "No such trait(s)"),
    ("GET", f"/allocation_candidates?resources={LONG}:1", None, "1.10", 400, "No such resource class"),
    ("GET", f"/allocation_candidates?resources=VCPU:1&root_required={LONG}", None, "1.35", 400, "No such trait"),
    ("GET", f"/resource_classes/{LONG}", None, "1.7", 404, "No such resource class"),
    ("DELETE", f"/resource_classes/{LONG}", None, "1.7", 404, "No such resource class"),
    ("GET", f"/traits/{LONG}", None, "1.6", 404, "No such trait(s)"),
    ("DELETE", f"/traits/{LONG}", None, "1.6", 404, "No such trait(s)"),
    ("GET", "/resource_providers/{rp}/inventories/" + LONG, None, "1.6", 404, "No inventory of class"),
    ("PUT", "/resource_providers/{rp}/traits", {"resource_provider_generation": 0, "traits": [LONG]}, "1.6", 400,
     "JSON does not validate"),  # the schema's 255 characters, as upstream
    ("PUT", "/resource_providers/{rp}/inventories", {"resource_provider_generation": 0,
                                                     "inventories": {LONG: {"total": 1}}}, "1.6", 400, None),
    ("PUT", "/allocations/{consumer}", {"allocations": {"{rp}": {"resources": {LONG: 1}}}, "project_id": PROJECT,
                                        "user_id": USER, "consumer_generation": None}, "1.28", 400, None),
])
def test_a_name_no_class_or_trait_can_have_is_unknown_never_503(placement, method, path, body, version, status,
                                                                 detail):
    """Read under a key DynamoDB cannot hold, such a name was a ValidationException, a 503 no retry serves; it
    is unknown, answered as the reference answers an unknown name (reference_differences.py runs these)."""
    rp = provider(placement)
    path = path.format(rp=rp, consumer=new_uuid())
    if body is not None:
        body = json.loads(json.dumps(body).replace("{rp}", rp))
    answer = placement.request(method, "/placement" + path, body, version=version)
    assert answer.status == status, answer.body
    if detail is not None:
        assert detail in answer.body["errors"][0]["detail"]
