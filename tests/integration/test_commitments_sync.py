"""The commitment sync pass end to end: the fake OpenStack over HTTP, fleet pools, Placement and the
reservations on the integration store (DynamoDB Local). One test per rule of issue 10's "Done when"."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from chalicelib.commitments.models import SYNCER_USER
from chalicelib.commitments.pools import FleetPoolSource
from chalicelib.commitments.service import SyncSettings, run_pass, sync
from chalicelib.commitments.store import CommitmentStore
from chalicelib.commitments.upstream import OpenStackClient
from chalicelib.placement.models import ConsumerWrite
from tests.support.commitments import LARGE, PASSWORD, SMALL, TENANT, commitment, sync_world, world
from tests.support.faults import failing


def uuid(n: int) -> str:
    return f"c0ffee00-0000-4000-8000-{n:012d}"


def allocations(w: Any, n: int) -> dict[str, dict[str, int]] | None:
    consumer = w.consumer(uuid(n))
    return None if consumer is None else consumer.allocations


@pytest.fixture
def counted(services):
    """Every DynamoDB write call the pass makes, by operation (counted on the wire)."""
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def count(model: Any, **_: Any) -> None:
        with lock:
            seen[model.name] = seen.get(model.name, 0) + 1

    for op in ("PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"):
        services.client.meta.events.register(f"before-call.dynamodb.{op}", count)
    yield seen


# --- status, expiry, subtraction, selection -------------------------------------------------------------


def test_status_table(services) -> None:
    now = int(time.time())
    listed = [
        commitment(1, status="confirmed"),
        commitment(2, status="guaranteed", confirmed_at=None, confirm_by=now + 86400),
        commitment(3, status="pending", confirmed_at=None),
        commitment(4, status="planned", confirmed_at=None, confirm_by=now + 86400),
        commitment(5, status="superseded"),
        commitment(6, status="expired"),
        # Older Limes: no status; derived as Limes does.
        commitment(7, status=None, confirmed_at=None, confirm_by=now + 86400),  # planned
        commitment(8, status=None, confirmed_at=None),  # pending
        commitment(9, status=None),  # confirmed
        commitment(10, status="frobnicated"),  # unknown: skipped, nothing recorded
    ]
    with sync_world(services, world({"p1": listed})) as w:
        w.pool("a")
        run = w.run()
        records = w.reservations()
    assert run["outcome"] == "ok", run
    status = {n: records[uuid(n)]["status"] for n in range(1, 10)}
    assert status == {1: "held", 2: "held", 3: "pending", 4: "planned", 5: "released", 6: "released",
                      7: "planned", 8: "pending", 9: "held"}
    assert records[uuid(5)]["reason"] == "superseded" and records[uuid(6)]["reason"] == "expired"
    assert uuid(10) not in records
    counts = run["counts"]
    assert (counts["held"], counts["pending"], counts["planned"], counts["released"]) == (3, 2, 2, 2)
    assert counts["commitments"] == 10 and counts["skipped"] == {"unknown_status": 1}
    # Only the holding ones are Placement consumers: user commitments-syncer, the commitment's project,
    # per-instance x remaining on the pool's provider.
    for n in (1, 2, 9):
        consumer = w.consumer(uuid(n))
        assert (consumer.user_id, consumer.project_id) == (SYNCER_USER, "p1")
        assert consumer.allocations == {w.pools["a"]: {"VCPU": 4, "MEMORY_MB": 4096, "DISK_GB": 40}}
    for n in (3, 4, 5, 6, 7, 8):
        assert w.consumer(uuid(n)) is None
    assert records[uuid(1)] | {"revision": 0} == {
        "commitmentUuid": uuid(1), "commitmentId": 1, "projectId": "p1", "domainId": "d1",
        "availabilityZone": "az1", "flavor": "m1.small", "amount": 2, "matched": 0, "remaining": 2,
        "resources": {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20}, "status": "held", "reason": "capacity_held",
        "pool": w.pools["a"], "expiresAt": records[uuid(1)]["expiresAt"], "limesStatus": "confirmed",
        "missingPasses": 0, "creator": "commitments syncer", "revision": 0}


def test_expiry_by_time_wins_over_the_status(services) -> None:
    now = int(time.time())
    listed = [commitment(1, expires_at=now - 5), commitment(2, expires_at=now + 600)]
    with sync_world(services, world({"p1": listed})) as w:
        w.pool("a")
        first = w.run()
        records = w.reservations()
        # Never needed capacity: recorded released, nothing held.
        assert (records[uuid(1)]["status"], records[uuid(1)]["reason"]) == ("released", "expired")
        assert w.consumer(uuid(1)) is None
        assert records[uuid(2)]["status"] == "held" and allocations(w, 2)
        # An hour later Limes still says confirmed, but expires_at has passed: released, allocation deleted.
        w.clock = lambda: time.time() + 3600
        second = w.run()
        assert w.reservations()[uuid(2)]["status"] == "released"
        assert w.reservations()[uuid(2)]["reason"] == "expired"
        assert w.consumer(uuid(2)) is None
    assert first["outcome"] == second["outcome"] == "ok"


def test_az_aware_subtraction_and_clamping(services) -> None:
    servers = [
        # p1/az1: three small servers (any status), one large; p1/az2: one small
        {"id": "s1", "tenant_id": "p1", "availability_zone": "az1", "flavor": "m1.small", "status": "SHUTOFF"},
        {"id": "s2", "tenant_id": "p1", "availability_zone": "az1", "flavor": "m1.small", "status": "ERROR"},
        {"id": "s3", "tenant_id": "p1", "availability_zone": "az1", "flavor": "m1.small"},
        {"id": "s4", "tenant_id": "p1", "availability_zone": "az1", "flavor": "m1.large"},
        {"id": "s5", "tenant_id": "p1", "availability_zone": "az2", "flavor": "m1.small"},
        {"id": "s6", "tenant_id": "p2", "availability_zone": "az2", "flavor": "m1.small"},  # another project
    ]
    listed = [
        commitment(1, az="az1", amount=2),  # takes s1, s2: fully used
        commitment(2, az="az1", amount=2),  # takes s3 only (s1, s2 counted once): 1 remaining
        commitment(3, az="az2", amount=3),  # takes s5 (not s6 of p2): 2 remaining
        commitment(4, az="az1", amount=1, flavor="m1.large"),  # takes s4: fully used
    ]
    with sync_world(services, world({"p1": listed}, servers=servers)) as w:
        w.pool("a1", "az1")
        w.pool("a2", "az2")
        run = w.run()
        records = w.reservations()
        assert [(records[uuid(n)]["matched"], records[uuid(n)]["remaining"], records[uuid(n)]["status"])
                for n in (1, 2, 3, 4)] == [(2, 0, "released"), (1, 1, "held"), (1, 2, "held"), (1, 0, "released")]
        assert records[uuid(1)]["reason"] == "fully_used"
        assert allocations(w, 2) == {w.pools["a1"]: {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20}}
        assert allocations(w, 3) == {w.pools["a2"]: {"VCPU": 4, "MEMORY_MB": 4096, "DISK_GB": 40}}
        # More servers than committed: clamped at 0, and the release deletes the allocation.
        more = [*servers, *({"id": f"s9{i}", "tenant_id": "p1", "availability_zone": "az1",
                            "flavor": "m1.small"} for i in range(5))]
        w.reload(world({"p1": listed}, servers=more))
        w.run()
        records = w.reservations()
        assert (records[uuid(2)]["remaining"], records[uuid(2)]["status"]) == (0, "released")
        assert w.consumer(uuid(2)) is None
    assert run["outcome"] == "ok"


def test_uuids_sharing_a_cortex_prefix_are_separate_reservations(services) -> None:
    # Cortex names reservations commitment-<uuid[:5]>-<n>: these two would collide there.
    a, b = "abcde000-1111-4111-8111-000000000001", "abcde000-2222-4222-8222-000000000002"
    listed = [commitment(1, uuid=a, amount=1), commitment(2, uuid=b, amount=3, flavor="m1.large")]
    with sync_world(services, world({"p1": listed})) as w:
        pool = w.pool("a")
        w.run()
        records = w.reservations()
        assert records[a]["status"] == records[b]["status"] == "held"
        assert w.consumer(a).allocations == {pool: {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20}}
        # Boot from volume (disk 0): DISK_GB left out of the allocation.
        assert w.consumer(b).allocations == {pool: {"VCPU": 24, "MEMORY_MB": 24576}}


def test_unknown_flavor_and_other_resources_are_skipped_and_counted(services) -> None:
    listed = [commitment(1, flavor="m9.gone"), commitment(2, resource_name="cores"), commitment(3)]
    with sync_world(services, world({"p1": listed})) as w:
        w.pool("a")
        run = w.run()
        records = w.reservations()
    assert run["counts"]["skipped"] == {"not_instances": 1, "unknown_flavor": 1}
    assert set(records) == {uuid(3)}


def test_a_limes_404_for_a_new_project_is_no_commitments(services) -> None:
    raw = world({"p1": [commitment(1)]}, limes_unknown_projects=["p3"])
    with sync_world(services, raw) as w:
        w.pool("a")
        run = w.run()
        assert run["outcome"] == "ok"
        assert run["counts"]["limesNotFound"] == 1 and run["counts"]["projects"] == 3
        assert w.reservations()[uuid(1)]["status"] == "held"


# --- failing closed, re-auth, nothing changed -------------------------------------------------------------


def _table_state(w: Any) -> tuple[Any, ...]:
    records = w.reservations()
    return records, {u: (c.generation, c.allocations) for u in records if (c := w.consumer(u)) is not None}


def test_nova_500_fails_closed_nothing_changes(services) -> None:
    with sync_world(services, world({"p1": [commitment(1), commitment(2)]})) as w:
        w.pool("a")
        assert w.run()["outcome"] == "ok"
        before = _table_state(w)
        # Upstream changed (one commitment gone, one grown), but Nova fails after retries: nothing moves.
        w.reload(world({"p1": [commitment(2, amount=5)]},
                       faults=[{"endpoint": "nova.servers", "status": 500}]))
        run = w.run()
        assert (run["outcome"], run["counts"]["writes"]) == ("failed", 0)
        assert run["error"] == "upstream: compute: unexpected answer (HTTP 500)"
        assert _table_state(w) == before
        runs = w.store.runs(5)
        assert [r["outcome"] for r in runs] == ["failed", "ok"]  # newest first, the failure recorded


def test_a_refused_authentication_leaves_no_secret_in_the_run(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        run = w.run(w.config(password="wrong-" + PASSWORD))
        assert run["outcome"] == "failed"
        stored = w.store.runs(1)[0]
    assert PASSWORD not in repr(run) and PASSWORD not in repr(stored)


def test_token_expiry_mid_pass_re_authenticates(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)], "p2": [commitment(2, "p2")]},
                                    token_max_uses=3)) as w:
        w.pool("a")
        # Each token answers 3 calls, then 401 (expiry without waiting); the pass makes 7 API calls.
        run = w.run(w.config(concurrency=1))
        tokens = len(w.fake.app.tokens_issued)
    assert run["outcome"] == "ok" and run["counts"]["held"] == 2
    assert tokens >= 3


def test_a_second_pass_over_an_unchanged_world_writes_nothing(services, counted) -> None:
    listed = [commitment(1), commitment(2, status="pending", confirmed_at=None), commitment(3, status="expired")]
    with sync_world(services, world({"p1": listed})) as w:
        w.pool("a")
        first = w.run()
        before = _table_state(w)
        counted.clear()
        second = w.run()
        assert _table_state(w) == before
    assert first["counts"]["writes"] == 4  # 3 records + 1 Placement transaction
    assert second["outcome"] == "ok" and second["counts"]["writes"] == 0
    # On the wire: the lease taken (the store's one lease helper: an UpdateItem) and given back, the run record;
    # no reservation, no Placement write.
    assert counted == {"UpdateItem": 1, "PutItem": 1, "DeleteItem": 1}


# --- releases, pools, conflicts ---------------------------------------------------------------------------


def test_two_pass_release_of_a_commitment_missing_from_limes(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)], "p2": [commitment(2, "p2")]})) as w:
        w.pool("a")
        w.run()
        # Limes stops listing 1 (p1 answers empty) and Keystone stops listing p2.
        w.reload(world({"p1": []}, projects=[{"id": "p1", "name": "proj-1", "domain_id": "d1"}]))
        w.run()
        records = w.reservations()
        assert [(records[uuid(n)]["status"], records[uuid(n)]["missingPasses"]) for n in (1, 2)] == [
            ("held", 1), ("held", 1)]
        assert allocations(w, 1) and allocations(w, 2)  # one answer cannot free capacity
        w.run()
        records = w.reservations()
        assert [(records[uuid(n)]["status"], records[uuid(n)]["reason"]) for n in (1, 2)] == [
            ("released", "missing_from_limes"), ("released", "project_gone")]
        assert w.consumer(uuid(1)) is None and w.consumer(uuid(2)) is None


def test_listed_again_after_one_missing_pass_keeps_the_hold(services) -> None:
    raw = world({"p1": [commitment(1)]})
    with sync_world(services, raw) as w:
        w.pool("a")
        w.run()
        generation = w.consumer(uuid(1)).generation
        w.reload(world({"p1": []}, limes_unknown_projects=["p1"]))  # a 404 counts as an empty answer
        w.run()
        assert w.reservations()[uuid(1)]["missingPasses"] == 1
        w.reload(raw)
        w.run()
        record = w.reservations()[uuid(1)]
        assert (record["status"], record["missingPasses"]) == ("held", 0)
        assert w.consumer(uuid(1)).generation == generation


def test_pool_full_is_unplaced_then_held_once_capacity_is_added(services) -> None:
    with sync_world(services, world({"p1": [commitment(1, amount=4)]})) as w:
        w.pool("small", VCPU=4, MEMORY_MB=65536, DISK_GB=1000)  # 4 instances need 8 VCPU
        w.pool("other-az", "az2")
        run = w.run()
        record = w.reservations()[uuid(1)]
        assert (record["status"], record["reason"], run["counts"]["unplaced"]) == ("unplaced", "no_room", 1)
        assert w.consumer(uuid(1)) is None
        w.resize("small", VCPU=8, MEMORY_MB=65536, DISK_GB=1000)
        w.run()
        assert w.reservations()[uuid(1)]["status"] == "held"
        assert allocations(w, 1) == {w.pools["small"]: {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 80}}


def test_no_active_pool_in_the_az_is_unplaced(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        w.pool("gone")
        w.archive("gone")
        w.pool("elsewhere", "az2")
        w.run()
        record = w.reservations()[uuid(1)]
    assert (record["status"], record["reason"]) == ("unplaced", "no_pool")


def test_a_foreign_consumer_with_the_uuid_is_a_conflict_left_alone(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        pool = w.pool("a")
        w.placement.write_allocations([ConsumerWrite(
            uuid=uuid(1), project_id="p1", user_id="someone-else", allocations={pool: {"VCPU": 1}},
            generation=None, check_generation=True)], single=True)
        run = w.run()
        record = w.reservations()[uuid(1)]
        consumer = w.consumer(uuid(1))
    assert (record["status"], record["reason"], run["counts"]["conflicts"]) == ("conflict", "foreign_consumer", 1)
    assert (consumer.user_id, consumer.generation, consumer.allocations) == ("someone-else", 1, {pool: {"VCPU": 1}})


# --- concurrency and crashes ------------------------------------------------------------------------------


def test_concurrent_passes_one_runs_the_other_is_skipped(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        w.pool("a")
        start = threading.Barrier(2)
        one_returned = threading.Event()
        results: list[dict[str, Any]] = []
        lock = threading.Lock()
        config = w.config()

        def fetch() -> Any:
            # The lease holder waits here until the other pass has returned: if both held the lease,
            # both would wait until the timeout and both would end `ok`.
            one_returned.wait(timeout=20)
            return OpenStackClient(config).fetch()

        def one_pass() -> None:
            start.wait()
            run = run_pass(w.store, w.placement, fetch, FleetPoolSource(services.client, services.table), TENANT)
            with lock:
                results.append(run)
            one_returned.set()

        threads = [threading.Thread(target=one_pass) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert sorted(r["outcome"] for r in results) == ["ok", "skipped"]
        skipped = next(r for r in results if r["outcome"] == "skipped")
        assert skipped["counts"]["writes"] == 0
        # The lease was given back: the next pass runs.
        assert w.run()["outcome"] == "ok"
        assert sorted(r["outcome"] for r in w.store.runs(10)) == ["ok", "ok", "skipped"]


def test_an_expired_lease_is_taken_over(services) -> None:
    with sync_world(services, world({"p1": []})) as w:
        assert w.store.take_lease("crashed-pass", time.time(), 900)
        assert w.run()["outcome"] == "skipped"
        w.clock = lambda: time.time() + 901
        assert w.run()["outcome"] == "ok"


def test_a_crash_between_the_placement_write_and_the_record_converges(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        pool = w.pool("a")
        # The lease is an UpdateItem; the reservation write (the pass's first PutItem) and all after it fail on the
        # wire.
        with failing(services.client, "PutItem", skip=0):
            crashed = w.run()
        assert (crashed["outcome"], crashed["error"]) == ("failed", "store unavailable")
        assert crashed["counts"]["writes"] == 1  # the Placement transaction, made before the failure
        consumer = w.consumer(uuid(1))
        assert consumer.allocations == {pool: {"VCPU": 4, "MEMORY_MB": 4096, "DISK_GB": 40}}
        assert w.reservations() == {}
        # The next pass adopts the consumer (ours, exactly what it would write): one record write, no Placement write.
        run = w.run()
        assert (run["outcome"], run["counts"]["writes"], run["counts"]["held"]) == ("ok", 1, 1)
        assert w.reservations()[uuid(1)]["pool"] == pool
        assert w.consumer(uuid(1)).generation == consumer.generation


def test_a_missing_tenant_setting_fails_the_pass(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        run = w.run(tenant=None)
    assert (run["outcome"], run["error"]) == ("failed", "configuration: RP_COMMITMENTS_TENANT is required")


def test_a_lease_term_that_cannot_be_read_fails_the_pass_naming_the_variable(services, monkeypatch) -> None:
    monkeypatch.setenv("RP_COMMITMENTS_TENANT", TENANT)
    monkeypatch.setenv("RP_COMMITMENTS_LEASE_SECONDS", "soon")
    run = sync(services)
    assert (run["outcome"], run["error"]) == (
        "failed", "configuration: RP_COMMITMENTS_LEASE_SECONDS must be a number (seconds)")
    assert CommitmentStore(services.client, services.table).runs(1)[0]["runId"] == run["runId"]  # recorded
    assert CommitmentStore(services.client, services.table).lease_until() is None  # no lease was taken


def test_a_concurrency_that_cannot_be_read_fails_the_pass_naming_the_variable(services, monkeypatch) -> None:
    for variable, value in (("RP_OPENSTACK_AUTH_URL", "http://127.0.0.1:9/v3"),
                            ("RP_OPENSTACK_APPLICATION_CREDENTIAL_ID", "ac-1"),
                            ("RP_OPENSTACK_APPLICATION_CREDENTIAL_SECRET", PASSWORD),
                            ("RP_COMMITMENTS_CONCURRENCY", "lots")):
        monkeypatch.setenv(variable, value)
    run = sync(services, SyncSettings(tenant=TENANT))
    assert (run["outcome"], run["error"]) == ("failed",
                                              "configuration: RP_COMMITMENTS_CONCURRENCY must be a whole number")
    assert "lots" not in str(run)


def test_settings_from_the_environment() -> None:
    settings = SyncSettings.from_env({"RP_COMMITMENTS_TENANT": "acme", "RP_COMMITMENTS_LEASE_SECONDS": "60"})
    assert (settings.tenant, settings.lease_seconds, settings.secret_id) == ("acme", 60.0, None)
    assert SMALL["name"] != LARGE["name"]


def test_released_reservations_expire_from_the_table_only_once_limes_forgets_them(services) -> None:
    from chalicelib.commitments.store import RELEASED_TTL_SECONDS, reservation_key

    expires = int(time.time()) + 86400 * 100
    servers = [{"id": "s1", "tenant_id": "p1", "availability_zone": "az1", "flavor": "m1.small"}]
    listed = [commitment(1, amount=1, expires_at=expires), commitment(2, status="superseded")]
    with sync_world(services, world({"p1": listed}, servers=servers)) as w:
        w.pool("a")
        before = int(time.time())
        w.run()

        def ttl(n: int) -> int | None:
            item = services.client.get_item(TableName=services.table, Key=reservation_key(uuid(n)),
                                            ConsistentRead=True)["Item"]
            return int(item["expiresAt"]["N"]) if "expiresAt" in item else None

        # Fully used but still listed: kept until 30 days after the commitment expires (never re-written).
        assert ttl(1) == expires + RELEASED_TTL_SECONDS
        # Superseded (Limes lists it no more): 30 days after the release.
        assert before + RELEASED_TTL_SECONDS <= ttl(2) <= int(time.time()) + RELEASED_TTL_SECONDS
        w.reload(world({"p1": [commitment(1, amount=3, expires_at=expires)]}, servers=servers))
        w.run()
        assert w.reservations()[uuid(1)]["status"] == "held" and ttl(1) is None


def test_an_unreachable_store_is_a_failed_run_not_an_exception(services) -> None:
    from tests.support.faults import unreachable

    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        w.services = unreachable(services)
        run = w.run()
    assert (run["outcome"], run["error"], run["counts"]["writes"]) == ("failed", "store unavailable", 0)


def test_a_hold_is_released_when_limes_says_superseded_or_waiting(services) -> None:
    with sync_world(services, world({"p1": [commitment(1), commitment(2)]})) as w:
        w.pool("a")
        w.run()
        assert allocations(w, 1) and allocations(w, 2)
        # A split: 1 listed superseded (released at once), 2 back to pending (released, stays released).
        w.reload(world({"p1": [commitment(1, status="superseded"),
                               commitment(2, status="pending", confirmed_at=None)]}))
        run = w.run()
        records = w.reservations()
        assert [(records[uuid(n)]["status"], records[uuid(n)]["reason"]) for n in (1, 2)] == [
            ("released", "superseded"), ("released", "pending_after_held")]
        assert w.consumer(uuid(1)) is None and w.consumer(uuid(2)) is None
        assert run["counts"]["writes"] == 4  # two records, two Placement deletes
        assert w.run()["counts"]["writes"] == 0  # no flapping back to `pending`


# --- issue 14: what the black-box pass found (the fake OpenStack over HTTP) -------------------------------


def test_a_listed_commitment_that_does_not_parse_is_skipped_never_released(services) -> None:
    with sync_world(services, world({"p1": [commitment(1, created_at="2026-01-01T00:00:00Z")]})) as w:
        w.pool("a")
        run = w.run()
        # created_at is never read: an ISO string there is no reason to skip anything.
        assert (run["counts"]["commitments"], run["counts"]["held"], run["counts"]["skipped"]) == (1, 1, {})
        held, consumer = w.reservations()[uuid(1)], w.consumer(uuid(1))
        w.reload(world({"p1": [commitment(1, amount="a few")]}))
        for _ in range(3):  # the two-pass rule released it on the second
            run = w.run()
            assert run["outcome"] == "ok"
            assert (run["counts"]["commitments"], run["counts"]["skipped"], run["counts"]["writes"]) == (
                1, {"malformed": 1}, 0)
        assert w.reservations()[uuid(1)] == held
        assert (w.consumer(uuid(1)).generation, w.consumer(uuid(1)).allocations) == (consumer.generation,
                                                                                     consumer.allocations)


def test_repeated_projects_commitments_and_servers_count_once(services) -> None:
    servers = [{"id": "s1", "tenant_id": "p1", "availability_zone": "az1", "flavor": "m1.small"}]
    raw = world({"p1": [commitment(1), commitment(1)]}, servers=servers + servers,
                page_size={"projects": 2}, page_overlap={"projects": 1})
    with sync_world(services, raw) as w:
        w.pool("a")
        run = w.run()
        record = w.reservations()[uuid(1)]
    assert (run["outcome"], run["counts"]["projects"], run["counts"]["commitments"]) == ("ok", 3, 1)
    assert (record["matched"], record["remaining"]) == (1, 1)
    assert w.consumer(uuid(1)).allocations == {w.pools["a"]: {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20}}


def test_a_pool_placement_refuses_is_passed_over_for_the_next(services) -> None:
    from chalicelib.placement.microversion import features
    from chalicelib.placement.models import Inventory

    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        first, second = w.pool("a"), w.pool("b")
        provider = w.placement.provider(first)
        vcpu = provider.inventories["VCPU"]
        w.placement.update_inventory(first, "VCPU", provider.generation,
                                     Inventory(total=vcpu.total, max_unit=2), features((1, 28)))  # the hold: VCPU 4
        run = w.run()
        record = w.reservations()[uuid(1)]
        assert (run["counts"]["held"], run["counts"]["skipped"]) == (1, {})
        assert (record["status"], record["pool"]) == ("held", second)
        assert w.consumer(uuid(1)).allocations == {second: {"VCPU": 4, "MEMORY_MB": 4096, "DISK_GB": 40}}
        assert w.run()["counts"]["writes"] == 0
        w.archive("b")
        w.run()
        record = w.reservations()[uuid(1)]
    # With none accepting: unplaced, and why (what we held on b stays, as for any unplaced hold).
    assert (record["status"], record["reason"], record["pool"]) == ("unplaced", "unit_constraints", second)


def test_a_server_of_another_project_in_novas_listing_is_not_subtracted(services) -> None:
    servers = [{"id": "s1", "tenant_id": "p2", "availability_zone": "az1", "flavor": "m1.small"}]
    raw = world({"p1": [commitment(1)]}, servers=servers,
                faults=[{"endpoint": "nova.servers", "ignore_tenant_filter": True}])
    with sync_world(services, raw) as w:
        w.pool("a")
        w.run()
        record = w.reservations()[uuid(1)]
    assert (record["matched"], record["remaining"], record["status"]) == (0, 2, "held")


def test_one_commitment_uuid_in_two_projects_is_a_conflict_left_alone(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        w.pool("a")
        w.run()
        consumer = w.consumer(uuid(1))
        w.reload(world({"p1": [commitment(1)], "p2": [commitment(1, "p2", amount=7)]}))
        run = w.run()
        record = w.reservations()[uuid(1)]
        assert (record["status"], record["reason"], record["projectId"]) == ("conflict", "uuid_in_several_projects",
                                                                             "p1")
        assert run["counts"]["conflicts"] == 1 and run["counts"]["held"] == 0
        assert (w.consumer(uuid(1)).generation, w.consumer(uuid(1)).allocations) == (consumer.generation,
                                                                                     consumer.allocations)
        assert w.run()["counts"]["writes"] == 0
        # A new UUID in two projects: recorded (the first project's listing), nothing held.
        w.reload(world({"p1": [commitment(2)], "p2": [commitment(2, "p2")]}))
        w.run()
        assert w.reservations()[uuid(2)]["status"] == "conflict" and w.consumer(uuid(2)) is None


def test_limes_404_for_every_project_fails_closed_while_reservations_are_kept(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        w.pool("a")
        w.run()
        before = _table_state(w)
        w.reload(world({"p1": [commitment(1)]}, limes_unknown_projects=["p1", "p2", "p3"]))
        for _ in range(2):  # two such passes released everything
            run = w.run()
            assert (run["outcome"], run["error"]) == ("failed", "upstream: every project answered 404")
        assert _table_state(w) == before
        # One project answering is an answer: the two-pass rule as ever.
        w.reload(world({"p1": []}, limes_unknown_projects=["p2", "p3"]))
        assert w.run()["outcome"] == "ok"
        assert w.reservations()[uuid(1)]["missingPasses"] == 1


# --- issue 14 item 11: the pass's read at make run's size, the lease renewed and given back ---------------------


def _attribute_values(value: Any) -> int:
    """AttributeValues in a low-level item or value: what the embedded store (moto) serializes one by one."""
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("M", "L"):
        inner = next(iter(value.values()))
        return 1 + sum(_attribute_values(v) for v in (inner.values() if isinstance(inner, dict) else inner))
    if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()) and not (
            len(value) == 1 and next(iter(value)) in ("S", "N", "BOOL", "NULL", "B", "SS", "NS")):
        return sum(_attribute_values(v) for v in value.values())
    return 1


def test_the_pass_reads_reservations_as_few_attribute_values_in_bounded_pages(services) -> None:
    # 500 reservations whose record was a map of 20 AttributeValues took the embedded store 2 s unloaded and
    # 12 s on a busy machine (past the 5 s read timeout): moto serializes AttributeValues one by one.
    from chalicelib.commitments.store import RESERVATIONS_PAGE

    pages: list[list[dict[str, Any]]] = []
    asked: list[dict[str, Any]] = []

    def seen(parsed: dict[str, Any], model: Any, **_: Any) -> None:
        pages.append(parsed.get("Items", []))

    def sent(params: dict[str, Any], **_: Any) -> None:
        asked.append(params)

    listed = [commitment(n, status="pending", confirmed_at=None) for n in range(1, 7)]
    with sync_world(services, world({"p1": listed})) as w:
        w.run()
        services.client.meta.events.register("after-call.dynamodb.Query", seen)
        services.client.meta.events.register("provide-client-params.dynamodb.Query", sent)
        stored = w.store.reservations()
    assert len(stored) == 6 and all(s.revision == 1 for s in stored.values())
    reservation_queries = [q for q in asked if q["ExpressionAttributeValues"][":pk"]["S"] == "CMTRES"]
    assert reservation_queries and all(q.get("Limit", 10**9) <= RESERVATIONS_PAGE for q in reservation_queries)
    items = [item for page in pages for item in page]
    assert len(items) == 6 and max(_attribute_values(item) for item in items) <= 3, items[0]


def test_reservations_stored_with_a_record_map_are_still_read_and_listed(services) -> None:
    from chalicelib.commitments.store import reservation_key
    from chalicelib.store.codec import to_item

    with sync_world(services, world({"p1": [commitment(1, status="pending", confirmed_at=None)]})) as w:
        w.run()
        new = w.store.reservations()[uuid(1)]
        # As written before issue 14: the record a map, no top-level status.
        services.client.put_item(TableName=services.table, Item={**reservation_key(uuid(1)), **to_item({
            "kind": "commitment-reservation", "record": new.record.to_dict(), "revision": 1,
            "gsi1pk": "CMTRESP#p1", "gsi1sk": f"pending#{uuid(1)}"})})
        assert w.store.reservations()[uuid(1)] == new
        assert [s.record for s in w.store.reservation_page(None, "pending", None)[0]] == [new.record]
        assert w.store.reservation_page(None, "held", None)[0] == []
        assert w.run()["counts"]["writes"] == 0


class SignallingStore:
    """The commitment store as it is, with an event after `renewals` lease renewals (no sleeps in the test)."""

    def __new__(cls, store: Any, renewals: int) -> Any:
        from chalicelib.commitments.store import CommitmentStore

        class Signalling(CommitmentStore):
            renewed = threading.Event()
            count = 0

            def renew_lease(self, owner: str, now: float, seconds: float) -> bool:
                ok = super().renew_lease(owner, now, seconds)
                Signalling.count += 1
                if Signalling.count >= renewals:
                    Signalling.renewed.set()
                return ok

        return Signalling(store.client, store.table)


def test_a_pass_longer_than_its_lease_term_renews_the_lease_and_keeps_it(services) -> None:
    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        w.pool("a")
        store = SignallingStore(w.store, renewals=4)
        config = w.config()
        inner: list[dict[str, Any]] = []

        def slow_fetch() -> Any:
            # Four renewals of a 0.3 s lease: longer than its term. Another pass must find it held.
            assert store.renewed.wait(timeout=30), "the lease was never renewed"
            inner.append(run_pass(w.store, w.placement, lambda: OpenStackClient(config).fetch(),
                                  FleetPoolSource(services.client, services.table), TENANT, lease_seconds=0.3))
            return OpenStackClient(config).fetch()

        run = run_pass(store, w.placement, slow_fetch, FleetPoolSource(services.client, services.table), TENANT,
                       lease_seconds=0.3)
    assert (run["outcome"], run["counts"]["held"]) == ("ok", 1)
    assert [r["outcome"] for r in inner] == ["skipped"]


def _ended(run: dict[str, Any]) -> float:
    from datetime import datetime

    return datetime.fromisoformat(run["endedAt"].replace("Z", "+00:00")).timestamp()


def test_a_lease_release_is_retried_and_the_next_pass_runs(services) -> None:
    from tests.support.faults import store_answers

    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        w.pool("a")
        waits: list[float] = []
        # The release (the pass's one DeleteItem) fails twice, botocore's 3 attempts each, then succeeds.
        with store_answers(services.client, "DeleteItem", "InternalServerError", status=500, times=6) as seen:
            run = run_pass(w.store, w.placement, lambda: OpenStackClient(w.config()).fetch(),
                           FleetPoolSource(services.client, services.table), TENANT, sleep=waits.append)
        assert run["outcome"] == "ok" and seen[0] == 7 and waits  # 6 refused requests, then given back
        assert w.store.lease_until() is None
        assert w.run()["outcome"] == "ok"  # not blocked


def test_a_lease_that_cannot_be_released_runs_out_at_most_a_term_after_the_pass(services) -> None:
    from tests.support.faults import failing

    now = [time.time()]  # the pass's clock, moved on only by its waits between release attempts
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    with sync_world(services, world({"p1": [commitment(1)]})) as w:
        w.pool("a")
        with failing(services.client, "DeleteItem") as seen:
            run = run_pass(w.store, w.placement, lambda: OpenStackClient(w.config()).fetch(),
                           FleetPoolSource(services.client, services.table), TENANT, clock=lambda: now[0],
                           sleep=sleep)
        until = w.store.lease_until()
    assert run["outcome"] == "ok" and until is not None
    # Retried with backoff until the lease runs out by itself (the pass's deadline), then left to run out:
    # at most one term (60 s by default) after the pass ended, not the 15 minutes it was.
    assert seen[0] > 2 and max(waits) <= 5.0 and sum(waits) <= 60.0
    assert until <= _ended(run) + 60.0 + 0.002
