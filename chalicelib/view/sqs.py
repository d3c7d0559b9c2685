"""The view's events arriving through SQS (fed by an EventBridge rule in AWS).

A message body is an event, an `{"events": [...]}` batch, or an EventBridge
envelope whose `detail` is either. A message that fails validation raises, so
SQS redelivers it and, after the redrive limit, parks it in the dead-letter
queue; re-applying the valid ones is harmless (newest revision wins).
"""

from __future__ import annotations

import json
from typing import Any

from chalicelib.observability import record_intake
from chalicelib.runtime import Services
from chalicelib.view.intake import IntakeResult, ViewIntake, parse_batch


def batch_from_message(body: str) -> dict[str, Any]:
    data: Any = json.loads(body)
    if isinstance(data, dict) and "detail" in data and "detail-type" in data:
        data = data["detail"]
    if isinstance(data, dict) and "events" not in data:
        data = {"events": [data]}
    batch: dict[str, Any] = data  # parse_batch refuses whatever is not an object of events
    return batch


def consume(services: Services, bodies: list[str]) -> IntakeResult:
    batches = [parse_batch(batch_from_message(body)) for body in bodies]  # validate all first
    intake = ViewIntake(services.client, services.table)
    applied = ignored = 0
    for batch in batches:
        result = intake.apply_batch(batch)
        applied, ignored = applied + result.applied, ignored + result.ignored
    record_intake(source="sqs", messages=len(bodies), applied=applied, ignored=ignored)
    return IntakeResult(applied, ignored)
