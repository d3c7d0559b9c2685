"""Microversion negotiation (microversion-parse, as Placement) and Placement's error body (pure)."""

from __future__ import annotations

import pytest

from chalicelib.http.family import Request
from chalicelib.placement import microversion
from chalicelib.placement.family import as_http_error, effective_accept, error_entry, error_format, error_text
from chalicelib.placement.web import HttpError


@pytest.mark.parametrize(("header", "expected"), [
    (None, (1, 0)),
    ("placement latest", (1, 39)),
    ("placement 1.14", (1, 14)),
    ("compute 2.1, placement 1.5", (1, 5)),
    ("compute 2.1", (1, 0)),  # no entry for placement: the minimum
    # issue 14 item 29: what Placement's own parser makes of odd spellings
    ("placement 01.2", (1, 2)),
    ("placement 1.010", (1, 10)),
    ("placement 1. 2", (1, 2)),
    ("placement 1.2, placement 1.14", (1, 14)),  # the last placement entry counts
])
def test_negotiated_versions(header, expected):
    headers = {} if header is None else {"openstack-api-version": header}
    assert microversion.negotiate(headers) == expected


@pytest.mark.parametrize(("header", "status"), [
    ("placement 1.40", 406), ("placement 0.9", 406), ("placement 2.0", 406), ("placement -1.2", 406),
    ("placement 1", 400), ("placement one.two", 400), ("placement 1.2.3", 400), ("placement LATEST", 400),
])
def test_refused_versions(header, status):
    with pytest.raises((microversion.Malformed, microversion.Unacceptable)) as caught:
        microversion.negotiate({"openstack-api-version": header})
    error = as_http_error(caught.value)
    assert error.status == status
    if status == 406:
        assert error.extra == {"max_version": "1.39", "min_version": "1.0"}


def test_every_version_from_1_0_to_1_39_is_listed_once_with_what_it_changed():
    assert list(microversion.VERSIONS) == [(1, minor) for minor in range(40)]
    assert not [text for text in microversion.VERSIONS.values() if "not built" in text]
    assert all(text.strip() for text in microversion.VERSIONS.values())


def _meaning(version: tuple[int, int], *fields: str) -> tuple[bool, ...]:
    found = microversion.features(version)
    return tuple(getattr(found, name) for name in fields)


def test_rules_get_what_a_version_means_not_the_version():
    fields = ("reserved_may_equal_total", "consumer_generations")
    assert _meaning((1, 25), *fields) == (False, False)
    assert _meaning((1, 28), *fields) == (True, True)


def test_trait_queries_by_version():
    fields = ("forbidden_traits", "any_traits")
    assert _meaning((1, 21), *fields) == (False, False)
    assert _meaning((1, 22), *fields) == (True, False)
    assert _meaning((1, 38), *fields) == (True, False)
    assert _meaning((1, 39), *fields) == (True, True)


def test_aggregate_generations_and_reparenting_by_version():
    assert _meaning((1, 18), "aggregate_generations") == (False,)
    assert _meaning((1, 19), "aggregate_generations") == (True,)
    assert _meaning((1, 36), "reparenting") == (False,)
    assert _meaning((1, 37), "reparenting") == (True,)


def _request(method: str = "GET", **headers: str) -> Request:
    return Request(method=method, path="/placement/x", params={}, query={}, headers=headers,
                   header_values={k: [v] for k, v in headers.items()}, body=b"", url_root="http://h",
                   request_id="req-1")


@pytest.mark.parametrize(("version", "has_code"), [((1, 22), False), ((1, 23), True), (None, False)])
def test_error_body_code_from_1_23(version, has_code):
    entry = error_entry(HttpError(409, "resource provider generation conflict", "placement.concurrent_update"),
                        _request(), version)
    assert entry["status"] == 409 and entry["title"] == "Conflict" and entry["request_id"] == "req-1"
    assert "resource provider generation conflict" in entry["detail"]
    assert ("code" in entry) is has_code
    if has_code:
        assert entry["code"] == "placement.concurrent_update"


def test_error_details_read_as_webob_writes_them():
    """Newlines of the detail folded to spaces; 405 and 415 with their own texts (issue 14 item 32)."""
    folded = error_entry(HttpError(400, "JSON does not validate: 1 is not\n\nOn instance"), _request(), (1, 0))
    assert folded["detail"] == ("The server could not comply with the request since it is either malformed or "
                                "otherwise incorrect.\n\n JSON does not validate: 1 is not  On instance  ")
    method = error_entry(HttpError(405), _request("DELETE"), (1, 0))
    assert method["detail"] == "The method DELETE is not allowed for this resource. \n\n "
    media = error_entry(HttpError(415, "x"), _request("POST", **{"content-type": "text/plain"}), (1, 0))
    assert media["detail"] == "The request media type text/plain is not supported by this server. \n\n x"


@pytest.mark.parametrize(("accept", "kind"), [
    ("application/json", "json"), (None, "json"), ("", "json"), ("*/*", "json"), ("text/plain", "plain"),
    ("image/png", "plain"), ("text/html", "html"), ("application/*", "json"),
    ("application/json; charset=utf-8", "json"), ("application/json;q=0.5, text/html", "html"),
])
def test_error_bodies_follow_the_accept_header_as_placement(accept, kind):
    """Issue 14 item 31, as the real Placement answers (none or */* read as application/json)."""
    assert error_format(effective_accept(_request(**({} if accept is None else {"accept": accept})))) == kind


def test_plain_and_html_error_bodies():
    error = HttpError(404, "No resource provider with uuid x found")
    assert error_text(error, _request(), "plain") == (
        "404 Not Found\n\nThe resource could not be found.\n\n No resource provider with uuid x found  ")
    page = error_text(HttpError(404, "<b>"), _request(), "html")
    assert page.startswith("<html>\n <head>\n  <title>404 Not Found</title>") and "&lt;b&gt;" in page
