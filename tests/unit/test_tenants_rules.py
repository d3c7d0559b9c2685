"""Tenant principals (pure): how they are named and opened, their grants, and the operator's inputs.

Issue 9, "Identity and authorization": a principal's token opens it until it is revoked; issuing again
replaces its grants and keeps its earlier tokens; names follow the one name pattern; a site kind is one
of kubernetes, slurm, openstack.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chalicelib.auth.principals import Principal, key_principal
from chalicelib.tenants.inputs import IssuePrincipal, PrincipalPath, RegisterSite, TenantPath
from chalicelib.tenants.models import SiteRegistration, TenantPrincipal
from chalicelib.tenants.rules import merged_grants, parse_stored_name, principal_of, principal_resolver, stored_name

FLEET = "compute:fleet:admin@compute-fleet"
POOLS = "compute:pools:admin@compute-pools"


def record(epoch: str = "e1", grants: tuple[str, ...] = (FLEET, POOLS)) -> TenantPrincipal:
    return TenantPrincipal("acme", "alice", grants, epoch, 1_700_000_000)


# --- stored names: a tenant principal never reads as a key principal, nor the reverse ------------


@pytest.mark.parametrize(("tenant", "principal"), [("acme", "alice"), ("a", "b"), ("t-1", "p-2")])
def test_stored_name_round_trips(tenant, principal):
    name = stored_name(tenant, principal)
    assert name == f"tenant:{tenant}/{principal}"
    assert parse_stored_name(name) == (tenant, principal)
    assert key_principal(name) is None  # a tenant principal is never a Site, service or Placement key


@pytest.mark.parametrize("name", [
    "site:k8s", "service", "placement",  # key principals
    "acme/alice",  # no prefix
    "Tenant:acme/alice", "tenant-acme/alice", "xtenant:acme/alice", "tenantacme/alice",
    "tenant:acme", "tenant:acmealice",  # no separator
    "tenant:/alice", "tenant:acme/", "tenant:/", "tenant:",  # an empty part
])
def test_names_that_are_not_tenant_principals(name):
    assert parse_stored_name(name) is None


def test_the_prefix_is_stripped_whole():
    assert parse_stored_name("tenant:ab/c") == ("ab", "c")
    assert parse_stored_name("tenant:tenant:x/y") == ("tenant:x", "y")


def test_the_tenant_ends_at_the_first_slash():
    # A tenant name has no "/" (the name pattern), so the first one ends it; the rest is the principal as
    # stored, which the tenant lookup then finds or not (a principal name has no "/" either).
    assert parse_stored_name("tenant:a/b/c") == ("a", "b/c")
    assert parse_stored_name(stored_name("acme", "x/y")) == ("acme", "x/y")


# --- opening a principal -----------------------------------------------------------------------------


def test_a_token_of_the_current_epoch_opens_its_principal_with_its_grants():
    principal = principal_of(record(), "e1")
    assert principal == Principal("tenant", "alice", tenant="acme", site=None, grants=frozenset({FLEET, POOLS}))
    assert principal.allows(FLEET) and principal.allows(POOLS)
    assert not principal.allows("compute:offers:admin@compute-offers")


@pytest.mark.parametrize(("stored", "token_epoch"), [
    (None, "e1"),  # revoked (or never issued)
    (record(), None),  # a token item without an epoch
    (record(), "e0"),  # issued before a revocation
    (record(epoch="e2"), "e1"),
    (record(epoch=""), None),
])
def test_no_principal_without_a_record_of_the_tokens_epoch(stored, token_epoch):
    assert principal_of(stored, token_epoch) is None


def test_reissued_grants_replace_the_old_ones():
    assert principal_of(record(grants=(POOLS,)), "e1").grants == frozenset({POOLS})
    assert principal_of(record(grants=()), "e1").grants == frozenset()


@pytest.mark.parametrize(("given", "stored"), [
    ([], ()),
    ([FLEET], (FLEET,)),
    ([POOLS, FLEET], (FLEET, POOLS)),
    ([POOLS, FLEET, POOLS, FLEET], (FLEET, POOLS)),
])
def test_grants_are_stored_once_each_sorted(given, stored):
    assert merged_grants(given) == stored


def test_the_resolver_opens_a_tenant_principal_through_its_lookup_and_any_other_as_a_key():
    looked_up: list[tuple[str, str]] = []

    def lookup(tenant: str, principal: str) -> TenantPrincipal | None:
        looked_up.append((tenant, principal))
        return record() if (tenant, principal) == ("acme", "alice") else None

    resolve = principal_resolver(lookup)
    assert resolve(stored_name("acme", "alice"), "e1") == principal_of(record(), "e1")
    assert resolve(stored_name("acme", "alice"), "e0") is None  # the token's epoch, not the record's
    assert resolve(stored_name("acme", "alice"), None) is None
    assert resolve(stored_name("acme", "bob"), "e1") is None
    assert looked_up == [("acme", "alice")] * 3 + [("acme", "bob")]  # every resolve reads the record again
    assert resolve("service", None) == key_principal("service") is not None
    assert resolve("site:k8s", None) == key_principal("site:k8s") is not None
    assert resolve("tenant:acme", "e1") is None and resolve("nobody", None) is None
    assert len(looked_up) == 4  # a key principal's name is never looked up as a tenant's


# --- bodies --------------------------------------------------------------------------------------------


def test_bodies():
    assert record().as_body() == {"tenant": "acme", "principal": "alice", "grants": [FLEET, POOLS]}
    assert isinstance(record().as_body()["grants"], list)
    assert SiteRegistration("acme", "k8s", "kubernetes", 1).as_body() == {
        "tenant": "acme", "name": "k8s", "kind": "kubernetes"}


# --- the operator's inputs -----------------------------------------------------------------------------


@pytest.mark.parametrize("grant", [FLEET, POOLS, "a@b", "a.b_c-d:e@x-y.z_1"])
def test_grants_accepted(grant):
    assert IssuePrincipal.model_validate({"principal": "alice", "grants": [grant]}).grants == [grant]


@pytest.mark.parametrize("grant", ["", "fleet", "@scope", "perm@", "Perm@scope", "perm@-scope", "p@s@t",
                                   "perm @scope", "perm@sc ope", "perm@scope\n", "p" * 129 + "@s", "p@" + "s" * 129])
def test_grants_refused(grant):
    with pytest.raises(ValidationError):
        IssuePrincipal.model_validate({"principal": "alice", "grants": [grant]})


def test_at_most_64_grants():
    grants = [f"p{i}@s" for i in range(64)]
    assert len(IssuePrincipal.model_validate({"principal": "alice", "grants": grants}).grants) == 64
    with pytest.raises(ValidationError):
        IssuePrincipal.model_validate({"principal": "alice", "grants": [*grants, "p64@s"]})


@pytest.mark.parametrize("body", [
    {"principal": "Alice", "grants": []},
    {"principal": "-alice", "grants": []},
    {"principal": "alice"},
    {"principal": "alice", "grants": [], "extra": 1},
    {"principal": "alice", "grants": "a@b"},
])
def test_issue_inputs_refused(body):
    with pytest.raises(ValidationError):
        IssuePrincipal.model_validate(body)


@pytest.mark.parametrize("kind", ["kubernetes", "slurm", "openstack"])
def test_site_kinds(kind):
    assert RegisterSite.model_validate({"name": "k8s", "kind": kind}).kind == kind


@pytest.mark.parametrize("body", [{"name": "k8s", "kind": "k8s"}, {"name": "k8s", "kind": "Kubernetes"},
                                  {"name": "K8s", "kind": "slurm"}, {"name": "k8s"},
                                  {"name": "k8s", "kind": "slurm", "x": 1}])
def test_register_site_refused(body):
    with pytest.raises(ValidationError):
        RegisterSite.model_validate(body)


def test_path_parameters():
    assert TenantPath.model_validate({"tenant": "acme"}).tenant == "acme"
    assert PrincipalPath.model_validate({"tenant": "acme", "principal": "alice"}).principal == "alice"
    for bad in ({"tenant": "ACME"}, {"tenant": "a" * 64}, {"tenant": "a_b"}):
        with pytest.raises(ValidationError):
            TenantPath.model_validate(bad)
    with pytest.raises(ValidationError):
        PrincipalPath.model_validate({"tenant": "acme", "principal": "al/ice"})
