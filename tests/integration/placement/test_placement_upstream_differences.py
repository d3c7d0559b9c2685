"""Issue 14 items 23-32: where this service answered otherwise than the real Placement 16.0.0 (found by a
differential run), each answered now as Placement answers it. tests/placement_conformance/
test_reference_differences.py sends the same requests to the real Placement too."""

from __future__ import annotations

import pytest

from tests.integration.placement.helpers import PROJECT, USER, claim, new_uuid, provider

RP_PATH = "/placement/resource_providers"


def _inventories(placement, rp):
    return placement.get(f"{RP_PATH}/{rp}/inventories", version="1.28").body


# --- 23: whole-number floats are integers --------------------------------------------------------------

def test_whole_number_floats_in_inventories_are_stored_as_integers_and_echoed_as_sent(placement):
    rp = provider(placement)
    put = placement.put(f"{RP_PATH}/{rp}/inventories", {"resource_provider_generation": 0, "inventories": {
        "VCPU": {"total": 10.0, "max_unit": 4.0, "reserved": 1.0, "min_unit": 1.0, "step_size": 1.0}}},
        version="1.28")
    assert put.status == 200, put.body
    assert put.body["inventories"]["VCPU"]["total"] == 10.0 and isinstance(put.body["inventories"]["VCPU"]["total"],
                                                                            float)
    stored = _inventories(placement, rp)["inventories"]["VCPU"]
    assert stored == {"total": 10, "reserved": 1, "min_unit": 1, "max_unit": 4, "step_size": 1,
                      "allocation_ratio": 1.0}
    assert all(isinstance(stored[k], int) for k in ("total", "reserved", "min_unit", "max_unit", "step_size"))
    one = placement.post(f"{RP_PATH}/{rp}/inventories", {"resource_class": "DISK_GB", "total": 20.0},
                         version="1.28")
    assert one.status == 201 and one.body["total"] == 20.0
    update = placement.put(f"{RP_PATH}/{rp}/inventories/DISK_GB",
                           {"resource_provider_generation": 2, "total": 30.0, "allocation_ratio": 3}, version="1.28")
    assert update.status == 200 and update.body["allocation_ratio"] == 3 and isinstance(
        update.body["allocation_ratio"], int)
    assert _inventories(placement, rp)["inventories"]["DISK_GB"]["allocation_ratio"] == 3.0


@pytest.mark.parametrize("version", ["1.0", "1.12", "1.28"])
def test_whole_number_float_allocation_amounts_are_integers_in_every_put_format(placement, version):
    rp = provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    if version == "1.0":
        body = {"allocations": [{"resource_provider": {"uuid": rp}, "resources": {"VCPU": 2.0}}]}
    else:
        body = {"allocations": {rp: {"resources": {"VCPU": 2.0}}}, "project_id": PROJECT, "user_id": USER}
        if version == "1.28":
            body["consumer_generation"] = None
    assert placement.put(f"/placement/allocations/{consumer}", body, version=version).status == 204
    shown = placement.get(f"/placement/allocations/{consumer}", version="1.28").body
    assert shown["allocations"][rp]["resources"] == {"VCPU": 2}
    assert isinstance(shown["allocations"][rp]["resources"]["VCPU"], int)


def test_whole_number_float_amounts_in_post_allocations(placement):
    rp = provider(placement, VCPU={"total": 8})
    consumer = new_uuid()
    answer = placement.post("/placement/allocations", {consumer: {
        "allocations": {rp: {"resources": {"VCPU": 3.0}}}, "project_id": PROJECT, "user_id": USER,
        "consumer_generation": None}}, version="1.28")
    assert answer.status == 204, answer.body
    assert placement.get(f"{RP_PATH}/{rp}/usages").body["usages"] == {"VCPU": 3}


# --- 24: allocation_ratio in the capacity rule ---------------------------------------------------------

@pytest.mark.parametrize(("version", "ratio", "status"), [
    ("1.25", 0.05, 400),  # int(10 * 0.05) == 0: no capacity, refused below 1.26
    ("1.26", 0.05, 200),  # zero capacity allowed from 1.26
    ("1.26", -1.0, 400),  # negative capacity, refused always
    ("1.25", 0.1, 200),
])
def test_allocation_ratio_counts_in_placements_capacity_rule(placement, version, ratio, status):
    rp = provider(placement)
    answer = placement.put(f"{RP_PATH}/{rp}/inventories", {"resource_provider_generation": 0, "inventories": {
        "VCPU": {"total": 10, "allocation_ratio": ratio}}}, version=version)
    assert answer.status == status, answer.body
    if status == 400:
        assert "Invalid inventory for 'VCPU'" in answer.body["errors"][0]["detail"]
        assert _inventories(placement, rp)["inventories"] == {}


# --- 25: an empty provider name ------------------------------------------------------------------------

def test_an_empty_provider_name_is_400(placement):
    answer = placement.post(RP_PATH, {"name": ""}, version="1.28")
    assert answer.status == 400
    assert "Object action create failed because: name is required" in answer.body["errors"][0]["detail"]
    assert placement.get(RP_PATH, version="1.28").body["resource_providers"] == []


# --- 26: a trailing slash is another path --------------------------------------------------------------

def test_a_trailing_slash_is_404_and_changes_nothing(placement):
    rp = provider(placement, VCPU={"total": 8})
    deleted = placement.delete(f"{RP_PATH}/{rp}/inventories/", version="1.28")
    assert deleted.status == 404 and deleted.header("openstack-api-version") == "placement 1.28"
    assert list(_inventories(placement, rp)["inventories"]) == ["VCPU"]
    consumer = new_uuid()
    written = placement.put(f"/placement/allocations/{consumer}/", {
        "allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": PROJECT, "user_id": USER,
        "consumer_generation": None}, version="1.28")
    assert written.status == 404
    assert placement.get(f"/placement/allocations/{consumer}", version="1.28").body["allocations"] == {}
    assert placement.get(f"{RP_PATH}/", version="1.28").status == 404
    assert placement.get(f"{RP_PATH}/{rp}/", version="1.28").status == 404
    assert placement.get("/placement/", token=None).status == 200  # the version document, as upstream


# --- 27: HEAD ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "allow"), [
    ("/placement", "GET"), ("/placement/resource_providers", "GET, POST"),
    ("/placement/usages", "GET"),
    # Placement's route-table order, not sorted
    ("/placement/resource_providers/7f2b0fd6-4a52-4d59-8c8e-0a4f5b9c2d11", "GET, DELETE, PUT"),
    ("/placement/resource_providers/7f2b0fd6-4a52-4d59-8c8e-0a4f5b9c2d11/inventories", "GET, POST, PUT, DELETE"),
    ("/placement/allocations/7f2b0fd6-4a52-4d59-8c8e-0a4f5b9c2d11", "GET, PUT, DELETE"),
])
def test_head_is_405_with_allow_on_placement_routes(placement, path, allow):
    answer = placement.request("HEAD", path, version="1.28")
    assert answer.status == 405 and answer.header("allow") == allow and answer.body is None


# --- 28: list filters ----------------------------------------------------------------------------------

def test_an_empty_name_filter_lists_every_provider_and_a_dashless_uuid_filter_is_400(placement):
    a, b = provider(placement, name="a"), provider(placement, name="b")
    listed = placement.get(f"{RP_PATH}?name=", version="1.28")
    assert listed.status == 200 and {p["uuid"] for p in listed.body["resource_providers"]} == {a, b}
    dashless = placement.get(f"{RP_PATH}?uuid={a.replace('-', '')}", version="1.28")
    assert dashless.status == 400
    assert "is not a 'uuid'" in dashless.body["errors"][0]["detail"]


# --- 29: microversion spellings ------------------------------------------------------------------------

@pytest.mark.parametrize(("header", "status", "answered"), [
    ("placement 01.2", 200, "placement 1.2"),
    ("placement 1.010", 200, "placement 1.10"),
    ("placement 1. 2", 200, "placement 1.2"),
    ("placement 1.2, placement 1.14", 200, "placement 1.14"),
    ("placement -1.2", 406, None),
])
def test_microversion_headers_mean_what_microversion_parse_makes_of_them(placement, header, status, answered):
    answer = placement.get(RP_PATH, headers={"openstack-api-version": header})
    assert answer.status == status
    assert answer.header("openstack-api-version") == answered


# --- 30, 31: media types -------------------------------------------------------------------------------

def test_the_version_document_is_served_whatever_the_accept_header(placement):
    answer = placement.get("/placement", token=None, headers={"accept": "text/html"})
    assert answer.status == 200 and answer.body["versions"][0]["max_version"] == "1.39"


def _raw(placement, path, accept):
    from tests.integration.placement.conftest import gateway

    headers = {"x-auth-token": placement.key, "host": "127.0.0.1:8000", "openstack-api-version": "placement 1.28"}
    if accept is not None:
        headers["accept"] = accept
    return gateway().handle("GET", path, headers, None)


@pytest.mark.parametrize(("accept", "content_type", "starts"), [
    ("text/html", "text/html; charset=UTF-8", "<html>\n <head>\n  <title>404 Not Found</title>"),
    ("text/plain", "text/plain; charset=UTF-8", "404 Not Found\n\nThe resource could not be found."),
    (None, "application/json", '{"errors":'),
    ("*/*", "application/json", '{"errors":'),
])
def test_error_bodies_follow_the_accept_header(placement, accept, content_type, starts):
    response = _raw(placement, "/placement/nothing-here", accept)
    headers = {k.lower(): v for k, v in response["headers"].items()}
    assert response["statusCode"] == 404 and headers["content-type"] == content_type
    assert str(response["body"]).startswith(starts)


# --- 32: smaller differences ---------------------------------------------------------------------------

def test_a_body_over_10_mb_is_placements_400_with_a_request_id(placement):
    from tests.integration.placement.conftest import gateway

    headers = {"x-auth-token": placement.key, "host": "127.0.0.1:8000", "content-type": "application/json",
               "accept": "application/json", "openstack-api-version": "placement 1.28"}
    response = gateway().handle("POST", RP_PATH, headers, b"x" * (10 * 1024 * 1024 + 1))
    import json

    lowered = {k.lower(): v for k, v in response["headers"].items()}
    (error,) = json.loads(response["body"])["errors"]
    assert response["statusCode"] == 400 and error["status"] == 400 and error["code"] == "placement.undefined_code"
    assert error["request_id"] == lowered["x-openstack-request-id"]


def test_405_and_415_details_are_webobs(placement):
    wrong = placement.get("/placement/allocations", version="1.13")
    assert wrong.body["errors"][0]["detail"] == ("The method GET is not allowed for this resource. \n\n "
                                                 "The method specified is not allowed for this resource.")
    text = placement.post(RP_PATH, raw=b"name=x", headers={"content-type": "text/plain"})
    assert text.body["errors"][0]["detail"] == (
        "The request media type text/plain is not supported by this server. \n\n "
        "The media type text/plain is not supported, use application/json")


def test_a_taken_uuid_and_name_names_only_the_uuid(placement):
    rp = provider(placement, name="taken")
    answer = placement.post(RP_PATH, {"name": "taken", "uuid": rp}, version="1.28")
    assert answer.status == 409
    assert f"Conflicting resource provider uuid: {rp} already exists." in answer.body["errors"][0]["detail"]
    assert "name:" not in answer.body["errors"][0]["detail"]


def test_a_schema_message_is_folded_onto_one_line(placement):
    answer = placement.post(RP_PATH, {"name": 5}, version="1.28")
    detail = answer.body["errors"][0]["detail"]
    assert "JSON does not validate: 5 is not of type 'string'  Failed validating" in detail
    assert detail.count("\n") == 2  # only the explanation's "\n\n"


def test_no_vary_on_404_and_no_last_modified_without_inventories(placement):
    missing = placement.get(f"{RP_PATH}/{new_uuid()}", version="1.28")
    assert missing.status == 404 and missing.header("vary") is None
    assert missing.header("openstack-api-version") == "placement 1.28"
    rp = provider(placement)
    empty = placement.get(f"{RP_PATH}/{rp}/inventories", version="1.28")
    assert empty.header("cache-control") == "no-cache" and empty.header("last-modified") is None
    assert placement.get(f"{RP_PATH}/{rp}", version="1.28").header("vary") == "openstack-api-version"


# Upstream's microversion middleware adds `vary` to what its handlers answer, an error they raise included; an
# error escaping them (no route, a not-found the handler does not catch) has the version header only.
# (method, path under a known provider `{rp}` or an unknown one `{gone}`, microversion, vary expected)
VARY_ON_ERRORS = [
    ("GET", "/placement/resource_providers/{gone}", "1.28", None),  # escapes show's handler
    ("GET", "/placement/resource_providers/{gone}/aggregates", "1.19", None),
    ("GET", "/placement/no_such_route", "1.28", None),
    ("GET", "/placement/resource_providers/{gone}/inventories", "1.28", "openstack-api-version"),
    ("GET", "/placement/resource_providers/{gone}/inventories/VCPU", "1.28", "openstack-api-version"),
    ("GET", "/placement/resource_providers/{rp}/inventories/VCPU", "1.28", "openstack-api-version"),
    ("DELETE", "/placement/resource_providers/{gone}/inventories/VCPU", "1.28", None),
    ("DELETE", "/placement/resource_providers/{rp}/inventories/VCPU", "1.28", "openstack-api-version"),
    ("DELETE", "/placement/resource_providers/{gone}", "1.28", "openstack-api-version"),
    ("GET", "/placement/resource_providers/{gone}/usages", "1.28", "openstack-api-version"),
    ("GET", "/placement/resource_providers/{gone}/allocations", "1.28", "openstack-api-version"),
    ("GET", "/placement/resource_providers/{gone}/traits", "1.6", "openstack-api-version"),
    ("GET", "/placement/traits/CUSTOM_NOBODY_MADE", "1.6", "openstack-api-version"),
    ("DELETE", "/placement/traits/CUSTOM_NOBODY_MADE", "1.6", "openstack-api-version"),
    ("DELETE", "/placement/allocations/{gone}", "1.28", "openstack-api-version"),
    ("GET", "/placement/traits", "1.5", "openstack-api-version"),  # the route's microversion gate
    ("DELETE", "/placement/resource_classes/CUSTOM_NOBODY_MADE", "1.1", "openstack-api-version"),
]


@pytest.mark.parametrize(("method", "path", "version", "vary"), VARY_ON_ERRORS,
                         ids=[f"{m} {p} {v}" for m, p, v, _ in VARY_ON_ERRORS])
def test_a_404_carries_vary_when_upstreams_handler_answers_it_itself(placement, method, path, version, vary):
    rp = provider(placement)
    answer = placement.request(method, path.format(rp=rp, gone=new_uuid()), version=version)
    assert answer.status == 404, answer.body
    assert (answer.header("vary"), answer.header("openstack-api-version")) == (vary, f"placement {version}")


def test_a_body_without_content_type_escapes_the_handlers_without_vary(placement):
    answer = placement.request("POST", RP_PATH, raw=b"{}", version="1.28", headers={"content-type": ""})
    assert answer.status == 400 and answer.header("vary") is None


def test_providers_are_listed_in_creation_order(placement):
    uuids = ["ffffffff-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002",
             "88888888-0000-4000-8000-000000000003"]
    for i, uuid in enumerate(uuids):
        assert placement.post(RP_PATH, {"name": f"rp-{i}", "uuid": uuid}, version="1.28").status == 200
    listed = placement.get(RP_PATH, version="1.28").body["resource_providers"]
    assert [p["uuid"] for p in listed] == uuids


def test_claims_still_work_after_float_writes(placement):
    rp = provider(placement, VCPU={"total": 4.0})
    assert claim(placement, new_uuid(), {rp: {"VCPU": 4}}).status == 204


def test_before_1_29_limit_counts_only_candidates_of_one_provider_per_tree(placement):
    """Found by the differential fuzzer: upstream drops a candidate drawing from two providers of one tree
    (below 1.29) before it applies `limit`, so the flat node still answers `limit=1`."""
    tree, child, flat = new_uuid(), new_uuid(), new_uuid()
    for name, uuid, parent in (("tree", tree, None), ("child", child, tree), ("flat", flat, None)):
        body = {"name": name, "uuid": uuid, **({"parent_provider_uuid": parent} if parent else {})}
        assert placement.post(RP_PATH, body, version="1.20").status == 200
    for uuid, inventories in ((tree, {"DISK_GB": {"total": 500}}), (child, {"MEMORY_MB": {"total": 2048}}),
                              (flat, {"DISK_GB": {"total": 50}, "MEMORY_MB": {"total": 4096}})):
        put = placement.put(f"{RP_PATH}/{uuid}/inventories",
                            {"resource_provider_generation": 0, "inventories": inventories}, version="1.20")
        assert put.status == 200, put.body
    answer = placement.get("/placement/allocation_candidates?resources=MEMORY_MB:512,DISK_GB:1&limit=1",
                           version="1.17")
    assert answer.status == 200, answer.body
    assert [sorted(r["allocations"]) for r in answer.body["allocation_requests"]] == [[flat]]


def test_before_1_29_limit_keeps_the_summaries_of_the_trees_kept(placement):
    """Found by the differential fuzzer: below 1.29 the summaries after `limit` are those (of the providers
    any candidate drew from) in the kept candidates' trees, as upstream's limit_results keeps them."""
    root, first, second = new_uuid(), new_uuid(), new_uuid()
    assert placement.post(RP_PATH, {"name": "root", "uuid": root}, version="1.20").status == 200
    for name, uuid in (("first", first), ("second", second)):
        body = {"name": name, "uuid": uuid, "parent_provider_uuid": root}
        assert placement.post(RP_PATH, body, version="1.20").status == 200
        assert placement.put(f"{RP_PATH}/{uuid}/inventories", {"resource_provider_generation": 0, "inventories": {
            "VCPU": {"total": 4}}}, version="1.20").status == 200
    answer = placement.get("/placement/allocation_candidates?resources=VCPU:1&limit=1", version="1.24")
    assert answer.status == 200 and len(answer.body["allocation_requests"]) == 1, answer.body
    assert sorted(answer.body["provider_summaries"]) == sorted([first, second])


def test_inventories_replaced_by_none_answer_without_last_modified(placement):
    """Found by the differential fuzzer: as GET, PUT takes last-modified from the inventories it answers."""
    rp = provider(placement)
    put = placement.put(f"{RP_PATH}/{rp}/inventories", {"resource_provider_generation": 0, "inventories": {
        "VCPU": {"total": 4}}}, version="1.28")
    assert put.status == 200 and put.header("last-modified") is not None
    emptied = placement.put(f"{RP_PATH}/{rp}/inventories", {"resource_provider_generation": 1, "inventories": {}},
                            version="1.28")
    assert emptied.status == 200 and emptied.header("last-modified") is None
    assert emptied.header("cache-control") == "no-cache"


def _write_nothing(placement, how, consumer, rp, project):
    """An empty write for `consumer`, by PUT, POST /allocations or a reshape that keeps `rp`'s inventory."""
    entry = {"allocations": {}, "project_id": project, "user_id": USER, "consumer_generation": None}
    if how == "put":
        return placement.put(f"/placement/allocations/{consumer}", entry, version="1.28")
    if how == "post":
        return placement.post("/placement/allocations", {consumer: entry}, version="1.28")
    keep = {"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 8}}}
    return placement.post("/placement/reshaper", {"inventories": {rp: keep}, "allocations": {consumer: entry}},
                          version="1.30")


@pytest.mark.parametrize("how", ["put", "post", "reshaper"])
def test_an_empty_first_write_leaves_the_consumer_at_generation_0(placement, how):
    """Found by the differential fuzzer: as upstream's ensure_consumer, the consumer is created, and with
    nothing to write it stays at 0: its next write must say 0, it shows no allocations, DELETE is 404."""
    rp, consumer, project = provider(placement, VCPU={"total": 8}), new_uuid(), new_uuid()
    usages = f"/placement/usages?project_id={project}&consumer_type=all"
    assert _write_nothing(placement, how, consumer, rp, project).status == 204
    assert placement.get(f"/placement/allocations/{consumer}", version="1.28").body == {"allocations": {}}
    assert placement.delete(f"/placement/allocations/{consumer}", version="1.28").status == 404
    assert placement.get(usages, version="1.38").body == {"usages": {}}
    stale = claim(placement, consumer, {rp: {"VCPU": 1}}, project=project)
    assert stale.status == 409 and "expected 0 but got None" in stale.body["errors"][0]["detail"]
    assert claim(placement, consumer, {rp: {"VCPU": 1}}, generation=0, project=project).status == 204
    shown = placement.get(f"/placement/allocations/{consumer}", version="1.28").body
    assert shown["consumer_generation"] == 1 and shown["allocations"][rp]["resources"] == {"VCPU": 1}
    assert placement.get(usages, version="1.38").body["usages"]["all"] == {"VCPU": 1, "consumer_count": 1}


@pytest.mark.parametrize(("query", "status"), [
    ("resources=VCPU:1&root_required=CUSTOM_HELD_BY_NONE&resources1=CUSTOM_NOPE:1&group_policy=none", 200),
    ("resources=VCPU:1&root_required=!CUSTOM_HELD_BY_NONE&resources1=CUSTOM_NOPE:1&group_policy=none", 400),
    ("resources=VCPU:1&required=CUSTOM_NOPE&root_required=CUSTOM_HELD_BY_NONE", 200),
    ("resources1={unheld}:1&resources2=CUSTOM_NOPE:1&group_policy=none", 200),
    ("resources2=CUSTOM_NOPE:1&resources1={unheld}:1&group_policy=none", 400),
    ("resources1=VCPU:1&in_tree1={missing}&resources2=VCPU:1&required2=CUSTOM_NOPE&group_policy=none", 200),
    ("resources1=VCPU:1&resources2=VCPU:1&required2=CUSTOM_NOPE&group_policy=none", 400),
    ("resources=CUSTOM_NOPE:1&resources1=VCPU:1&group_policy=isolate", 400),
])
def test_a_name_unknown_to_a_later_group_goes_unnoticed_once_placement_found_nothing(placement, query, status):
    """Found by the differential fuzzer: Placement searches group by group, each after its names, and answers
    200 with nothing as soon as root_required or one group finds no provider."""
    provider(placement, VCPU={"total": 8})
    unheld = f"CUSTOM_HELD_BY_NONE_{new_uuid()[:8].upper()}"  # a class no inventory holds
    assert placement.put(f"/placement/resource_classes/{unheld}", None, version="1.7").status == 201
    assert placement.put("/placement/traits/CUSTOM_HELD_BY_NONE", None, version="1.6").status in (201, 204)
    query = query.format(missing=new_uuid(), unheld=unheld)
    answer = placement.get(f"/placement/allocation_candidates?{query}", version="1.39")
    assert answer.status == status, answer.body
    if status == 200:
        assert answer.body == {"allocation_requests": [], "provider_summaries": {}}
    else:
        assert "No such" in answer.body["errors"][0]["detail"]


def test_put_provider_answers_last_modified_only_once_placements_row_was_updated(placement):
    """Found by the differential fuzzer: upstream answers the updated_at it read, NULL for a child created and
    not renamed, moved or written since (a root's row is updated at creation, to set its root)."""
    root, other, child, grandchild = provider(placement), provider(placement), new_uuid(), new_uuid()

    def create(uuid, parent):
        body = {"name": uuid, "uuid": uuid, "parent_provider_uuid": parent}
        assert placement.post(RP_PATH, body, version="1.20").status == 200

    def put(uuid, name, parent, version="1.28"):
        answer = placement.put(f"{RP_PATH}/{uuid}", {"name": name, "parent_provider_uuid": parent}, version=version)
        assert answer.status == 200, answer.body
        return answer.header("last-modified") is not None

    create(child, root)
    assert not put(child, child, root)  # the same name: no update
    assert not put(child, "renamed", root)  # upstream answers the updated_at read before the rename
    assert put(child, "renamed-again", root)
    assert put(root, "root", None)
    create(grandchild, child)
    placement.put(f"{RP_PATH}/{grandchild}/inventories", {"resource_provider_generation": 0, "inventories": {
        "VCPU": {"total": 1}}}, version="1.28")
    assert put(grandchild, grandchild, child)  # its generation moved
    moved = new_uuid()
    create(moved, child)
    put(child, "renamed-again", other, version="1.37")  # the subtree's root is rewritten
    assert put(moved, moved, child)


# --- where upstream crashes: a value under a key that is no class name ------------------------------------

@pytest.mark.parametrize("value", [1, "x", None, [], {}, {"totl": 1}, {"total": "x"}, {"total": 1, "min_unit": None}])
def test_an_inventory_under_a_key_that_is_no_class_name_must_be_a_record(placement, value):
    """Upstream's schema leaves such a key unvalidated and crashes (500) on what is under it unless it is an
    inventory record (found by the differential fuzzer, seed 18007); input that can never succeed is a 400
    here, and nothing is written."""
    rp = provider(placement)
    answer = placement.put(f"{RP_PATH}/{rp}/inventories", {"resource_provider_generation": 0, "inventories": {
        "VCPU": {"total": 4}, "unexpected": value}}, version="1.14")
    assert answer.status == 400, answer.body
    assert answer.body["errors"][0]["detail"].count("JSON does not validate") == 1
    assert _inventories(placement, rp)["inventories"] == {}


def test_an_inventory_record_under_a_key_that_is_no_class_name_is_an_unknown_class_as_upstream(placement):
    rp = provider(placement)
    answer = placement.put(f"{RP_PATH}/{rp}/inventories", {"resource_provider_generation": 0, "inventories": {
        "unexpected": {"total": 1}}}, version="1.14")
    assert answer.status == 400
    assert "Unknown resource class in inventory for resource provider" in answer.body["errors"][0]["detail"]
