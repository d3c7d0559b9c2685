"""Blueprint registrations and event sources only; all behaviour lives in chalicelib/.

Each API family registers every one of its paths for every method and content
type, so that a wrong method is the family's own 405 (after authentication),
never API Gateway's 403, and a non-JSON body is the family's 400, never
Chalice's 415. The composition root (chalicelib/runtime.py) builds each
family's blueprint from its route table: chalicelib/api.py (agent contract),
chalicelib/operator_api.py (operators), chalicelib/compute_api.py (compute),
chalicelib/placement/handler.py (Placement).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# No pydantic plugin is used; discovering plugins scans every installed distribution's metadata on the first
# model built (a tenth of a cold start).
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from chalicelib import runtime
from chalicelib.http.app import ThreadSafeChalice
from chalicelib.schedules import COMMITMENTS_SCHEDULE, DRIFT_SCHEDULE

if TYPE_CHECKING:
    from chalice.app import CloudWatchEvent, SQSEvent

# configure_logs=False: Chalice would otherwise take over the logger of the same name as Powertools' (its own
# handler, propagate off, level ERROR) whenever sys.stdout differs from when that logger was made.
app = ThreadSafeChalice(app_name="resource-provisioning", configure_logs=False)

app.register_blueprint(runtime.contract_blueprint())
app.register_blueprint(runtime.operator_blueprint())
app.register_blueprint(runtime.compute_blueprint())
app.register_blueprint(runtime.placement_blueprint())


@app.schedule(DRIFT_SCHEDULE, name="fleet_drift")
def fleet_drift(event: CloudWatchEvent) -> dict[str, int]:
    return runtime.fleet_drift()


@app.schedule(COMMITMENTS_SCHEDULE, name="commitments_sync")
def commitments_sync(event: CloudWatchEvent) -> dict[str, Any]:
    return runtime.commitments_sync()


@app.on_sqs_message(queue=os.environ.get("RP_EVENTS_QUEUE", "resource-provisioning-events"), batch_size=10)
def view_events(event: SQSEvent) -> dict[str, Any]:
    return runtime.view_events(event.to_dict())
