"""Round-trip budgets, counted with botocore's event hooks (not by reading code).

A budget only means something for the answer it was measured on: each one is checked
together with the status and outcome that request must get.
"""

from tests.integration.helpers import bind, send
from tests.support import factories as f


def trips(services, fn):
    services.round_trips.reset()
    answer = fn()
    return services.round_trips.total, dict(services.round_trips.calls), answer


def test_report_round_trip_budgets(api, services):
    bind(api)
    first = send(api, f.report("r0", observedAt="2026-03-01T10:00:00Z"))  # also warms the key cache
    assert first.status == 200

    steady, calls, answer = trips(services, lambda: send(api, f.report("r1", observedAt="2026-03-01T10:01:00Z")))
    assert (answer.status, answer.body["outcome"], answer.body["revision"]) == (200, "accepted", 1)
    assert steady <= 2, calls

    replay, calls, again = trips(services, lambda: send(api, f.report("r1", observedAt="2026-03-01T10:01:00Z")))
    assert (again.status, again.body) == (200, answer.body)
    assert replay <= 1, calls

    changed, calls, answer = trips(
        services, lambda: send(api, f.report("r2", observedAt="2026-03-01T10:02:00Z", paused=True)))
    assert (answer.status, answer.body["lifecycle"], answer.body["revision"]) == (200, "suspended", 2)
    assert changed <= 2, calls

    stale, calls, answer = trips(services, lambda: send(api, f.report("r3", observedAt="2026-03-01T09:00:00Z")))
    assert (answer.status, answer.body["rejection"]["code"]) == (422, "stale")
    assert stale <= 2, calls


def test_reads_cost_one_round_trip(api, services):
    bind(api)
    alloc = send(api, f.report("r0")).body["allocationId"]
    n, calls, answer = trips(services, lambda: api.get(f"/resource-provisioning/k8s/allocations/{alloc}", key="k8s"))
    assert (answer.status, answer.body["allocationId"]) == (200, alloc)
    assert n == 1, calls
    n, calls, answer = trips(services, lambda: api.get("/resource-provisioning/k8s/projects/wproj-1", key="k8s"))
    assert (answer.status, answer.body["projectId"]) == (200, f.PROJECT)
    assert n == 1, calls
