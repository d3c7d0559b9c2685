"""Microversion negotiation and Placement's error body (pure)."""

from __future__ import annotations

import pytest

from chalicelib.placement import microversion
from chalicelib.placement.errors import PlacementError, error_body


@pytest.mark.parametrize(("header", "expected"), [
    (None, (1, 0)),
    ("placement latest", (1, 28)),
    ("placement LATEST", (1, 28)),
    ("placement 1.14", (1, 14)),
    ("compute 2.1, placement 1.5", (1, 5)),
    ("compute 2.1", (1, 0)),  # no entry for placement: the minimum
])
def test_negotiated_versions(header, expected):
    headers = {} if header is None else {"openstack-api-version": header}
    assert microversion.negotiate(headers) == expected


@pytest.mark.parametrize(("header", "status"), [
    ("placement 1.29", 406), ("placement 0.9", 406), ("placement 2.0", 406),
    ("placement 1", 400), ("placement one.two", 400), ("placement 1.2.3", 400), ("placement -1.0", 400),
])
def test_refused_versions(header, status):
    with pytest.raises(PlacementError) as caught:
        microversion.negotiate({"openstack-api-version": header})
    assert caught.value.status == status
    if status == 406:
        assert caught.value.extra == {"max_version": "1.28", "min_version": "1.0"}


def test_every_version_from_1_0_to_1_28_is_listed_once_with_what_it_changed():
    assert list(microversion.VERSIONS) == [(1, minor) for minor in range(29)]
    assert all(text.strip() for text in microversion.VERSIONS.values())


@pytest.mark.parametrize(("version", "has_code"), [((1, 22), False), ((1, 23), True), (None, False)])
def test_error_body_code_from_1_23(version, has_code):
    body = error_body(PlacementError(409, "resource provider generation conflict", "placement.concurrent_update"),
                      "req-1", version)
    (entry,) = body["errors"]
    assert entry["status"] == 409 and entry["title"] == "Conflict" and entry["request_id"] == "req-1"
    assert "resource provider generation conflict" in entry["detail"]
    assert ("code" in entry) is has_code
    if has_code:
        assert entry["code"] == "placement.concurrent_update"
