"""The Placement API end to end on DynamoDB Local: auth, negotiation, headers, limits, unbuilt parts."""

from __future__ import annotations

import re

import pytest

from chalicelib.auth.keys import generate_key, hash_key
from tests.integration.placement.helpers import PROJECT, USER, claim, new_uuid, provider

REQ_ID = r"req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.mark.parametrize("path", ["/placement", "/placement/"])
def test_version_document_needs_no_token(placement, path):
    answer = placement.get(path, token=None)
    assert answer.status == 200
    assert answer.body == {"versions": [{"id": "v1.0", "max_version": "1.28", "min_version": "1.0",
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
    ("placement latest", 200, "placement 1.28"),
    ("placement 1.17", 200, "placement 1.17"),
    ("placement 1.29", 406, None),
    ("placement 2.0", 406, None),
    ("placement one.two", 400, None),
])
def test_microversion_negotiation(placement, header, status, version):
    answer = placement.get("/placement/resource_providers", headers={"openstack-api-version": header})
    assert answer.status == status
    assert answer.header("openstack-api-version") == version
    if status == 406:
        assert answer.body["errors"][0]["max_version"] == "1.28"


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


@pytest.mark.parametrize("param", ["member_of=abc", "resources=VCPU:1", f"in_tree={new_uuid()}",
                                   "required=HW_CPU_X86_AVX"])
def test_unbuilt_filters_are_400(placement, param):
    answer = placement.get(f"/placement/resource_providers?{param}", version="1.28")
    assert answer.status == 400 and answer.body["errors"][0]["title"] == "Bad Request"


@pytest.mark.parametrize("path", ["/placement/traits", "/placement/allocation_candidates?resources=VCPU:1",
                                  "/placement/reshaper", f"/placement/resource_providers/{new_uuid()}/aggregates"])
def test_unbuilt_endpoints_are_404(placement, path):
    answer = placement.get(path, version="1.28")
    assert answer.status == 404 and answer.body["errors"][0]["code"] == "placement.undefined_code"


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
