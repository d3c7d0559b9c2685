"""Placement endpoints this service does not build: traits, aggregates, allocation
candidates, the reshaper. They answer 404 in Placement's format (docs/placement.md)."""

from __future__ import annotations

from chalicelib.http.family import Reply, Request
from chalicelib.placement import web
from chalicelib.placement.service import PlacementService

PATHS = (
    "/placement/traits",
    "/placement/traits/{name}",
    "/placement/resource_providers/{uuid}/traits",
    "/placement/resource_providers/{uuid}/aggregates",
    "/placement/allocation_candidates",
    "/placement/reshaper",
)


def not_built(_service: PlacementService, request: Request) -> Reply:
    raise web.not_found("This Placement-compatible service does not provide traits, aggregates, "
                        "allocation candidates or the reshaper.")
