"""GET /placement and /placement/: the version document (no credential needed, as in Placement)."""

from __future__ import annotations

from typing import Any

from chalicelib.http.family import Reply, Request
from chalicelib.placement import microversion, web


def home(_svc: Any, request: Request) -> Reply:
    web.check_accept(request)
    minimum = microversion.text(microversion.MIN_VERSION)
    document = {"versions": [{
        "id": f"v{minimum}",
        "max_version": microversion.text(microversion.MAX_VERSION),
        "min_version": minimum,
        "status": "CURRENT",
        "links": [{"rel": "self", "href": ""}],
    }]}
    return web.reply(request, 200, document)
