"""Microversions 1.0-1.28 and their negotiation (`OpenStack-API-Version: placement X.Y`).

No header means 1.0, `latest` means 1.28; a header that does not parse is 400, a version
outside the range is 406 (with min_version/max_version in the error, as Placement adds).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from chalicelib.placement.errors import PlacementError

SERVICE_TYPE = "placement"
HEADER = "OpenStack-API-Version"

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

_VERSION = re.compile(r"^([1-9]\d*|0)\.([1-9]\d*|0)$")


def text(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _requested(headers: Mapping[str, str]) -> str | None:
    """The placement entry of the (possibly comma-folded) OpenStack-API-Version header."""
    raw = headers.get(HEADER) or headers.get(HEADER.lower())
    if raw is None:
        return None
    for part in raw.split(","):
        words = part.strip().split(None, 1)
        if len(words) == 2 and words[0].lower() == SERVICE_TYPE:
            return words[1].strip()
    return None


def negotiate(headers: Mapping[str, str]) -> tuple[int, int]:
    """The microversion a request asks for; raises PlacementError 400/406."""
    wanted = _requested(headers)
    if wanted is None:
        return MIN_VERSION
    if wanted.lower() == "latest":
        return MAX_VERSION
    match = _VERSION.match(wanted)
    if not match:
        raise PlacementError(400, f"Invalid microversion: invalid version string: {wanted}")
    version = (int(match.group(1)), int(match.group(2)))
    if version not in VERSIONS:
        raise PlacementError(
            406, f"Invalid microversion: Unacceptable version header: {wanted}",
            extra={"max_version": text(MAX_VERSION), "min_version": text(MIN_VERSION)},
        )
    return version


def response_header(version: tuple[int, int]) -> str:
    return f"{SERVICE_TYPE} {text(version)}"
