"""Principals, grants and credential reading: the single check every family relies on."""

import pytest

from chalicelib.auth.credentials import AmbiguousCredential, bearer_token, header_token
from chalicelib.auth.principals import (
    PLACEMENT_GRANT,
    SERVICE_GRANT,
    Principal,
    key_principal,
    key_principal_name,
    principal_for,
)


@pytest.mark.parametrize(
    ("stored", "kind", "site", "grants"),
    [
        ("site:k8s", "site", "k8s", {"resource-provisioning:site@k8s"}),
        ("site:slurm", "site", "slurm", {"resource-provisioning:site@slurm"}),
        ("service", "service", None, {SERVICE_GRANT}),
        ("placement", "placement", None, {PLACEMENT_GRANT}),
    ],
)
def test_key_principals_hold_the_grants_of_their_kind(stored, kind, site, grants):
    principal = key_principal(stored)
    assert principal is not None
    assert (principal.kind, principal.site, principal.name, set(principal.grants)) == (kind, site, stored, grants)
    assert principal.tenant is None


@pytest.mark.parametrize("stored", ["site:nowhere", "site:", "tenant", "Service", "", "site:k8s:x"])
def test_unknown_stored_names_are_no_principal(stored):
    assert key_principal(stored) is None


def test_a_site_key_opens_only_its_own_site():
    k8s = key_principal("site:k8s")
    assert k8s is not None
    assert k8s.allows("resource-provisioning:site@k8s")
    assert not k8s.allows("resource-provisioning:site@slurm")
    assert not k8s.allows(SERVICE_GRANT)
    assert not k8s.allows(PLACEMENT_GRANT)


def test_grants_are_matched_exactly():
    tenant = Principal("tenant", "alice", tenant="acme", grants=frozenset({"compute:fleet:admin@compute-fleet"}))
    assert tenant.allows("compute:fleet:admin@compute-fleet")
    for other in ("compute:fleet:admin@compute-pools", "compute:fleet:admin", "compute:fleet:admin@compute-fleet ",
                  "COMPUTE:FLEET:ADMIN@COMPUTE-FLEET", ""):
        assert not tenant.allows(other)


@pytest.mark.parametrize(("target", "stored"), [("k8s", "site:k8s"), ("slurm", "site:slurm"),
                                                 ("service", "service"), ("placement", "placement")])
def test_operators_name_key_principals(target, stored):
    assert key_principal_name(target) == stored
    assert principal_for(target).name == stored


@pytest.mark.parametrize("target", ["site:k8s", "tenant", "", "K8S"])
def test_unknown_operator_targets_are_refused(target):
    with pytest.raises(ValueError, match="unknown principal"):
        key_principal_name(target)


@pytest.mark.parametrize(
    ("values", "token"),
    [
        ([], None),
        ([""], None),
        (["Bearer abc"], "abc"),
        (["bearer abc"], "abc"),
        (["BEARER  abc "], "abc"),
        (["Basic abc"], None),
        (["Bearer"], None),
        (["Bearer a b"], None),
        (["Bearer a, Bearer b"], None),  # two headers joined by a proxy
        (["Bearer rp_x-Y_z.~+/=="], "rp_x-Y_z.~+/=="),
        (["Bearer " + "a" * 512], "a" * 512),
        (["Bearer " + "a" * 513], None),
    ],
)
def test_bearer_tokens(values, token):
    assert bearer_token(values) == token


@pytest.mark.parametrize(("values", "token"), [([], None), (["abc"], "abc"), ([" abc "], "abc"), (["a b"], None)])
def test_auth_token_header(values, token):
    assert header_token(values) == token


@pytest.mark.parametrize("reader", [bearer_token, header_token])
def test_two_credential_headers_are_ambiguous(reader):
    with pytest.raises(AmbiguousCredential):
        reader(["Bearer wrong", "Bearer right"])
