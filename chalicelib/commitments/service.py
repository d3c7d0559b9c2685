"""One commitment sync pass (the imperative shell around rules.plan_pass), and its wiring.

lease -> fetch (fail closed: nothing written, the run recorded failed) -> read reservations,
pools and Placement consumers -> plan (pure) -> per change: the Placement transaction
(consumer generation checked, 1.28 rules), then one conditional write of the reservation ->
run record, log line and metrics. The Placement write comes first: a crash between the two
leaves a consumer that is exactly what the next pass would write, which adopts it (rules).
An unchanged world writes nothing but the run record.
"""

from __future__ import annotations

import os
import threading
import time
import uuid as uuidlib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from chalicelib.commitments import rules
from chalicelib.commitments.models import SYNCER_USER, Consumer, Snapshot
from chalicelib.commitments.pools import FleetPoolSource, PoolSource
from chalicelib.commitments.rules import Decision, PlacementChange
from chalicelib.commitments.store import CommitmentStore, Stored
from chalicelib.commitments.upstream import (
    ConfigError,
    OpenStackClient,
    OpenStackConfig,
    UpstreamFailure,
    concurrency_override,
    config_from_secret,
    secrets_manager_client,
)
from chalicelib.config import ConfigurationError, env_float
from chalicelib.errors import Unavailable
from chalicelib.observability import NAMESPACE, SERVICE_NAME, logger, metrics_enabled
from chalicelib.placement.deps import placement_service
from chalicelib.placement.errors import PlacementError
from chalicelib.placement.models import ConsumerWrite
from chalicelib.placement.service import PlacementService
from chalicelib.schedules import COMMITMENTS_SCHEDULE  # noqa: F401 (re-exported)
from chalicelib.store.table import TableAccess

# The lease's term: a running pass renews it every third of that (LeaseKeeper), so a live pass never loses it
# and the lease runs out at most this long after the pass ends (crashed, or its release failed). Capped.
DEFAULT_LEASE_SECONDS = 60.0
MAX_LEASE_SECONDS = 60.0
RELEASE_RETRY_SECONDS = (0.2, 5.0)  # backoff of the lease release's retries: first wait, longest wait
STATUSES = ("held", "pending", "planned", "unplaced", "released", "conflict")
PLACEMENT_REFUSED = "placement_refused"  # Placement said no (someone changed the consumer or the pool): next pass

Fetch = Callable[[], Snapshot]


@dataclass(frozen=True)
class SyncSettings:
    tenant: str | None
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    secret_id: str | None = None  # Secrets Manager secret (name or ARN) with the OpenStack settings, in AWS

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SyncSettings:
        env = os.environ if env is None else env
        return cls(tenant=env.get("RP_COMMITMENTS_TENANT") or None,
                   lease_seconds=env_float(env, "RP_COMMITMENTS_LEASE_SECONDS", DEFAULT_LEASE_SECONDS, positive=True),
                   secret_id=env.get("RP_COMMITMENTS_SECRET_ID") or None)


@dataclass
class _Tally:
    writes: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _empty_counts() -> dict[str, Any]:
    return {"projects": 0, "commitments": 0, **{_count_name(s): 0 for s in STATUSES}, "limesNotFound": 0,
            "skipped": {}, "writes": 0}


def _count_name(status: str) -> str:
    return "conflicts" if status == "conflict" else status


class LeaseLost(Exception):
    """The pass's lease ran out and another pass took it: this one must not write on."""


class LeaseKeeper:
    """Renews the pass's lease every third of its term on a daemon thread, from the moment it is taken until
    the pass ends, so that a live pass keeps it however long it runs, and it runs out at most one term after
    the pass ends. A renewal the store does not answer is tried again a sixth of the term later; one that
    finds the lease no longer ours marks it lost (`check` then raises LeaseLost before the next write)."""

    def __init__(self, store: CommitmentStore, owner: str, term: float, clock: Callable[[], float],
                 taken_at: float) -> None:
        self._store = store
        self._owner = owner
        self._term = term
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.until = taken_at + term  # when the lease runs out, as last written
        self.renewals = 0
        self.lost = False

    def start(self) -> LeaseKeeper:
        self._thread = threading.Thread(target=self._run, name="commitments-lease", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        wait = self._term / 3
        while not self._stop.wait(wait):
            now = self._clock()
            try:
                if not self._store.renew_lease(self._owner, now, self._term):
                    self.lost = True
                    return
            except Unavailable:
                wait = self._term / 6
                continue
            self.until = now + self._term
            self.renewals += 1
            wait = self._term / 3

    def check(self) -> None:
        if self.lost:
            raise LeaseLost()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def release_lease(store: CommitmentStore, owner: str, deadline: float, clock: Callable[[], float],
                  sleep: Callable[[float], None]) -> bool:
    """Give the lease back, retried with backoff until the pass's deadline (when the lease runs out by itself:
    retrying longer cannot shorten the wait of the next pass). False when it could not be given back."""
    wait, longest = RELEASE_RETRY_SECONDS
    while True:
        try:
            store.release_lease(owner)
            return True
        except Unavailable:
            left = deadline - clock()
            if left <= 0:
                return False
            sleep(min(wait, left))
            wait = min(wait * 2, longest)


def run_pass(
    store: CommitmentStore, placement: PlacementService, fetch: Fetch, pools: PoolSource, tenant: str | None,
    *, clock: Callable[[], float] = time.time, lease_seconds: float = DEFAULT_LEASE_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """One pass; always returns its run record (outcome ok, failed or skipped), stored when the store allows.
    The lease's term is `lease_seconds`, at most MAX_LEASE_SECONDS."""
    lease_seconds = min(lease_seconds, MAX_LEASE_SECONDS)
    run_id = str(uuidlib.uuid4())
    started = clock()
    counts = _empty_counts()
    outcome, error = "ok", None
    try:
        leased = store.take_lease(run_id, started, lease_seconds)
    except Unavailable:
        leased, outcome, error = False, "failed", "store unavailable"
    if not leased:
        if outcome == "ok":
            outcome, error = "skipped", "another pass holds the lease"
    else:
        tally = _Tally()
        keeper = LeaseKeeper(store, run_id, lease_seconds, clock, started).start()
        try:
            counts = _sync(store, placement, fetch, pools, tenant, clock, tally, keeper)
        except UpstreamFailure as failure:  # carries service, what and status: never a secret
            outcome, error = "failed", f"upstream: {failure}"
        except rules.Untrusted as fault:  # the answers read cannot be acted on (names the fault, no value)
            outcome, error = "failed", f"upstream: {fault.what}"
        except ConfigurationError as failure:  # names keys or variables, never values (ConfigError is one)
            outcome, error = "failed", f"configuration: {failure}"
        except Unavailable:
            outcome, error = "failed", "store unavailable"
        except LeaseLost:
            outcome, error = "failed", "lease lost (another pass took it over)"
        except Exception:  # noqa: BLE001 - a bug must still leave a run record and give the lease back
            logger.exception("commitments sync: unexpected failure", extra={"runId": run_id})
            outcome, error = "failed", "internal error"
        finally:
            counts["writes"] = tally.writes  # a pass that failed while writing says how much it wrote
            keeper.stop()
            if not keeper.lost and not release_lease(store, run_id, keeper.until, clock, sleep):
                logger.warning("commitments sync: lease not released; it runs out by itself",
                               extra={"runId": run_id, "leaseUntil": _iso(keeper.until)})
    return _record_run(store, run_id, started, clock, outcome, error, counts)


def _record_run(store: CommitmentStore, run_id: str, started: float, clock: Callable[[], float], outcome: str,
                error: str | None, counts: dict[str, Any]) -> dict[str, Any]:
    """The pass's run record, stored when the store allows, logged and counted."""
    run = {"runId": run_id, "startedAt": _iso(started), "endedAt": _iso(clock()), "outcome": outcome,
           "error": error, "counts": counts}
    try:
        store.put_run(run, started)
    except Unavailable:
        logger.warning("commitments sync: run record not stored", extra={"runId": run_id})
    _observe(run)
    return run


def _sync(store: CommitmentStore, placement: PlacementService, fetch: Fetch, pools: PoolSource,
          tenant: str | None, clock: Callable[[], float], tally: _Tally, keeper: LeaseKeeper) -> dict[str, Any]:
    if not tenant:
        raise ConfigError("RP_COMMITMENTS_TENANT is required")
    snapshot = fetch()  # everything upstream first; an UpstreamFailure leaves the store untouched
    now = clock()
    stored = store.reservations()
    records = {uuid: s.record for uuid, s in stored.items()}
    pool_list = pools.pools(tenant)
    uuids = sorted(set(records) | {c.uuid for listed in snapshot.commitments.values() for c in listed
                                   if rules.canonical_uuid(c.uuid)})
    consumers = read_consumers(placement, uuids)
    plan = rules.plan_pass(snapshot, records, consumers, pool_list, now)
    tally.skipped.update(plan.skipped)
    after = dict(records)
    for uuid, decision in plan.writes(records):
        keeper.check()  # a pass that lost its lease writes nothing more (the one that took it decides)
        if _apply(store, placement, stored.get(uuid), decision, tally, now) and decision.record is not None:
            after[uuid] = decision.record
    statuses = Counter(r.status for r in after.values())
    return {
        "projects": plan.projects, "commitments": plan.commitments,
        **{_count_name(s): statuses.get(s, 0) for s in STATUSES},
        "limesNotFound": len(snapshot.limes_not_found),
        "skipped": {reason: n for reason, n in sorted(tally.skipped.items()) if n}, "writes": tally.writes,
    }


def read_consumers(placement: PlacementService, uuids: list[str]) -> dict[str, Consumer]:
    """The Placement consumers named by these uuids, as the rules see them (consistent BatchGets)."""
    found, _ = placement.store.read_for_allocation(uuids, [])
    return {uuid: Consumer(project_id=c.project_id, user_id=c.user_id, generation=c.generation,
                           allocations={rp: dict(res) for rp, res in c.allocations.items()})
            for uuid, c in found.items() if c is not None}


def _apply(store: CommitmentStore, placement: PlacementService, read: Stored | None, decision: Decision,
           tally: _Tally, now: float) -> bool:
    """The Placement transaction (if any), then the reservation's conditional write. False: nothing recorded."""
    if decision.placement is not None:
        try:
            write_placement(placement, decision.placement)
        except PlacementError:
            tally.skipped[PLACEMENT_REFUSED] += 1
            return False
        tally.writes += 1
    record = decision.record
    if record is None or not rules.record_changed(record, read.record if read else None):
        return True
    if not store.put_reservation(record, read, now):
        tally.skipped["record_changed_concurrently"] += 1
        return False
    tally.writes += 1
    return True


def write_placement(placement: PlacementService, change: PlacementChange) -> None:
    """One generation-checked allocation write (1.28): {} deletes the consumer. Raises PlacementError (409)."""
    placement.write_allocations([ConsumerWrite(
        uuid=change.consumer, project_id=change.project_id, user_id=SYNCER_USER,
        allocations={rp: dict(res) for rp, res in change.allocations.items()} if change.kind == "write" else {},
        generation=change.generation, check_generation=True,
    )], single=True)


def _observe(run: dict[str, Any]) -> None:
    counts = run["counts"]
    log = logger.info if run["outcome"] != "failed" else logger.warning
    log("commitments sync", extra={"runId": run["runId"], "outcome": run["outcome"], "error": run["error"],
                                   **{k: v for k, v in counts.items() if k != "skipped"},
                                   "skipped": counts["skipped"]})
    if not metrics_enabled():
        return
    metrics = EphemeralMetrics(namespace=NAMESPACE, service=SERVICE_NAME)
    metrics.add_dimension(name="outcome", value=run["outcome"])
    metrics.add_metric(name="CommitmentSyncRuns", unit=MetricUnit.Count, value=1)
    for name in ("commitments", "held", "unplaced", "released", "conflicts", "writes", "limesNotFound"):
        metrics.add_metric(name=f"Commitments{name[0].upper()}{name[1:]}", unit=MetricUnit.Count, value=counts[name])
    metrics.add_metric(name="CommitmentsSkipped", unit=MetricUnit.Count, value=sum(counts["skipped"].values()))
    metrics.flush_metrics()


# --- wiring ---------------------------------------------------------------------------------------


def openstack_config(settings: SyncSettings, env: Mapping[str, str] | None = None,
                     secrets_client: Any = None) -> OpenStackConfig:
    """From the environment when RP_OPENSTACK_AUTH_URL is set (local runs), else from the configured secret."""
    env = os.environ if env is None else env
    if env.get("RP_OPENSTACK_AUTH_URL"):
        return OpenStackConfig.from_env(env)
    if settings.secret_id:
        overrides = concurrency_override(env)
        if secrets_client is None:
            secrets_client = secrets_manager_client()
        try:
            return config_from_secret(secrets_client, settings.secret_id, **overrides)
        except ConfigError:
            raise
        except Exception:  # noqa: BLE001 - the SDK's message may name the secret; say only what failed
            raise ConfigError("the OpenStack secret could not be read") from None
    raise ConfigError("RP_OPENSTACK_AUTH_URL or RP_COMMITMENTS_SECRET_ID is required")


def openstack_fetch(settings: SyncSettings) -> Snapshot:
    return OpenStackClient(openstack_config(settings)).fetch()


def sync(svc: TableAccess, settings: SyncSettings | None = None, fetch: Fetch | None = None,
         pools: PoolSource | None = None, clock: Callable[[], float] = time.time) -> dict[str, Any]:
    """The pass over the process's services: what the schedule, the route and the CLI run. A setting that
    cannot be read is a failed pass (its run record names the variable), before any lease is taken."""
    store = CommitmentStore(svc.client, svc.table)
    if settings is None:
        try:
            settings = SyncSettings.from_env()
        except ConfigurationError as failure:
            started = clock()
            return _record_run(store, str(uuidlib.uuid4()), started, clock, "failed", f"configuration: {failure}",
                               _empty_counts())
    chosen = settings
    return run_pass(
        store, placement_service(svc.client, svc.table),
        fetch or (lambda: openstack_fetch(chosen)), pools or FleetPoolSource(svc.client, svc.table),
        chosen.tenant, clock=clock, lease_seconds=chosen.lease_seconds,
    )


def reservation_body(stored: Stored) -> dict[str, Any]:
    """A reservation as the routes and the CLI answer it: the record and its store revision (which rises on
    each write, and a pass writes a record only when it changes)."""
    return {**stored.record.to_dict(), "revision": stored.revision}
