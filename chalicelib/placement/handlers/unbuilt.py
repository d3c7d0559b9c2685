"""Placement endpoints this service does not build yet (their paths: handler.py, UNBUILT_PATHS; none
today). They answer 404 in Placement's format (docs/placement.md)."""

from __future__ import annotations

from chalicelib.http.family import Reply, Request
from chalicelib.placement import web
from chalicelib.placement.service import PlacementService


def not_built(_service: PlacementService, request: Request) -> Reply:
    raise web.not_found("This Placement-compatible service does not provide this endpoint.")
