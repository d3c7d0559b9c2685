"""Round-trip budgets, counted with botocore's event hooks (not by reading code)."""

from tests.integration.helpers import bind, send
from tests.support import factories as f


def trips(services, fn):
    services.round_trips.reset()
    fn()
    return services.round_trips.total, dict(services.round_trips.calls)


def test_report_round_trip_budgets(api, services):
    bind(api)
    send(api, f.report("r0", observedAt="2026-03-01T10:00:00Z"))  # also warms the key cache

    steady, calls = trips(services, lambda: send(api, f.report("r1", observedAt="2026-03-01T10:01:00Z")))
    assert steady <= 2, calls

    replay, calls = trips(services, lambda: send(api, f.report("r1", observedAt="2026-03-01T10:01:00Z")))
    assert replay <= 1, calls

    changed, calls = trips(services, lambda: send(api, f.report("r2", observedAt="2026-03-01T10:02:00Z", paused=True)))
    assert changed <= 2, calls

    stale, calls = trips(services, lambda: send(api, f.report("r3", observedAt="2026-03-01T09:00:00Z")))
    assert stale <= 2, calls


def test_reads_cost_one_round_trip(api, services):
    bind(api)
    alloc = send(api, f.report("r0")).body["allocationId"]
    n, _ = trips(services, lambda: api.get(f"/resource-provisioning/k8s/allocations/{alloc}", key="k8s"))
    assert n == 1
    n, _ = trips(services, lambda: api.get("/resource-provisioning/k8s/projects/wproj-1", key="k8s"))
    assert n == 1
