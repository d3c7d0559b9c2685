"""The view: event intake (validation, revision ordering) and Project resolution."""

import pytest

from chalicelib.store.codec import from_item
from chalicelib.view.events import EVENT_ADAPTER
from chalicelib.view.intake import _attributes
from tests.integration.helpers import EVENTS, bind
from tests.support import factories as f


def post_events(api, events):
    return api.post(EVENTS, {"events": events}, key="service")


def project_of(api, ref, site="k8s"):
    return api.get(f"/resource-provisioning/{site}/projects/{ref}", key=site)


def test_binding_alone_resolves(api):
    bind(api, ref="wp-1")
    answer = project_of(api, "wp-1")
    assert (answer.status, answer.body) == (200, {"projectId": f.PROJECT})
    assert project_of(api, "wp-1", site="slurm").body == {"projectId": f.PROJECT}


def test_closed_project_still_resolves(api):
    bind(api, ref="wp-1")
    assert post_events(api, [f.project_event(state="closed")]).body == {"applied": 1, "ignored": 0}
    assert project_of(api, "wp-1").body == {"projectId": f.PROJECT}


def test_unknown_and_ambiguous_refs_are_404(api):
    assert project_of(api, "wp-unknown").status == 404
    bind(api, ref="wp-2", binding_id="b-1")
    bind(api, ref="wp-2", binding_id="b-2")  # same Project twice is still two bindings
    assert (project_of(api, "wp-2").status, project_of(api, "wp-2").body) == (404, {"code": "not_found"})
    bind(api, ref="wp-2", binding_id="b-2", state="retired", revision=2)
    assert project_of(api, "wp-2").status == 200


def test_retired_binding_does_not_resolve(api):
    bind(api, ref="wp-1")
    bind(api, ref="wp-1", state="retired", revision=2)
    assert project_of(api, "wp-1").status == 404


def test_a_binding_that_moves_to_another_ref_leaves_the_old_one(api):
    bind(api, ref="wp-1")
    bind(api, ref="wp-9", revision=2)
    assert project_of(api, "wp-1").status == 404
    assert project_of(api, "wp-9").body == {"projectId": f.PROJECT}


def test_older_and_duplicate_events_are_ignored(api):
    newer = f.binding_event("b-1", "wp-1", state="retired", revision=5)
    older = f.binding_event("b-1", "wp-1", state="established", revision=4)
    assert post_events(api, [newer, older, newer]).body == {"applied": 1, "ignored": 2}
    assert project_of(api, "wp-1").status == 404
    assert post_events(api, [f.project_event(revision=3), f.project_event(revision=3)]).body == {
        "applied": 1, "ignored": 1}


def test_malformed_provider_project_ref_is_400(api):
    assert project_of(api, "-bad").status == 400
    assert project_of(api, "a" * 129).status == 400


@pytest.mark.parametrize(
    "batch",
    [
        {"events": [{"type": "mystery", "revision": 1}]},
        {"events": [{**f.project_event(), "revision": 0}]},
        {"events": [{**f.project_event(), "projectId": "not-an-id"}]},
        {"events": [{k: v for k, v in f.binding_event("b", "r").items() if k != "state"}]},
        {"events": [{**f.project_event(), "state": "open"}]},
        {"events": [{**f.project_event(), "revision": "1"}]},
        {"events": [f.project_event()] * 501},
        {"events": {}},
        {"other": []},
        {},
    ],
)
def test_invalid_batches_apply_nothing(api, batch):
    valid_first = f.binding_event("b-x", "wp-x")
    events = batch.get("events")
    if isinstance(events, list):
        batch = {"events": [valid_first, *events]}
    answer = api.post(EVENTS, batch, key="service")
    assert answer.status == 400 and set(answer.body) == {"code"}
    assert project_of(api, "wp-x").status == 404  # nothing applied


def test_a_full_batch_of_500_is_accepted(api):
    events = [f.binding_event(f"b-{i}", f"wp-{i}", revision=1) for i in range(500)]
    assert post_events(api, events).body == {"applied": 500, "ignored": 0}


def test_all_event_types_are_accepted(api):
    party = "33333333-3333-4333-8333-333333333333"
    events = [
        f.project_event(),
        f.binding_event("b-1", "wp-1"),
        {"type": "party_site_binding", "bindingId": "sb-1", "partyId": party, "site": "k8s",
         "state": "established", "revision": 1},
        {"type": "username", "site": "k8s", "username": "alice", "partyId": party, "verified": True, "revision": 1},
        {"type": "membership", "projectId": f.PROJECT, "partyId": party, "generation": 1, "state": "member",
         "revision": 1},
        {"type": "accepted_item", "itemId": "it-1", "site": "k8s", "projectId": f.PROJECT, "partyId": party,
         "generation": 1, "managementGeneration": 1, "required": True, "revision": 1},
    ]
    assert post_events(api, events).body == {"applied": 6, "ignored": 0}
    assert post_events(api, events).body == {"applied": 0, "ignored": 6}


def test_sqs_messages_feed_the_same_intake(services):
    import json

    from chalicelib.view.sqs import consume

    envelope = {"version": "0", "detail-type": "beto.view", "source": "beto", "detail": f.binding_event("b", "wp-s")}
    batch = {"events": [f.project_event()]}
    result = consume(services, [json.dumps(envelope), json.dumps(batch), json.dumps(f.project_event(revision=2))])
    assert (result.applied, result.ignored) == (3, 0)


# --- what a stored item can hold (docs/limits-events.md) -----------------------------------------

LONGEST_OPAQUE = "o" * 128
LONGEST_EVENTS = [
    f.project_event(revision=9007199254740991, management_generation=9007199254740991),
    f.binding_event("b" * 128, "r" * 128, revision=9007199254740991),
    {"type": "party_site_binding", "bindingId": LONGEST_OPAQUE, "partyId": f.PROJECT, "site": "slurm",
     "state": "established", "revision": 9007199254740991},
    {"type": "username", "site": "slurm", "username": LONGEST_OPAQUE, "partyId": f.PROJECT, "verified": True,
     "revision": 9007199254740991},
    {"type": "membership", "projectId": f.PROJECT, "partyId": f.OTHER_PROJECT, "generation": 9007199254740991,
     "state": "member", "revision": 9007199254740991},
    {"type": "accepted_item", "itemId": LONGEST_OPAQUE, "site": "slurm", "projectId": f.PROJECT,
     "partyId": f.OTHER_PROJECT, "generation": 9007199254740991, "managementGeneration": 9007199254740991,
     "required": True, "revision": 9007199254740991},
]


def test_every_field_at_its_longest_is_stored(api):
    assert post_events(api, LONGEST_EVENTS).body == {"applied": 6, "ignored": 0}


PAST_BOUNDS = [(event, field) for event, field in zip(LONGEST_EVENTS, ["projectId", "providerProjectRef",
                                                                      "bindingId", "username", "partyId", "itemId"],
                                                      strict=True)]


@pytest.mark.parametrize(("event", "field"), PAST_BOUNDS, ids=[e["type"] for e in LONGEST_EVENTS])
def test_a_field_past_its_bound_is_400_before_anything_is_written(api, event, field):
    huge = {**event, field: "x" * 210_000}
    for _ in range(2):  # the same answer on a repeat: never a retryable 503
        answer = api.post(EVENTS, {"events": [f.binding_event("b-x", "wp-x"), huge]}, key="service")
        assert (answer.status, answer.body) == (400, {"code": "invalid_request"})
    assert project_of(api, "wp-x").status == 404  # nothing applied


def test_retired_bindings_never_grow_their_refs_item_past_the_item_limit(api):
    """Only established bindings are kept in a provider ref's item: however many bindings naming
    one ref have retired (each entry up to ~190 bytes: 2,300 of them passed DynamoDB's 400 KB,
    after which every event for the ref was 503 on every repeat), the ref still takes bindings."""
    retired = [f.binding_event(f"{n:04d}" + "b" * 124, "wp-full", state="retired") for n in range(2300)]
    for start in range(0, len(retired), 500):
        assert post_events(api, retired[start:start + 500]).status == 200
    assert project_of(api, "wp-full").status == 404
    answer = post_events(api, [f.binding_event("b-live", "wp-full")])
    assert (answer.status, answer.body) == (200, {"applied": 1, "ignored": 0})
    assert project_of(api, "wp-full").body == {"projectId": f.PROJECT}


STORED_ATTRIBUTES = {
    "project": {"projectId", "state", "managementGeneration"},
    "project_binding": {"bindingId", "projectId", "providerProjectRef", "state"},
    "party_site_binding": {"bindingId", "partyId", "site", "state"},
    "username": {"site", "username", "partyId", "verified"},
    "membership": {"projectId", "partyId", "generation", "state"},
    "accepted_item": {"itemId", "site", "projectId", "partyId", "generation", "managementGeneration", "required"},
}


@pytest.mark.parametrize("event", LONGEST_EVENTS, ids=[e["type"] for e in LONGEST_EVENTS])
def test_an_entity_is_stored_with_its_events_fields_by_their_contract_names(api, services, event):
    """The layout every reader of the view relies on (retained/reader.py, members, reports)."""
    post_events(api, [event])
    entity_key, _ = _attributes(EVENT_ADAPTER.validate_python(event))
    stored = from_item(services.client.get_item(TableName=services.table, Key=entity_key)["Item"])
    assert stored == {"pk": entity_key["pk"]["S"], "sk": entity_key["sk"]["S"], "revision": event["revision"],
                      **{name: event[name] for name in STORED_ATTRIBUTES[event["type"]]}}
