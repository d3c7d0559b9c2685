"""What the framework would answer by itself is answered by us: always {"code": ...}."""

import json

import pytest

from tests.support import factories as f


@pytest.mark.parametrize("path", ["/", "/nope", "/resource-provisioning/k8s", "/resource-provisioning/k8s/reports/x",
                                  "/api/other", "/resource-provisioning/k8s/allocations"])
def test_unknown_routes_are_404_not_found(api, path):
    for method in ("GET", "POST", "DELETE"):
        answer = api.request(method, path, key="k8s")
        assert (answer.status, answer.body) == (404, {"code": "not_found"})


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/resource-provisioning/k8s/reports"),
        ("PUT", "/resource-provisioning/k8s/reports"),
        ("DELETE", "/resource-provisioning/k8s/allocations/6f1b2a52-4c8e-5d0a-9b7e-3a1c2d4e5f60"),
        ("POST", "/resource-provisioning/k8s/projects/wp"),
        ("PATCH", "/resource-provisioning/k8s/retained-accounts"),
        ("OPTIONS", "/resource-provisioning/k8s/reports"),
    ],
)
def test_wrong_method_is_405(api, method, path):
    answer = api.request(method, path, key="k8s")
    assert (answer.status, answer.body) == (405, {"code": "method_not_allowed"})


def test_wrong_method_on_the_intake(api):
    answer = api.request("GET", "/api/resource-provisioning/events", key="service")
    assert (answer.status, answer.body) == (405, {"code": "method_not_allowed"})


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "application/xml",
                                   "multipart/form-data", "application/octet-stream"])
def test_non_json_content_type_is_400(api, ctype):
    answer = api.request("POST", "/resource-provisioning/k8s/reports", key="k8s",
                         body=json.dumps(f.report()).encode(), headers={"content-type": ctype})
    assert answer.status == 400 and set(answer.body) == {"code"}


@pytest.mark.parametrize("raw", [b"", b"{", b"not json", b"[1,2]", b"null", b'"str"', b"\xff", b'{"a":1}{'])
def test_invalid_json_is_400(api, raw):
    answer = api.request("POST", "/resource-provisioning/k8s/reports", key="k8s", body=raw)
    assert answer.status == 400 and set(answer.body) == {"code"}


def test_errors_never_echo_input(api):
    marker = "ECHO-MARKER-1234"
    body = f.report(marker, resourceRef=marker)
    body["resource"]["configured"] = {marker: 1}
    answer = api.post("/resource-provisioning/k8s/reports", body, key="k8s")
    assert answer.status == 400 and marker not in json.dumps(answer.body)


def test_bodies_over_5_mib_are_too_large(api):
    padding = " " * (5 * 1024 * 1024)
    raw = (json.dumps(f.report())[:-1] + padding + "}").encode()
    answer = api.request("POST", "/resource-provisioning/k8s/reports", key="k8s", body=raw)
    assert (answer.status, answer.body) == (400, {"code": "too_large"})


def test_a_body_just_under_5_mib_is_parsed(api):
    padding = " " * (5 * 1024 * 1024 - 2000)
    raw = (json.dumps(f.report())[:-1] + padding + "}").encode()
    answer = api.request("POST", "/resource-provisioning/k8s/reports", key="k8s", body=raw)
    assert answer.status == 200


def test_malformed_allocation_id_is_400(api):
    for bad in ("nope", "6F1B2A52-4C8E-5D0A-9B7E-3A1C2D4E5F60", "6f1b2a52-4c8e-0d0a-9b7e-3a1c2d4e5f60"):
        answer = api.get(f"/resource-provisioning/k8s/allocations/{bad}", key="k8s")
        assert answer.status == 400


def test_unknown_allocation_is_404(api):
    answer = api.get("/resource-provisioning/k8s/allocations/6f1b2a52-4c8e-5d0a-9b7e-3a1c2d4e5f60", key="k8s")
    assert (answer.status, answer.body) == (404, {"code": "not_found"})


@pytest.mark.parametrize("method", ["TRACE", "QUERY", "CONNECT"])
def test_methods_no_route_knows_are_405_after_authentication(api, method):
    answer = api.request(method, "/resource-provisioning/k8s/reports", key="k8s")
    assert (answer.status, answer.body) == (405, {"code": "method_not_allowed"})
    assert api.request(method, "/resource-provisioning/k8s/reports").status == 401


def test_path_parameters_arrive_percent_decoded(api, services):
    from app import app
    from devkit.gateway import LocalGateway
    from tests.integration.helpers import bind

    bind(api, ref="wp:1.a")
    response = LocalGateway(app).handle(
        "GET", "/resource-provisioning/k8s/projects/wp%3A1.a", {"authorization": f"Bearer {api.keys['k8s']}"}, None)
    assert response["statusCode"] == 200
    assert json.loads(response["body"]) == {"projectId": f.PROJECT}
