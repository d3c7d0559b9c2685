"""`make localstack-deploy`'s path: the packaged template's data plane, applied through the AWS APIs, here
against moto's server (the same APIs LocalStack speaks; CI has no Docker for LocalStack itself).

The template is build/dev/sam.json as `make package` (and so `make lint`, which CI runs first) writes
it; when it is missing the test makes it.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from infra import localstack

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "build" / "dev" / "sam.json"


@pytest.fixture(scope="module")
def template() -> dict:
    if not TEMPLATE.is_file():
        subprocess.run(["make", "--no-print-directory", "-s", "package-dev"], cwd=ROOT, check=True, timeout=600)
    return json.loads(TEMPLATE.read_text())


@pytest.fixture
def endpoint(monkeypatch) -> Iterator[str]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def client(name: str, endpoint: str):
    return boto3.client(name, endpoint_url=endpoint, region_name="us-east-1")


def test_the_packaged_data_plane_lands_as_the_template_says(template, endpoint, capsys):
    assert localstack.main(["deploy", "--template", str(TEMPLATE), "--endpoint", endpoint, "--wait", "5"]) == 0
    resources = template["Resources"]
    table_name = resources["Table"]["Properties"]["TableName"]
    table = client("dynamodb", endpoint).describe_table(TableName=table_name)["Table"]
    assert [k["AttributeName"] for k in table["KeySchema"]] == ["pk", "sk"]
    assert [i["IndexName"] for i in table["GlobalSecondaryIndexes"]] == ["gsi1"]
    ttl = client("dynamodb", endpoint).describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "expiresAt"

    sqs = client("sqs", endpoint)
    queue = resources["EventsQueue"]["Properties"]
    url = sqs.get_queue_url(QueueName=queue["QueueName"])["QueueUrl"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    dlq_url = sqs.get_queue_url(QueueName=resources["EventsDeadLetterQueue"]["Properties"]["QueueName"])["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert attributes["VisibilityTimeout"] == str(queue["VisibilityTimeout"])
    assert json.loads(attributes["RedrivePolicy"]) == {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 5}

    events = client("events", endpoint)
    rule = resources["ViewEventsRule"]["Properties"]
    described = events.describe_rule(Name=rule["Name"])
    assert json.loads(described["EventPattern"])["source"] == ["beto"]  # the parameter's default
    targets = events.list_targets_by_rule(Rule=rule["Name"])["Targets"]
    assert [(t["Id"], t["Arn"], t["DeadLetterConfig"]["Arn"]) for t in targets] == [
        ("view-events-queue", attributes["QueueArn"], dlq_arn)]
    policy = json.loads(attributes["Policy"])
    assert policy["Statement"][0]["Condition"]["ArnEquals"]["aws:SourceArn"] == described["Arn"]
    assert f"RP_TABLE_NAME={table_name} make run" in capsys.readouterr().out

    # Idempotent: a second deploy changes nothing and fails on nothing.
    assert localstack.main(["deploy", "--template", str(TEMPLATE), "--endpoint", endpoint, "--wait", "5",
                            "--parameter", "ViewEventSource=other"]) == 0
    assert json.loads(events.describe_rule(Name=rule["Name"])["EventPattern"])["source"] == ["other"]


def test_a_property_it_cannot_apply_fails_naming_it(template, endpoint):
    changed = json.loads(json.dumps(template))
    changed["Resources"]["Table"]["Properties"]["KinesisStreamSpecification"] = {"StreamArn": "x"}
    with pytest.raises(localstack.TemplateError, match="property KinesisStreamSpecification"):
        localstack.deploy(changed, endpoint)


def test_nothing_listening_is_one_line_saying_what_to_start(template, capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there
    endpoint = f"http://127.0.0.1:{port}"
    assert localstack.main(["deploy", "--template", str(TEMPLATE), "--endpoint", endpoint, "--wait", "1"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [f"nothing answers at {endpoint} (waited 1 s): start LocalStack first "
                                "(make localstack-up, needs Docker), or set LOCALSTACK_ENDPOINT to where it runs"]


def test_the_order_follows_the_references(template):
    order = localstack.creation_order(localstack.data_plane(template))
    assert order.index("EventsDeadLetterQueue") < order.index("EventsQueue") < order.index("ViewEventsRule")
    assert order.index("ViewEventsRule") < order.index("EventsQueuePolicy")
