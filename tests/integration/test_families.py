"""The API-family framework as the agent contract sees it: one route table, credentials, methods, query."""

import json
import uuid

from chalice.local import LambdaContext

from chalicelib.api import ROUTES


def _event(method, path, resource, params, headers, multi_headers=None, query=None):
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": multi_headers or {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in (query or {}).items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": params,
        "stageVariables": None,
        "requestContext": {"httpMethod": method, "resourcePath": resource, "path": path,
                           "requestId": str(uuid.uuid4())},
        "body": None,
        "isBase64Encoded": False,
    }


def _call(event):
    from app import app

    response = app(event, LambdaContext("resource-provisioning", 1024, max_runtime_ms=30000))
    return response["statusCode"], json.loads(response["body"]) if response["body"] else None, response


def test_the_route_table_is_what_the_app_serves():
    from app import app

    contract_paths = {p for p in app.routes if p.startswith(("/resource-provisioning/", "/api/resource-provisioning/"))}
    assert {route.path for route in ROUTES} == contract_paths
    for route in ROUTES:
        assert route.method in ("GET", "POST") and route.grant and route.name and callable(route.handler)
    assert len({(r.method, r.path) for r in ROUTES}) == len(ROUTES)


def test_two_authorization_headers_are_401_even_when_the_last_is_valid(api):
    resource = "/resource-provisioning/{site}/projects/{providerProjectRef}"
    path = "/resource-provisioning/k8s/projects/wp-1"
    good, bad = f"Bearer {api.keys['k8s']}", "Bearer rp_wrong"
    status, body, response = _call(_event("GET", path, resource, {"site": "k8s", "providerProjectRef": "wp-1"},
                                          {"authorization": good}, {"authorization": [bad, good]}))
    assert (status, body) == (401, {"code": "unauthorized"})
    assert response["headers"]["WWW-Authenticate"] == "Bearer"
    # The same request with the one valid header is let in (404: no such project yet).
    status, body, _ = _call(_event("GET", path, resource, {"site": "k8s", "providerProjectRef": "wp-1"},
                                   {"authorization": good}))
    assert (status, body) == (404, {"code": "not_found"})


def test_a_proxy_joined_authorization_header_is_401(api):
    joined = f"Bearer rp_wrong, Bearer {api.keys['k8s']}"
    answer = api.get("/resource-provisioning/k8s/projects/wp-1", headers={"authorization": joined})
    assert (answer.status, answer.body) == (401, {"code": "unauthorized"})


def test_a_repeated_query_parameter_is_400(api):
    resource = "/resource-provisioning/{site}/members/{username}"
    path = "/resource-provisioning/k8s/members/alice"
    headers = {"authorization": f"Bearer {api.keys['k8s']}"}
    status, body, _ = _call(_event("GET", path, resource, {"site": "k8s", "username": "alice"}, headers,
                                   query={"providerProjectRef": ["a", "b"]}))
    assert (status, body) == (400, {"code": "invalid_request"})
    status, body, _ = _call(_event("GET", path, resource, {"site": "k8s", "username": "alice"}, headers,
                                   query={"providerProjectRef": ["a"]}))
    assert status == 404 and body == {"code": "not_found"}


def test_a_repeated_query_parameter_needs_authentication_first(api):
    resource = "/resource-provisioning/{site}/members/{username}"
    status, body, _ = _call(_event("GET", "/resource-provisioning/k8s/members/alice", resource,
                                   {"site": "k8s", "username": "alice"}, {},
                                   query={"providerProjectRef": ["a", "b"]}))
    assert (status, body) == (401, {"code": "unauthorized"})


def test_head_on_a_get_route_answers_like_get_without_a_body(api):
    get = api.get("/resource-provisioning/k8s/projects/wp-1", key="k8s")
    head = api.request("HEAD", "/resource-provisioning/k8s/projects/wp-1", key="k8s", check=False)
    assert (head.status, head.body) == (get.status, None)
    assert head.headers.get("Content-Type") == get.headers.get("Content-Type")


def test_head_on_a_post_route_is_405(api):
    answer = api.request("HEAD", "/resource-provisioning/k8s/reports", key="k8s", check=False)
    assert answer.status == 405 and answer.headers.get("Allow") == "POST"


def test_unknown_routes_answer_the_same_bytes_as_the_app(api):
    from app import app
    from devkit.gateway import LocalGateway

    unknown = LocalGateway(app).handle("GET", "/resource-provisioning/k8s/nope", {}, None)
    known = api.get("/resource-provisioning/k8s/projects/wp-1", key="k8s")
    assert unknown["statusCode"] == 404 and known.status == 404
    assert unknown["body"] == json.dumps(known.body, separators=(",", ":")) == '{"code":"not_found"}'


def test_two_kinds_of_credential_header_are_401_even_when_one_is_valid(api):
    # Authorization and X-Auth-Token together are ambiguous in every family (a proxy reading the other
    # header would act for another caller): 401, whichever of them is valid.
    resource = "/resource-provisioning/{site}/projects/{providerProjectRef}"
    path = "/resource-provisioning/k8s/projects/wp-1"
    good = f"Bearer {api.keys['k8s']}"
    status, body, response = _call(_event("GET", path, resource, {"site": "k8s", "providerProjectRef": "wp-1"},
                                          {"authorization": good, "x-auth-token": api.keys["k8s"]}))
    assert (status, body) == (401, {"code": "unauthorized"})
    assert response["headers"]["WWW-Authenticate"] == "Bearer"
