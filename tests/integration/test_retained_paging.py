"""The retained list when the store answers in pages or in part (issue 7 item 8: untested paths)."""

from __future__ import annotations

from tests.support import factories as f
from tests.support.faults import unprocessed_batch_reads
from tests.support.view_factories import PARTY, item_event, membership_event, post_events, site_binding_event

PATH = "/resource-provisioning/k8s/retained-accounts"
BATCH = 500  # the intake's largest batch


def retained(api):
    answer = api.get(PATH, key="k8s")
    assert answer.status == 200, answer.body
    return answer.body


def test_a_list_longer_than_any_store_page_is_complete(api):
    # 2,500 required items, each of its own account generation: more than one page of any read
    # the service makes (a Query page holds 2,000 items here, and a BatchGet 100 keys).
    count = 2500
    post_events(api, f.project_event(management_generation=5), site_binding_event())
    for start in range(0, count, BATCH):
        post_events(api, *[item_event(item_id=f"item-{i}", generation=i + 1, management_generation=5)
                           for i in range(start, min(start + BATCH, count))])
    body = retained(api)
    assert [a["generation"] for a in body["accounts"]] == list(range(1, count + 1))
    assert {(a["projectId"], a["partyId"], a["bindingId"]) for a in body["accounts"]} == {(f.PROJECT, PARTY, "sb-1")}
    # A fence applies across every page: generation 2,000 for the Party fences all items before it.
    post_events(api, membership_event(generation=2000))
    assert [a["generation"] for a in retained(api)["accounts"]] == list(range(2000, count + 1))


def test_a_batch_read_the_store_leaves_unprocessed_is_read_again(api, services):
    post_events(api, f.project_event(management_generation=5), site_binding_event(),
                membership_event(generation=2), item_event(generation=2, management_generation=5))
    expected = retained(api)
    assert len(expected["accounts"]) == 1
    with unprocessed_batch_reads(services.client, times=3) as seen:
        again = retained(api)
    assert seen[0] == 3, "the retained read made no batch read: this test no longer tests anything"
    assert again == expected


def test_a_batch_read_the_store_never_serves_is_503(api, services):
    post_events(api, f.project_event(management_generation=5), site_binding_event(),
                membership_event(generation=2), item_event(generation=2, management_generation=5))
    retained(api)
    with unprocessed_batch_reads(services.client) as seen:
        answer = api.get(PATH, key="k8s")
    assert seen[0] > 1, "the retained read gave up without reading again"
    assert (answer.status, answer.body) == (503, {"code": "unavailable"})
    assert retained(api)["accounts"] != []
