"""The lead's API-family framework (chalicelib.http.family, chalicelib.auth.principals), or,
until that lands on this branch, stand-ins with the same names and fields.

Remove the fallback once `git merge main` brings the framework.
"""

from __future__ import annotations

# ruff: noqa: F401
try:
    from chalicelib.auth.principals import PLACEMENT_GRANT, Principal
    from chalicelib.http.family import Family, Reply, Request, Route, build_blueprint
except ImportError:  # pragma: no cover - interim only
    from chalicelib.placement._interim import (  # type: ignore[assignment]
        PLACEMENT_GRANT,
        Family,
        Principal,
        Reply,
        Request,
        Route,
        build_blueprint,
    )
