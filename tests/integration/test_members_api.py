"""GET /resource-provisioning/{site}/members/{username}: every condition, one 404 for every failure."""

from __future__ import annotations

import pytest

from chalicelib.runtime import use_services
from tests.support import factories as f
from tests.support.faults import unreachable
from tests.support.view_factories import (
    OTHER_PARTY,
    PARTY,
    allocate,
    membership_event,
    post_events,
    site_binding_event,
    username_event,
)

MEMBER = "/resource-provisioning/{site}/members/{username}?providerProjectRef={ref}"


def ask(api, site="k8s", username="alice", ref="wproj-1", key=None):
    return api.get(MEMBER.format(site=site, username=username, ref=ref), key=key or site)


def setup_member(api, site="k8s"):
    """A verified member with a site binding, in a Project with a live allocation at the Site."""
    allocate(api, site=site)
    post_events(api, username_event(site=site), membership_event(generation=3), site_binding_event(site=site))


def test_member_is_answered_when_every_condition_holds(api):
    setup_member(api)
    answer = ask(api)
    assert answer.status == 200
    assert answer.body == {"projectId": f.PROJECT, "partyId": PARTY, "bindingId": "sb-1", "bindingRevision": 1,
                           "generation": 3, "state": "active"}


def test_a_retired_binding_answers_state_retired_with_its_revision(api):
    setup_member(api)
    post_events(api, site_binding_event(binding_id="sb-2", state="retired", revision=4))
    assert ask(api).body == {"projectId": f.PROJECT, "partyId": PARTY, "bindingId": "sb-2", "bindingRevision": 4,
                             "generation": 3, "state": "retired"}


def _two_bindings(api):
    post_events(api, f.binding_event("pb-other", "wproj-1", project_id=f.OTHER_PROJECT))


def _binding_retired(api):
    post_events(api, f.binding_event("pb-wproj-1", "wproj-1", state="retired", revision=2))


def _no_allocation_here(api):
    pass  # the allocation is at the other Site (see setup below)


def _allocation_retired(api):
    allocate(api, providerState="Terminated", observedAt="2026-03-01T09:30:00Z")


def _allocation_moved_to_another_project(api):
    # Its latest accepted report names a provider ref bound to another Project.
    allocate(api, provider_ref="wproj-2", project_id=f.OTHER_PROJECT, observedAt="2026-03-01T09:30:00Z")


def _allocation_unbound(api):
    # Its latest accepted report names a ref that resolves to no Project.
    body = f.report(providerProjectRef="wproj-none", observedAt="2026-03-01T09:30:00Z",
                    configured={"cpu": 1}, applied={"cpu": 1})
    assert api.post("/resource-provisioning/k8s/reports", body, key="k8s").status == 200


def _username_unknown(api):
    pass  # asked below for another username


def _username_unverified(api):
    post_events(api, username_event(verified=False, revision=2))


def _username_of_another_party(api):
    post_events(api, username_event(party_id=OTHER_PARTY, revision=2))  # that Party is no member


def _membership_left(api):
    post_events(api, membership_event(generation=3, state="left", revision=2))


def _membership_missing(api):
    post_events(api, membership_event(project_id=f.OTHER_PROJECT))  # a membership elsewhere only
    post_events(api, username_event(party_id="55555555-5555-4555-8555-555555555555", revision=2))
    post_events(api, site_binding_event(party_id="55555555-5555-4555-8555-555555555555"))


def _site_binding_elsewhere_only(api):
    post_events(api, username_event(party_id="55555555-5555-4555-8555-555555555555", revision=2),
                membership_event(party_id="55555555-5555-4555-8555-555555555555"),
                site_binding_event(party_id="55555555-5555-4555-8555-555555555555", site="slurm"))


CAUSES = [
    ("ref_unknown", None, {"ref": "wproj-unknown"}),
    ("ref_claimed_by_two_projects", _two_bindings, {}),
    ("ref_binding_retired", _binding_retired, {}),
    ("no_allocation_at_this_site", _no_allocation_here, {}),
    ("allocation_retired", _allocation_retired, {}),
    ("allocation_now_of_another_project", _allocation_moved_to_another_project, {}),
    ("allocation_now_unbound", _allocation_unbound, {}),
    ("username_unknown", _username_unknown, {"username": "bob"}),
    ("username_unverified", _username_unverified, {}),
    ("username_of_a_non_member", _username_of_another_party, {}),
    ("membership_left", _membership_left, {}),
    ("membership_missing", _membership_missing, {}),
    ("no_site_binding_at_this_site", _site_binding_elsewhere_only, {}),
]


@pytest.mark.parametrize(("cause", "change", "query"), CAUSES, ids=[c[0] for c in CAUSES])
def test_every_failure_is_the_same_404(api, cause, change, query):
    if cause == "no_allocation_at_this_site":
        setup_member(api, site="slurm")  # the member and the allocation are at slurm only
        post_events(api, username_event())  # ... and the username exists at k8s too
    else:
        setup_member(api)
        assert ask(api).status == 200  # the baseline answers; only the change below breaks it
    if change is not None:
        change(api)
    answer = ask(api, **query)
    assert answer.status == 404 and answer.body == {"code": "not_found"}


def test_username_of_another_site_is_not_found(api):
    setup_member(api)
    post_events(api, username_event(username="carol", site="slurm"))
    assert ask(api, username="carol").status == 404


def test_a_site_key_never_reads_another_sites_members(api):
    setup_member(api, site="slurm")
    assert ask(api, site="slurm", key="k8s").status == 401
    assert ask(api, site="slurm").status == 200


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/resource-provisioning/k8s/members/alice", "missing_provider_project_ref"),
        ("/resource-provisioning/k8s/members/alice?providerProjectRef=", "invalid_provider_project_ref"),
        ("/resource-provisioning/k8s/members/alice?providerProjectRef=-bad", "invalid_provider_project_ref"),
        ("/resource-provisioning/k8s/members/-alice?providerProjectRef=wproj-1", "invalid_username"),
    ],
)
def test_malformed_parameters_are_400(api, path, code):
    setup_member(api)
    answer = api.get(path, key="k8s")
    assert answer.status == 400 and answer.body == {"code": code}


def test_unreachable_store_is_503(api, services):
    setup_member(api)
    use_services(unreachable(services))
    try:
        answer = ask(api)
    finally:
        use_services(services)
    assert answer.status == 503 and answer.body == {"code": "unavailable"}
