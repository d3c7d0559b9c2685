"""GET /placement and /placement/: the version document (no credential needed, as in Placement, and
served whatever the Accept header says, as Placement's root handler does)."""

from __future__ import annotations

from chalicelib.http.family import Reply, Request
from chalicelib.placement import microversion, web
from chalicelib.placement.service import PlacementService


def home(_service: PlacementService, request: Request) -> Reply:
    minimum = microversion.text(microversion.MIN_VERSION)
    document = {"versions": [{
        "id": f"v{minimum}",
        "max_version": microversion.text(microversion.MAX_VERSION),
        "min_version": minimum,
        "status": "CURRENT",
        "links": [{"rel": "self", "href": ""}],
    }]}
    return web.reply(request, 200, document)
