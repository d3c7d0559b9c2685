"""Store failures: 503 `unavailable`, nothing half-applied, and a repeat converges."""

import socket

import pytest
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError

from chalicelib.runtime import build_services, use_services
from tests.conftest import make_settings
from tests.integration.helpers import EVENTS, allocation, bind, send
from tests.support import factories as f
from tests.support.faults import THROTTLED, failing, store_answers


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dead_store(services):
    """The same service, pointed at a loopback port where nothing listens."""
    dead = build_services(make_settings(f"http://127.0.0.1:{closed_port()}", services.table,
                                        max_attempts=2, connect_timeout=0.5, read_timeout=0.5))
    use_services(dead)
    yield dead
    use_services(services)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/resource-provisioning/k8s/reports", f.report("r1")),
        ("GET", "/resource-provisioning/k8s/allocations/6f1b2a52-4c8e-5d0a-9b7e-3a1c2d4e5f60", None),
        ("GET", "/resource-provisioning/k8s/projects/wp-1", None),
        ("POST", EVENTS, {"events": [f.project_event()]}),
    ],
)
def test_unreachable_store_is_503(api, services, method, path, body):
    key = "service" if path == EVENTS else "k8s"
    api.get("/resource-provisioning/k8s/projects/warm-the-key-cache", key=key)
    dead = build_services(make_settings(f"http://127.0.0.1:{closed_port()}", services.table,
                                        max_attempts=2, connect_timeout=0.5, read_timeout=0.5))
    dead.authenticator = services.authenticator  # keys cached before the outage still authenticate
    use_services(dead)
    try:
        answer = api.request(method, path, key=key, json_body=body)
    finally:
        use_services(services)
    assert (answer.status, answer.body) == (503, {"code": "unavailable"})


def test_unknown_key_during_outage_is_503_not_401(api, dead_store):
    # The key cannot be checked: say so, rather than claim it is wrong.
    answer = api.post("/resource-provisioning/k8s/reports", f.report(), key="k8s")
    assert (answer.status, answer.body) == (503, {"code": "unavailable"})


def _fail(client, event_name, exc):
    def hook(**_):
        raise exc

    client.meta.events.register(event_name, hook, unique_id="fault")
    return lambda: client.meta.events.unregister(event_name, unique_id="fault")


@pytest.mark.parametrize(
    ("event_name", "fault"),
    [
        # the store is unreachable before the write: nothing is stored
        ("before-send.dynamodb.TransactWriteItems", EndpointConnectionError(endpoint_url="http://store")),
        # the write commits but its answer is lost: the repeat must not apply it again
        ("after-call.dynamodb.TransactWriteItems", ReadTimeoutError(endpoint_url="http://store")),
    ],
)
def test_a_failed_write_converges_on_repeat_to_exactly_one_application(api, services, event_name, fault):
    bind(api)
    send(api, f.report("r0", observedAt="2026-03-01T09:00:00Z"))
    restore = _fail(services.client, event_name, fault)
    try:
        failed = send(api, f.report("r1", paused=True))
    finally:
        restore()
    assert (failed.status, failed.body) == (503, {"code": "unavailable"})
    repeat = send(api, f.report("r1", paused=True))
    assert (repeat.status, repeat.body["lifecycle"], repeat.body["revision"]) == (200, "suspended", 2)
    assert allocation(api, repeat.body["allocationId"]).body["revision"] == 2  # 2, not 3
    assert send(api, f.report("r1", paused=True)).body == repeat.body


def test_intake_outage_midway_converges(api, services):
    events = [f.binding_event(f"b-{i}", f"wp-{i}") for i in range(10)]
    # The store goes away after five requests of the batch (retries included) and stays away.
    with failing(services.client, "TransactWriteItems", skip=5) as seen:
        first = api.post(EVENTS, {"events": events}, key="service")
    assert seen[0] > 5, "the fault never fired: the batch needed no more than five writes"
    assert (first.status, first.body) == (503, {"code": "unavailable"})
    applied_before = [i for i in range(10)
                      if api.get(f"/resource-provisioning/k8s/projects/wp-{i}", key="k8s").status == 200]
    assert len(applied_before) < 10, "everything was applied although the store went away"
    again = api.post(EVENTS, {"events": events}, key="service")
    assert again.status == 200
    assert again.body["applied"] + again.body["ignored"] == 10
    for i in range(10):
        assert api.get(f"/resource-provisioning/k8s/projects/wp-{i}", key="k8s").status == 200


@pytest.mark.parametrize("code", THROTTLED)
def test_a_throttled_write_is_503_with_nothing_applied(api, services, code):
    bind(api)
    first = send(api, f.report("r0", observedAt="2026-03-01T09:00:00Z"))
    with store_answers(services.client, "TransactWriteItems", code) as seen:
        throttled = send(api, f.report("r1", paused=True))
    assert seen[0] >= services.settings.max_attempts  # botocore retried it, then gave up
    assert (throttled.status, throttled.body) == (503, {"code": "unavailable"})
    before = allocation(api, first.body["allocationId"]).body
    assert (before["lifecycle"], before["revision"]) == ("ready", 1)  # nothing half-applied
    repeat = send(api, f.report("r1", paused=True))
    assert (repeat.status, repeat.body["lifecycle"], repeat.body["revision"]) == (200, "suspended", 2)


@pytest.mark.parametrize("code", THROTTLED)
def test_a_throttled_read_is_503(api, services, code):
    bind(api)
    alloc = send(api, f.report("r0")).body["allocationId"]
    with store_answers(services.client, "GetItem", code) as seen:
        answer = allocation(api, alloc)
    assert seen[0] >= services.settings.max_attempts
    assert (answer.status, answer.body) == (503, {"code": "unavailable"})
    assert allocation(api, alloc).status == 200


def test_a_throttle_that_clears_within_the_retries_is_invisible(api, services):
    bind(api)
    # One throttled answer, then the store takes the write: botocore's retry absorbs it.
    with store_answers(services.client, "TransactWriteItems", "ProvisionedThroughputExceededException",
                       times=1) as seen:
        answer = send(api, f.report("r0"))
    assert seen[0] == 2 and answer.status == 200
