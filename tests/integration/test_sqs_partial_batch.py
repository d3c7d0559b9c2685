"""One bad SQS message fails alone: the good ones of its batch are applied and not redelivered."""

import json
import uuid

from chalice.local import LambdaContext

from chalicelib.view.sqs import consume
from tests.support import factories as f


def _sqs_event(bodies):
    return {"Records": [
        {"messageId": f"id-{i}", "receiptHandle": f"rh-{i}", "body": body, "attributes": {},
         "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
         "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:resource-provisioning-events",
         "awsRegion": "us-east-1"}
        for i, body in enumerate(bodies)]}


def _invoke(event):
    from app import view_events  # the Lambda handler chalice packages for the queue

    return view_events(event, LambdaContext("view_events", 256, max_runtime_ms=30000))


def test_one_bad_message_fails_alone(services):
    good = [json.dumps(f.project_event(project_id=str(uuid.uuid4()))) for i in range(9)]
    bad = json.dumps({"events": [{"type": "nope"}]})
    bodies = [*good[:4], bad, *good[4:]]
    response = _invoke(_sqs_event(bodies))
    assert response == {"batchItemFailures": [{"itemIdentifier": "id-4"}]}
    # The nine good ones were applied: the same events again are all ignored as not newer.
    again = consume(services, good)
    assert (again.applied, again.ignored, again.failed) == (0, 9, [])


def test_a_clean_batch_reports_no_failures(services):
    response = _invoke(_sqs_event([json.dumps(f.project_event(project_id=str(uuid.uuid4())))]))
    assert response == {"batchItemFailures": []}


def test_a_message_that_is_not_json_fails_alone(services):
    response = _invoke(_sqs_event(["{not json", json.dumps(f.project_event(project_id=str(uuid.uuid4())))]))
    assert response == {"batchItemFailures": [{"itemIdentifier": "id-0"}]}
