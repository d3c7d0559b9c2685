"""GET /resource-provisioning/{site}/retained-accounts: fences, revision, Site isolation, faults."""

from __future__ import annotations

import pytest

from chalicelib.errors import Unavailable
from chalicelib.retained.service import get_retained_accounts
from chalicelib.runtime import use_services
from tests.support import factories as f
from tests.support.faults import unreachable
from tests.support.view_factories import (
    OTHER_PARTY,
    PARTY,
    item_event,
    membership_event,
    post_events,
    site_binding_event,
)

PATH = "/resource-provisioning/{site}/retained-accounts"
KEPT = {"projectId": f.PROJECT, "partyId": PARTY, "bindingId": "sb-1", "generation": 2}


def retained(api, site="k8s"):
    answer = api.get(PATH.format(site=site), key=site)
    assert answer.status == 200, answer.body
    return answer.body


def baseline(api, site="k8s"):
    """One required item whose account is kept: active Project, established binding, member generation 2."""
    post_events(api, f.project_event(management_generation=5), site_binding_event(site=site),
                membership_event(generation=2), item_event(site=site, generation=2, management_generation=5))


FENCES = [
    ("project_closed", [f.project_event(state="closed", management_generation=5, revision=2)]),
    ("management_generation_moved", [f.project_event(management_generation=6, revision=2)]),
    ("binding_retired", [site_binding_event(state="retired", revision=2)]),
    ("newer_membership_generation", [membership_event(generation=3, revision=2)]),
    ("item_no_longer_required", [item_event(generation=2, management_generation=5, required=False, revision=2)]),
]


@pytest.mark.parametrize(("fence", "events"), FENCES, ids=[x[0] for x in FENCES])
def test_each_fence_removes_the_account_and_moves_the_revision(api, fence, events):
    baseline(api)
    before = retained(api)
    assert before["accounts"] == [KEPT]
    post_events(api, *events)
    after = retained(api)
    assert after["accounts"] == []
    assert after["revision"] > before["revision"]


MISSING = [
    ("project_unknown", [site_binding_event(), membership_event(generation=2)]),
    ("binding_missing", [f.project_event(management_generation=5), membership_event(generation=2)]),
    ("binding_at_the_other_site_only", [f.project_event(management_generation=5), membership_event(generation=2),
                                        site_binding_event(site="slurm")]),
]


@pytest.mark.parametrize(("fence", "view"), MISSING, ids=[x[0] for x in MISSING])
def test_missing_view_entities_fence(api, fence, view):
    post_events(api, *view, item_event(generation=2, management_generation=5))
    assert retained(api)["accounts"] == []


NOT_FENCES = [
    ("party_merely_left", [membership_event(generation=2, state="left", revision=2)]),
    ("older_membership_generation", [membership_event(generation=1, revision=2)]),
    ("binding_renewed", [site_binding_event(binding_id="sb-2", revision=2)]),
    ("other_site_binding_retired", [site_binding_event(site="slurm", state="retired")]),
    ("another_project_closed", [f.project_event(project_id=f.OTHER_PROJECT, state="closed")]),
]


@pytest.mark.parametrize(("case", "events"), NOT_FENCES, ids=[x[0] for x in NOT_FENCES])
def test_what_does_not_fence(api, case, events):
    baseline(api)
    post_events(api, *events)
    expected = {**KEPT, "bindingId": "sb-2"} if case == "binding_renewed" else KEPT
    assert retained(api)["accounts"] == [expected]


def test_revision_is_zero_until_the_sites_first_item(api):
    assert retained(api) == {"revision": 0, "accounts": []}
    post_events(api, f.project_event(), site_binding_event(), membership_event(), item_event(site="slurm"))
    assert retained(api) == {"revision": 0, "accounts": []}  # another Site's item
    post_events(api, item_event(item_id="x", required=False))
    first = retained(api)
    assert first["revision"] >= 1 and first["accounts"] == []


def test_revision_rises_with_every_item_change_and_is_stable_otherwise(api):
    baseline(api)
    first = retained(api)
    assert retained(api) == first  # nothing changed: same revision, same list
    post_events(api, item_event(item_id="item-2", generation=2, management_generation=5))  # list unchanged
    second = retained(api)
    assert second["accounts"] == first["accounts"] and second["revision"] > first["revision"]
    post_events(api, item_event(item_id="item-2", generation=2, management_generation=5))  # a duplicate: ignored
    assert retained(api) == second


def test_a_revision_never_denotes_two_lists(api):
    """Flip the view back and forth: every list change shows a new revision, and old ones never return."""
    baseline(api)
    lists: dict[int, list] = {}
    last = -1
    for revision, state in enumerate(["retired", "established", "retired", "established"], start=2):
        answer = retained(api)
        assert answer["revision"] > last
        assert lists.setdefault(answer["revision"], answer["accounts"]) == answer["accounts"]
        last = answer["revision"]
        post_events(api, site_binding_event(state=state, revision=revision))
    final = retained(api)
    assert final["revision"] > last and final["accounts"] == [KEPT]


def test_two_sites_never_see_each_others_items(api):
    baseline(api, site="k8s")
    post_events(api, site_binding_event(party_id=OTHER_PARTY, site="slurm", binding_id="sb-s"),
                membership_event(party_id=OTHER_PARTY),
                item_event(item_id="s-1", site="slurm", party_id=OTHER_PARTY, management_generation=5))
    assert retained(api, "k8s")["accounts"] == [KEPT]
    assert retained(api, "slurm")["accounts"] == [
        {"projectId": f.PROJECT, "partyId": OTHER_PARTY, "bindingId": "sb-s", "generation": 1}]
    assert api.get(PATH.format(site="slurm"), key="k8s").status == 401


def test_unreachable_store_is_503(api, services):
    baseline(api)
    retained(api)
    use_services(unreachable(services))
    try:
        answer = api.get(PATH.format(site="k8s"), key="k8s")
    finally:
        use_services(services)
    assert answer.status == 503 and answer.body == {"code": "unavailable"}


def test_a_list_beyond_the_contracts_maximum_is_unavailable_never_a_cut_list(api, services):
    baseline(api)
    post_events(api, site_binding_event(party_id=OTHER_PARTY), membership_event(party_id=OTHER_PARTY),
                item_event(item_id="item-2", party_id=OTHER_PARTY, management_generation=5))
    before = retained(api)
    assert len(before["accounts"]) == 2
    with pytest.raises(Unavailable):
        get_retained_accounts(services, "k8s", limit=1)  # the contract's 10,000, scaled down
    assert retained(api) == before  # the refused read claimed nothing
