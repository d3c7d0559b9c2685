"""Placement's callers in either auth mode, and the route table's routes each naming a policy rule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.auth.keystone import Credential, PlacementCallers, placement_key_credential
from chalicelib.auth.principals import principal_for
from chalicelib.errors import Unauthorized, Unavailable
from chalicelib.placement.handler import ROUTES
from chalicelib.placement.policy import operation_for

TOKEN_CREDENTIAL = Credential(user_id="u-1", user_domain_id="default", project_id="p-1", project_domain_id="default",
                              domain_id=None, roles=("reader",), system_scope=None,
                              expires_at=datetime(2030, 1, 1, tzinfo=UTC))


class Keys:
    def __init__(self, known: dict[str, str], down: bool = False) -> None:
        self.known = known
        self.down = down

    def __call__(self, token: str | None):
        if self.down:
            raise Unavailable()
        if token not in self.known:
            raise Unauthorized()
        return principal_for(self.known[token])


class Validator:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def validate(self, token: str) -> Credential:
        self.asked.append(token)
        if token != "keystone-token":
            raise Unauthorized()
        return TOKEN_CREDENTIAL


def test_keys_mode_accepts_placement_keys_only() -> None:
    callers = PlacementCallers(Keys({"pk": "placement", "sk": "k8s"}))
    assert callers.credential("pk") == placement_key_credential()
    for token in ("sk", "keystone-token", None):
        with pytest.raises(Unauthorized):
            callers.credential(token)


def test_keystone_mode_validates_what_is_no_key_and_builds_the_validator_once() -> None:
    validator = Validator()
    built: list[int] = []

    def factory() -> Validator:
        built.append(1)
        return validator

    callers = PlacementCallers(Keys({"pk": "placement", "sk": "k8s"}), factory)  # type: ignore[arg-type]
    assert callers.credential("pk").roles == ("admin", "service", "member", "reader")
    assert built == []  # a key needs no Keystone
    assert callers.credential("keystone-token") == TOKEN_CREDENTIAL
    with pytest.raises(Unauthorized):
        callers.credential("unknown")
    with pytest.raises(Unauthorized):  # another kind of key: 401, Keystone not asked
        callers.credential("sk")
    assert built == [1] and validator.asked == ["keystone-token", "unknown"]


def test_a_key_store_outage_is_503_not_a_keystone_question() -> None:
    validator = Validator()
    callers = PlacementCallers(Keys({}, down=True), lambda: validator)  # type: ignore[arg-type,return-value]
    with pytest.raises(Unavailable):
        callers.credential("keystone-token")
    assert validator.asked == []


def test_every_placement_route_names_its_rule() -> None:
    """The route table's grant of each route is the rule upstream's handler enforces there (the
    operation table pins those to upstream's), and the version document needs no credential."""
    for route in ROUTES:
        found = operation_for(route.method, route.path)
        assert (found is None) == (route.name == "placement.root"), route.name
        assert route.grant == (None if found is None else found.rule), (route.name, route.grant)


def test_placement_principals_carry_their_credential() -> None:
    validator = Validator()
    callers = PlacementCallers(Keys({"pk": "placement"}), lambda: validator)  # type: ignore[arg-type,return-value]
    key = callers.principal("pk")
    assert key.kind == "placement" and key.credential == placement_key_credential()
    token = callers.principal("keystone-token")
    assert token.kind == "placement" and token.grants == frozenset() and token.credential == TOKEN_CREDENTIAL


def test_nothing_of_it_loads_at_import_app() -> None:
    """The cold-start goal: policy, validator, keystoneauth and PyYAML load on the first Placement
    request that needs them, never at `import app`."""
    import subprocess
    import sys
    from pathlib import Path

    lazy = ["chalicelib.placement.policy", "chalicelib.auth.keystone", "keystoneauth1", "yaml"]
    probe = f"import sys, app; print([m for m in {lazy!r} if m in sys.modules])"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin", "POWERTOOLS_METRICS_DISABLED": "true"})
    assert out.stdout.strip() == "[]"
