"""The view's events arriving through SQS (fed by an EventBridge rule in AWS).

A message body is an event, an `{"events": [...]}` batch, or an EventBridge
envelope whose `detail` is either. Each message is validated and applied on its
own (Powertools batch processing): a message that fails is reported back in
`batchItemFailures` (the event source mapping has `ReportBatchItemFailures`),
so SQS redelivers only it and, after the redrive limit, parks only it in the
dead-letter queue; the good messages of the same batch are deleted.
Re-applying a message is harmless (newest revision wins).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from chalicelib.observability import record_intake
from chalicelib.store.table import TableAccess
from chalicelib.view.intake import ViewIntake, parse_batch


def batch_from_message(body: str) -> dict[str, Any]:
    data: Any = json.loads(body)
    if isinstance(data, dict) and "detail" in data and "detail-type" in data:
        data = data["detail"]
    if isinstance(data, dict) and "events" not in data:
        data = {"events": [data]}
    batch: dict[str, Any] = data  # parse_batch refuses whatever is not an object of events
    return batch


@dataclass
class SqsOutcome:
    applied: int = 0
    ignored: int = 0
    failed: list[str] = field(default_factory=list)  # message ids SQS will redeliver

    def response(self) -> dict[str, Any]:
        return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in self.failed]}


def consume_event(db: TableAccess, event: dict[str, Any]) -> SqsOutcome:
    """Apply every message of one SQS event; the failed ones are listed, never the whole batch."""
    intake = ViewIntake(db.client, db.table)
    outcome = SqsOutcome()

    def apply(record: SQSRecord) -> None:
        result = intake.apply_batch(parse_batch(batch_from_message(record.body)))
        outcome.applied += result.applied
        outcome.ignored += result.ignored

    records = event.get("Records") or []
    if records:
        response = process_partial_response(
            event=event, record_handler=apply, processor=BatchProcessor(event_type=EventType.SQS))
        outcome.failed = [str(failure["itemIdentifier"]) for failure in response.get("batchItemFailures", [])]
    record_intake(source="sqs", messages=len(records), applied=outcome.applied, ignored=outcome.ignored,
                  failed=len(outcome.failed))
    return outcome


def consume(db: TableAccess, bodies: list[str]) -> SqsOutcome:
    """The same, for message bodies (tests and tools): each body becomes one record."""
    records = [{"messageId": f"m{i}", "body": body, "eventSource": "aws:sqs"} for i, body in enumerate(bodies)]
    return consume_event(db, {"Records": records})
