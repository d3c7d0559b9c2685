"""The local gateway's route matcher (devkit/gateway.py) routes every path as Chalice's own matcher does."""

from __future__ import annotations

import pytest
from chalice.local import RouteMatcher

from app import app
from devkit.gateway import IndexedRouteMatcher

ROUTES = list(app.routes)


def sample_paths() -> list[str]:
    paths = {"/", "/nope", "/placement", "/placement/", "/placement/traits#fragment",
             "/placement/resource_providers/u/inventories/VCPU;params"}
    for route in ROUTES:
        paths.add(route.replace("{", "").replace("}", ""))  # each variable given its own name as value
        paths.add(route.replace("{", "x-").replace("}", "") + "/")  # a trailing slash
        paths.add(route + "?a=1&b=&a=2")
    return sorted(paths)


@pytest.mark.parametrize("path", sample_paths())
def test_the_route_and_query_are_chalices(path: str) -> None:
    try:
        expected = RouteMatcher(ROUTES).match_route(path)
    except ValueError:
        with pytest.raises(ValueError):
            IndexedRouteMatcher(ROUTES).match_route(path)
        return
    found = IndexedRouteMatcher(ROUTES).match_route(path)
    assert (found.route, found.query_params) == (expected.route, expected.query_params)
    # the matched route's parameters only (Chalice's also keeps those of routes that failed further on)
    names = {part[1:-1] for part in found.route.split("/") if part.startswith("{")}
    assert set(found.captured) == names
    assert {k: v for k, v in expected.captured.items() if k in names} == found.captured
