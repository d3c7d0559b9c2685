"""The drift reconciler: re-plan every applied document, record the answer, publish changes through an outbox.

A pass, per tenant with an applied document: read its status, plan the applied
document (with its prune flag) against what exists, and when the answer
differs from the recorded one (converged <-> drifted, or another drift planHash)
write the new status and an outbox item in one transaction conditioned on the
status read. Then publish: claim each outbox item (a conditional update with a
lease), PutEvents, and in one transaction delete the outbox item (still ours)
and record the event. A crash after the status write leaves the outbox item for
the next pass; two reconcilers race on the status condition and on the claim,
so each event is recorded once.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import boto3
from botocore.config import Config

from chalicelib.fleet import rules
from chalicelib.fleet.models import FleetDocument
from chalicelib.fleet.service import FLEET_SOURCE, _event, fleet_store, now_iso
from chalicelib.fleet.store import FleetStore, Status
from chalicelib.observability import logger
from chalicelib.schedules import DRIFT_SCHEDULE  # noqa: F401 (re-exported)
from chalicelib.store.ops import TransactionCanceled

LEASE_MS = 60_000
# The deployed schedule is per stage (infra/definitions.py STAGE_SETTINGS.drift_schedule replaces this one).

Publisher = Callable[[dict[str, Any]], None]


def event_bus() -> str:
    return os.environ.get("RP_FLEET_EVENT_BUS", "default")


def eventbridge_publisher(client: Any = None, bus: str | None = None) -> Publisher:
    """PutEvents of one fleet event (source resource-provisioning.fleet, detail-type its type)."""
    events = client or boto3.client(
        "events", endpoint_url=os.environ.get("RP_FLEET_EVENTS_ENDPOINT") or None,
        config=Config(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=2, read_timeout=5))
    name = bus or event_bus()

    def publish(event: dict[str, Any]) -> None:
        answer = events.put_events(Entries=[{
            "Source": FLEET_SOURCE, "DetailType": event["type"], "EventBusName": name,
            "Detail": json.dumps({**event["detail"], "id": event["id"], "time": event["time"]}),
        }])
        if answer.get("FailedEntryCount"):
            raise RuntimeError("EventBridge refused the event")

    return publish


def _check(store: FleetStore, tenant: str) -> tuple[Status, rules.Plan] | None:
    status = store.status(tenant)
    if not status.applied:
        return None
    document = FleetDocument.model_validate(store.applied_document(status), strict=False)
    snapshot = store.snapshot(tenant)
    return status, rules.plan(snapshot.state, document, bool(status.applied["prune"]))


MAX_DRIFT_CHANGES_BYTES = 256 * 1024  # the status item must stay below DynamoDB's 400 KB


def fitting(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first changes that fit the status item (the summary still counts them all)."""
    kept, size = [], 0
    for change in changes:
        size += len(json.dumps(change, separators=(",", ":")))
        if size > MAX_DRIFT_CHANGES_BYTES:
            break
        kept.append(change)
    return kept


def _record(store: FleetStore, status: Status, planned: rules.Plan) -> dict[str, Any] | None:
    """Write the answer; the event to publish when it changed (None when unchanged or another writer won)."""
    drifted = bool(planned.calls or planned.blocked)
    now = now_iso()
    drift = ({"checkedAt": now, "summary": planned.summary, "changes": fitting(planned.changes),
              "planHash": planned.plan_hash} if drifted else None)
    before = status.drift["planHash"] if status.drift else None
    changed = (before is None) != (drift is None) or (drift is not None and before != planned.plan_hash)
    written = Status(status.tenant, applied=status.applied, chunks=status.chunks, drift=drift)
    items = [store.status_item(status, written)]
    event = None
    if changed:
        event = _event("fleet.drifted" if drifted else "fleet.converged", status.tenant, planned.plan_hash,
                       planned.summary, now)
        items.append(store.outbox_item(event))
    elif not drifted:
        return None  # converged and recorded so: nothing to write
    try:
        store.transact(items)
    except TransactionCanceled:
        return None  # another reconciler (or an apply) wrote the status first: its answer stands
    return event


def publish_outbox(store: FleetStore, publish: Publisher, known: Iterable[tuple[str, str]] = ()) -> int:
    """Publish every outbox item (those just written, and any a crashed pass left); the count recorded by us."""
    owner = uuid.uuid4().hex
    candidates = dict.fromkeys([*known, *store.pending_outbox()])
    published = 0
    for tenant, event_id in candidates:
        if not store.claim(tenant, event_id, owner, int(time.time() * 1000), LEASE_MS):
            continue
        item = store.outbox(tenant, event_id)
        if item is None:
            continue
        event = item["event"]
        try:
            publish(event)
        except Exception:  # noqa: BLE001 - the claim lapses and a later pass publishes it
            logger.warning("fleet event not published", extra={"tenant": tenant, "event": event_id})
            continue
        try:
            store.transact(store.published_items(event, owner, time.time_ns()))
        except TransactionCanceled:
            continue
        published += 1
    return published


def reconcile(svc: Any, publish: Publisher) -> dict[str, int]:
    """One pass over every tenant with an applied document."""
    store = fleet_store(svc)
    counts = {"checked": 0, "drifted": 0, "converged": 0, "published": 0}
    written: list[tuple[str, str]] = []
    for tenant in store.applied_tenants():
        try:
            checked = _check(store, tenant)
        except Exception:  # noqa: BLE001 - one tenant's failure must not stop the others' checks
            logger.exception("fleet drift check failed", extra={"tenant": tenant})
            continue
        if checked is None:
            continue
        status, planned = checked
        counts["checked"] += 1
        counts["drifted" if planned.calls or planned.blocked else "converged"] += 1
        try:
            event = _record(store, status, planned)
        except Exception:  # noqa: BLE001 - as above: the next pass records it
            logger.exception("fleet drift not recorded", extra={"tenant": tenant})
            continue
        if event is not None:
            written.append((tenant, event["id"]))
    counts["published"] = publish_outbox(store, publish, written)
    return counts


def events(svc: Any, tenant: str) -> dict[str, Any]:
    return {"events": fleet_store(svc).events(tenant)}


def start_reconciler_timer(stop: threading.Event, services: Callable[[], Any]) -> threading.Thread:
    """`make run`: a daemon thread reconciling every RP_DRIFT_INTERVAL_SECONDS (default 900) until `stop`."""
    seconds = float(os.environ.get("RP_DRIFT_INTERVAL_SECONDS") or 900)
    thread = threading.Thread(target=run_reconciler_every, args=(seconds, stop, services), name="fleet-drift",
                              daemon=True)
    thread.start()
    return thread


def run_reconciler_every(seconds: float, stop: threading.Event, services: Callable[[], Any],
                         publish: Publisher | None = None) -> None:
    """`make run`'s timer: one pass every `seconds` until `stop` is set (errors logged, never fatal)."""
    publisher = publish or eventbridge_publisher()
    while not stop.wait(seconds):
        try:
            counts = reconcile(services(), publisher)
            logger.info("fleet reconciled", extra=counts)
        except Exception:  # noqa: BLE001 - the next tick tries again
            logger.exception("fleet reconcile failed")
