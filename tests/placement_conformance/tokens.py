"""Upstream's gabbits authenticate with headers its test middleware trusts (`x-auth-token: admin`,
`x-roles`, `x-project-id`, `x-user-id`, `openstack-system-scope`). Here each such header set becomes a
real Keystone token, minted by the fake Keystone over HTTP (`POST /_fake/tokens` with those headers,
fakes/openstack/keystone.py), and the request carries that token instead: the service validates it
against the same fake Keystone and its policy decides from the roles and scope the token holds. The
other headers are sent unchanged (the service must not trust `x-roles`).

The fixture's own seeding (tests/placement_conformance/fixtures.py) keeps using the Placement key.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Mapping
from typing import Any

# The headers upstream's NoAuthMiddleware and oslo.context read, in the order the fake reads them.
IDENTITY_HEADERS = ("x-auth-token", "x-roles", "x-project-id", "x-user-id", "openstack-system-scope")


class TokenMinter:
    """Tokens for header sets from the fake Keystone at `base_url`, one per distinct header set."""

    def __init__(self, base_url: str) -> None:
        self.url = base_url.rstrip("/") + "/_fake/tokens"
        self._tokens: dict[tuple[tuple[str, str], ...], str] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TokenMinter({self.url!r}, minted={len(self._tokens)})"

    def token_for(self, identity: Mapping[str, str]) -> str:
        key = tuple(sorted((name.lower(), str(value)) for name, value in identity.items()))
        with self._lock:
            found = self._tokens.get(key)
        if found is not None:
            return found
        request = urllib.request.Request(self.url, data=b"", method="POST", headers=dict(key))
        with urllib.request.urlopen(request, timeout=30) as response:
            token = str(json.loads(response.read())["token"])
        with self._lock:
            self._tokens.setdefault(key, token)
            return self._tokens[key]

    def with_token(self, headers: Mapping[str, Any]) -> dict[str, Any]:
        """The request's headers with its `x-auth-token` replaced by a token for its identity headers;
        a request without `x-auth-token` is sent as it is (no token: 401)."""
        out = dict(headers)
        names = {name.lower(): name for name in out}
        if "x-auth-token" not in names:
            return out
        identity = {header: str(out[names[header]]) for header in IDENTITY_HEADERS if header in names}
        out[names["x-auth-token"]] = self.token_for(identity)
        return out


def mint_on_request(http: Any, minter: TokenMinter) -> None:
    """Make one gabbi case's HTTP client send minted tokens (gabbi's `Http.request`, wrapped on the
    instance: the substituted headers, `$ENVIRON[...]` already read, are what the token is made from)."""
    send = http.request

    def request(absolute_uri: str, method: str, body: Any, headers: Mapping[str, Any], redirect: bool = False,
                timeout: Any = 30) -> Any:
        return send(absolute_uri, method=method, body=body, headers=minter.with_token(headers), redirect=redirect,
                    timeout=timeout)

    http.request = request
