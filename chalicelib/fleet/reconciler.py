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
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from chalicelib.fleet import rules
from chalicelib.fleet.models import FleetDocument
from chalicelib.fleet.service import new_event, now_iso
from chalicelib.fleet.store import FleetStore, Status
from chalicelib.observability import logger
from chalicelib.schedules import DRIFT_SCHEDULE  # noqa: F401 (re-exported)
from chalicelib.store.ops import ConditionFailed

LEASE_MS = 60_000
Publisher = Callable[[dict[str, Any]], None]  # chalicelib/fleet/eventbridge.py makes the deployed one


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
        event = new_event("fleet.drifted" if drifted else "fleet.converged", status.tenant, planned.plan_hash,
                          planned.summary, now)
        items.append(store.outbox_item(event))
    elif not drifted:
        return None  # converged and recorded so: nothing to write
    try:
        store.transact(items)
    except ConditionFailed:
        return None  # another reconciler (or an apply) wrote the status first: its answer stands
    return event


def publish_outbox(store: FleetStore, publish: Publisher, known: Iterable[dict[str, Any]] = ()) -> int:
    """Publish every outbox item (those just written, and any a crashed pass or an apply left), in outbox order:
    oldest first, and a tenant's later events wait while an earlier one of it cannot be published (claimed by
    another publisher, or refused by EventBridge). The count recorded by this pass."""
    owner = uuid.uuid4().hex
    candidates = set(store.pending_outbox())  # the index may lag: the tenants just written are read directly
    for tenant in sorted({event["tenant"] for event in known}):
        candidates.update(store.tenant_outbox(tenant))
    waiting: set[str] = set()  # tenants with an earlier event this pass did not publish
    published = 0
    for _time, tenant, event_id in sorted(candidates):
        if tenant in waiting:
            continue
        if not store.claim(tenant, event_id, owner, int(time.time() * 1000), LEASE_MS):
            if store.outbox(tenant, event_id) is not None:
                waiting.add(tenant)  # another publisher holds it
            continue
        item = store.outbox(tenant, event_id)
        if item is None:
            continue
        event = item["event"]
        try:
            publish(event)
        except Exception:  # noqa: BLE001 - the claim lapses and a later pass publishes it
            logger.warning("fleet event not published", extra={"tenant": tenant, "event": event_id})
            waiting.add(tenant)
            continue
        try:
            store.transact(store.published_items(event, owner))
        except ConditionFailed:
            waiting.add(tenant)  # our lease lapsed and another publisher took it over
            continue
        published += 1
    return published


def reconcile(store: FleetStore, publish: Publisher) -> dict[str, int]:
    """One pass over every tenant with an applied document."""
    counts = {"checked": 0, "drifted": 0, "converged": 0, "published": 0}
    written: list[dict[str, Any]] = []
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
            written.append(event)
    counts["published"] = publish_outbox(store, publish, written)
    return counts


def events(store: FleetStore, tenant: str) -> dict[str, Any]:
    return {"events": store.events(tenant)}
