"""The data plane of a stage on LocalStack (or any endpoint speaking the AWS APIs), from infra/definitions.py.

    python -m infra.localstack wait   [--endpoint http://localhost:4566]
    python -m infra.localstack deploy --stage dev [--endpoint http://localhost:4566]

`deploy` creates, or brings up to date, what the CloudFormation template
declares for the data: the table (schema.ensure_table: keys, index, TTL; then
point-in-time recovery), the events queue and its dead-letter queue with the
redrive policy, the EventBridge rule with its target and the queue policies.
It is idempotent. The functions and the API are not deployed: run the API
with `make run` pointed at the endpoint (docs/operations/localstack.md).

Emulators take any credentials; dummy ones are used unless some are set.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from chalicelib.store.schema import ensure_table
from infra import definitions as d

DEFAULT_ENDPOINT = "http://localhost:4566"
SERVICES = ("dynamodb", "sqs", "events")


def clients(endpoint: str) -> dict[str, Any]:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    config = Config(region_name=region, connect_timeout=5, read_timeout=30, retries={"max_attempts": 3})
    session = boto3.session.Session()
    return {name: session.client(name, endpoint_url=endpoint, config=config) for name in SERVICES}


def wait(endpoint: str, timeout: float = 90.0) -> bool:
    """True once LocalStack's health endpoint reports every service we need."""
    deadline = time.monotonic() + timeout
    url = endpoint.rstrip("/") + "/_localstack/health"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - a loopback URL we were given
                health = json.load(response).get("services", {})
            if all(health.get(s) in ("available", "running") for s in SERVICES):
                return True
        except (urllib.error.URLError, OSError, ValueError):
            pass
        time.sleep(1)
    return False


def _queue(sqs: Any, name: str, attributes: dict[str, str]) -> tuple[str, str]:
    """Create the queue, or set its attributes when it exists. Returns (url, arn)."""
    try:
        url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") not in ("QueueAlreadyExists", "QueueNameExists"):
            raise
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
        sqs.set_queue_attributes(QueueUrl=url, Attributes=attributes)
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def deploy(stage: d.Stage, endpoint: str, event_bus: str, event_source: str) -> dict[str, str]:
    c = clients(endpoint)
    functions = d.app_functions()
    table = stage.table_name(functions.names)
    queue = stage.queue_name(functions.names)
    consumer_timeout = max((stage.lambda_timeout(f) for f in functions.sqs_consumers), default=30)

    ensure_table(c["dynamodb"], table)
    with contextlib.suppress(ClientError):  # not every emulator implements continuous backups
        c["dynamodb"].update_continuous_backups(
            TableName=table, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})

    dlq_url, dlq_arn = _queue(c["sqs"], d.dead_letter_queue_name(queue),
                              d.sqs_api_attributes(d.dead_letter_queue_attributes()))
    queue_url, queue_arn = _queue(c["sqs"], queue,
                                  d.sqs_api_attributes(d.events_queue_attributes(consumer_timeout, dlq_arn)))

    rule = d.rule_name(stage)
    rule_arn = c["events"].put_rule(
        Name=rule, EventBusName=event_bus, State="ENABLED",
        EventPattern=json.dumps(d.view_event_pattern(event_source)),
        Description="Beto's view events to the Resource Provisioning intake queue",
    )["RuleArn"]
    c["events"].put_targets(Rule=rule, EventBusName=event_bus, Targets=[d.rule_target(queue_arn, dlq_arn)])
    for url, arn in ((queue_url, queue_arn), (dlq_url, dlq_arn)):
        c["sqs"].set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(d.queue_policy(arn, rule_arn))})
    return {"table": table, "queue": queue_url, "dead-letter queue": dlq_url, "rule": rule_arn}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.localstack", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    waiting = commands.add_parser("wait", help="wait until LocalStack answers")
    waiting.add_argument("--endpoint", default=DEFAULT_ENDPOINT)
    waiting.add_argument("--timeout", type=float, default=90.0)
    deploying = commands.add_parser("deploy", help="create or update the stage's data plane")
    deploying.add_argument("--stage", default="dev")
    deploying.add_argument("--endpoint", default=DEFAULT_ENDPOINT)
    deploying.add_argument("--event-bus", default=d.DEFAULT_EVENT_BUS)
    deploying.add_argument("--event-source", default=d.DEFAULT_VIEW_EVENT_SOURCE)
    args = parser.parse_args(argv)

    if args.command == "wait":
        if wait(args.endpoint, args.timeout):
            print(f"LocalStack is up at {args.endpoint}")
            return 0
        print(f"LocalStack did not answer at {args.endpoint} within {args.timeout:.0f} s", file=sys.stderr)
        return 1

    stage = d.Stage.load(args.stage)
    created = deploy(stage, args.endpoint, args.event_bus, args.event_source)
    for what, value in created.items():
        print(f"{what:18} {value}")
    print(f"\nrun the API on it:  AWS_ENDPOINT_URL={args.endpoint} RP_TABLE_NAME={created['table']} make run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
