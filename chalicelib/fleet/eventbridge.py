"""Fleet events to EventBridge (the adapter; the pass in reconciler.py only sees a `Publisher`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import boto3
from botocore.config import Config

from chalicelib.config import FleetSettings

FLEET_SOURCE = "resource-provisioning.fleet"
Publisher = Callable[[dict[str, Any]], None]


def eventbridge_publisher(client: Any = None, bus: str | None = None,
                          settings: FleetSettings | None = None) -> Publisher:
    """PutEvents of one fleet event (source resource-provisioning.fleet, detail-type its type), to the bus and
    endpoint of `settings` (RP_FLEET_EVENT_BUS, RP_FLEET_EVENTS_ENDPOINT) unless given."""
    settings = settings or FleetSettings.from_env()
    events = client or boto3.client(
        "events", endpoint_url=settings.events_endpoint or None,
        config=Config(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=2, read_timeout=5))
    name = bus or settings.event_bus

    def publish(event: dict[str, Any]) -> None:
        answer = events.put_events(Entries=[{
            "Source": FLEET_SOURCE, "DetailType": event["type"], "EventBusName": name,
            "Detail": json.dumps({**event["detail"], "id": event["id"], "time": event["time"]}),
        }])
        if answer.get("FailedEntryCount"):
            raise RuntimeError("EventBridge refused the event")

    return publish
