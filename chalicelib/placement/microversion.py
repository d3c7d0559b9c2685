"""Microversions 1.0-1.28: every one listed once, negotiated once per request, and what each means.

`OpenStack-API-Version: placement X.Y` is parsed by OpenStack's `microversion-parse`, the library
Placement itself uses, so odd spellings mean what they mean upstream (`01.2` is 1.2, `1.010` is 1.10,
`-1.2` is an unacceptable version, of several `placement` entries the last counts). No header means
1.0, `latest` means 1.28; a header that does not parse is `Malformed` (400), a version outside the
range `Unacceptable` (406, with min_version/max_version in the error, as Placement adds).

The family negotiates once (`PlacementFamily.begin`) and keeps the version in the request's context;
rules and services never see it: they get `Features`, what the version means for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SERVICE_TYPE = "placement"
HEADER = "OpenStack-API-Version"

Version = tuple[int, int]

# Every microversion we serve, once, with what it changed (Placement's rest_api_version_history).
VERSIONS: dict[tuple[int, int], str] = {
    (1, 0): "initial API: resource providers, inventories, allocations (list format), usages",
    (1, 1): "resource provider aggregates (links get `aggregates`; the endpoint is not built here)",
    (1, 2): "custom resource classes: GET/POST/PUT/DELETE /resource_classes",
    (1, 3): "`member_of` on GET /resource_providers (answered 400 here: aggregates are not built)",
    (1, 4): "`resources` filter on GET /resource_providers (answered 400 here)",
    (1, 5): "DELETE /resource_providers/{uuid}/inventories (before: 405)",
    (1, 6): "traits (links get `traits`; the endpoints are not built here)",
    (1, 7): "PUT /resource_classes/{name} creates or confirms a custom class (201/204) without a body",
    (1, 8): "PUT /allocations requires `project_id` and `user_id`",
    (1, 9): "GET /usages?project_id=&user_id= (before: 404)",
    (1, 10): "GET /allocation_candidates (not built here: 404)",
    (1, 11): "links get `allocations`",
    (1, 12): "PUT /allocations/{consumer} dict format; GET shows project_id and user_id",
    (1, 13): "POST /allocations: several consumers in one atomic write (before: 404)",
    (1, 14): "nested providers: parent_provider_uuid/root_provider_uuid shown (flat providers only here)",
    (1, 15): "`cache-control: no-cache` and `last-modified` on responses with a body",
    (1, 16): "`limit` on allocation candidates (not built here)",
    (1, 17): "`required` on allocation candidates (not built here)",
    (1, 18): "`required` on GET /resource_providers (answered 400 here: traits are not built)",
    (1, 19): "generations in aggregate APIs (not built here)",
    (1, 20): "POST /resource_providers answers 200 with the provider (before: 201, no body)",
    (1, 21): "`member_of` on allocation candidates (not built here)",
    (1, 22): "forbidden traits (not built here)",
    (1, 23): "error bodies carry `code`",
    (1, 24): "several `member_of` parameters (not built here)",
    (1, 25): "granular resource requests on allocation candidates (not built here)",
    (1, 26): "inventory `reserved` may equal `total`",
    (1, 27): "all inventory classes in `provider_summaries` (allocation candidates; not built here)",
    (1, 28): "consumer generations: `consumer_generation` required on writes, shown on reads",
}
MIN_VERSION = min(VERSIONS)
MAX_VERSION = max(VERSIONS)
_LISTED = [f"{major}.{minor}" for major, minor in VERSIONS]


class Malformed(Exception):
    """The header's placement entry does not parse (400)."""


class Unacceptable(Exception):
    """A version this service does not serve (406)."""


def text(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def negotiate(headers: Mapping[str, str]) -> Version:
    """The microversion a request asks for (headers with lower-case names, repeated ones comma-folded)."""
    import microversion_parse  # on the first Placement request, not at `import app` (cold start)

    try:
        found = microversion_parse.extract_version(dict(headers), SERVICE_TYPE, _LISTED)
    except ValueError as exc:
        raise Unacceptable(f"Invalid microversion: {exc}") from None
    except TypeError as exc:
        raise Malformed(f"Invalid microversion: {exc}") from None
    return int(found.major), int(found.minor)


def response_header(version: Version) -> str:
    return f"{SERVICE_TYPE} {text(version)}"


@dataclass(frozen=True)
class Features:
    """What a microversion means to the rules and the service (they never see the version itself)."""

    reserved_may_equal_total: bool  # 1.26: an inventory may have zero capacity (reserved == total)
    consumer_generations: bool  # 1.28: writes carry and are checked against consumer_generation
    forbidden_traits: bool  # 1.22: `required` may forbid a trait (`!T`)
    any_traits: bool  # 1.39: `required=in:A,B` (any of) and several `required` parameters


def features(version: Version) -> Features:
    return Features(reserved_may_equal_total=version >= (1, 26), consumer_generations=version >= (1, 28),
                    forbidden_traits=version >= (1, 22), any_traits=version >= (1, 39))
