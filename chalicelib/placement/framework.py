"""The app's API-family framework and principals, as the Placement package uses them."""

from __future__ import annotations

from chalicelib.auth.principals import PLACEMENT_GRANT, Principal
from chalicelib.http.family import Family, Forbidden, Reply, Request, Route, build_blueprint

__all__ = ["PLACEMENT_GRANT", "Family", "Forbidden", "Principal", "Reply", "Request", "Route", "build_blueprint"]
