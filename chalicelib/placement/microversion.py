"""Microversions 1.0-1.39: every one listed once, negotiated once per request, and what each means.

`OpenStack-API-Version: placement X.Y` is parsed by OpenStack's `microversion-parse`, the library
Placement itself uses, so odd spellings mean what they mean upstream (`01.2` is 1.2, `1.010` is 1.10,
`-1.2` is an unacceptable version, of several `placement` entries the last counts). No header means
1.0, `latest` means 1.39; a header that does not parse is `Malformed` (400), a version outside the
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
    (1, 1): "resource provider aggregates: GET/PUT /resource_providers/{uuid}/aggregates (a list body)",
    (1, 2): "custom resource classes: GET/POST/PUT/DELETE /resource_classes (PUT renames, with a body)",
    (1, 3): "`member_of` on GET /resource_providers (`in:` for any of several aggregates)",
    (1, 4): "`resources` filter on GET /resource_providers (providers with capacity for the amounts)",
    (1, 5): "DELETE /resource_providers/{uuid}/inventories (before: 405)",
    (1, 6): "traits: GET /traits, PUT/GET/DELETE /traits/{name}, /resource_providers/{uuid}/traits",
    (1, 7): "PUT /resource_classes/{name} creates or confirms a custom class (201/204) without a body",
    (1, 8): "PUT /allocations requires `project_id` and `user_id`",
    (1, 9): "GET /usages?project_id=&user_id= (before: 404)",
    (1, 10): "GET /allocation_candidates",
    (1, 11): "links get `allocations`",
    (1, 12): "PUT /allocations/{consumer} dict format; GET shows project_id and user_id",
    (1, 13): "POST /allocations: several consumers in one atomic write (before: 404)",
    (1, 14): "nested providers: `parent_provider_uuid` on create/update, `root_provider_uuid`, `in_tree`",
    (1, 15): "`cache-control: no-cache` and `last-modified` on responses with a body",
    (1, 16): "`limit` on allocation candidates",
    (1, 17): "`required` traits on allocation candidates",
    (1, 18): "`required` traits on GET /resource_providers",
    (1, 19): "aggregates bodies carry `resource_provider_generation` (PUT checks it and bumps it)",
    (1, 20): "POST /resource_providers answers 200 with the provider (before: 201, no body)",
    (1, 21): "`member_of` on allocation candidates",
    (1, 22): "forbidden traits (`!TRAIT`) in `required`",
    (1, 23): "error bodies carry `code`",
    (1, 24): "several `member_of` parameters (ANDed)",
    (1, 25): "granular resource requests on allocation candidates (`resourcesN`, `group_policy`)",
    (1, 26): "inventory `reserved` may equal `total`",
    (1, 27): "all inventory classes in `provider_summaries` (allocation candidates)",
    (1, 28): "consumer generations: `consumer_generation` required on writes, shown on reads",
    (1, 29): "allocation candidates from nested trees; `provider_summaries` show parent and root",
    (1, 30): "POST /reshaper: inventories and allocations of a tree changed at once",
    (1, 31): "`in_tree` (and `in_treeN`) on allocation candidates",
    (1, 32): "forbidden aggregates: `member_of=!<agg>` and `member_of=!in:<a>,<b>`",
    (1, 33): "request group suffixes may be strings (`resources_COMPUTE`)",
    (1, 34): "allocation candidates carry `mappings`; allocations accept them",
    (1, 35): "`root_required` on allocation candidates",
    (1, 36): "`same_subtree` on allocation candidates",
    (1, 37): "re-parenting and un-parenting providers (PUT parent_provider_uuid to another or null)",
    (1, 38): "consumer types: `consumer_type` on allocations, usages by consumer type",
    (1, 39): "any-traits `required=in:A,B` (and `required` repeated) on lists and candidates",
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
    aggregate_generations: bool = False  # 1.19: an aggregates PUT is checked against and bumps the generation
    reparenting: bool = False  # 1.37: a provider's parent may change to another provider or to none


def features(version: Version) -> Features:
    return Features(
        reserved_may_equal_total=version >= (1, 26),
        consumer_generations=version >= (1, 28),
        forbidden_traits=version >= (1, 22),
        any_traits=version >= (1, 39),
        aggregate_generations=version >= (1, 19),
        reparenting=version >= (1, 37),
    )
