"""Blueprint registrations and event sources only; all behaviour lives in chalicelib/.

Each API family registers every one of its paths for every method and content
type, so that a wrong method is the family's own 405 (after authentication),
never API Gateway's 403, and a non-JSON body is the family's 400, never
Chalice's 415. Route tables: chalicelib/api.py (agent contract), chalicelib/operator_api.py
(operators), chalicelib/compute_api.py (compute),
chalicelib/placement/handler.py (Placement).
"""

from __future__ import annotations

import os

from chalicelib.api import contract_blueprint
from chalicelib.commitments.service import COMMITMENTS_SCHEDULE
from chalicelib.commitments.service import sync as sync_commitments
from chalicelib.compute_api import compute_blueprint
from chalicelib.fleet.eventbridge import eventbridge_publisher
from chalicelib.fleet.reconciler import DRIFT_SCHEDULE, reconcile
from chalicelib.fleet.store import FleetStore
from chalicelib.http.app import ThreadSafeChalice
from chalicelib.operator_api import operator_blueprint
from chalicelib.placement.handler import placement_blueprint
from chalicelib.runtime import services
from chalicelib.view.sqs import consume_event

# configure_logs=False: Chalice would otherwise take over the logger of the same name as Powertools' (its own
# handler, propagate off, level ERROR) whenever sys.stdout differs from when that logger was made.
app = ThreadSafeChalice(app_name="resource-provisioning", configure_logs=False)

app.register_blueprint(contract_blueprint)
app.register_blueprint(operator_blueprint)
app.register_blueprint(compute_blueprint())
app.register_blueprint(placement_blueprint)


@app.schedule(DRIFT_SCHEDULE, name="fleet_drift")
def fleet_drift(event):
    # The fleet drift reconciler: one pass over every tenant with an applied document.
    svc = services()
    return reconcile(FleetStore(svc.client, svc.table), eventbridge_publisher())


# --- commitment sync (issue 10) ---
@app.schedule(COMMITMENTS_SCHEDULE, name="commitments_sync")
def commitments_sync(event):
    # One pass (the stage's rate comes from infra/); the lease makes an overlapping run `skipped`.
    return sync_commitments(services())
# --- end commitment sync ---


@app.on_sqs_message(queue=os.environ.get("RP_EVENTS_QUEUE", "resource-provisioning-events"), batch_size=10)
def view_events(event):
    # A partial batch response: only the messages that failed go back to the queue.
    return consume_event(services(), event.to_dict()).response()
