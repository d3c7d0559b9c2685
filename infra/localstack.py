"""The data plane of a stage on LocalStack (or any endpoint speaking the AWS APIs), from the packaged template.

    python -m infra.localstack wait   [--endpoint http://localhost:4566] [--timeout 90]
    python -m infra.localstack deploy [--template build/dev/sam.json] [--endpoint http://localhost:4566]
                                      [--parameter Name=Value ...] [--wait 10]

`deploy` reads the template `make package` wrote (what a user deploys to AWS)
and creates, or brings up to date, its data plane: every `AWS::DynamoDB::Table`,
`AWS::SQS::Queue`, `AWS::Events::Rule` and `AWS::SQS::QueuePolicy`, with the
properties the template gives them, in the order their references need
(`Ref`, `Fn::GetAtt`, `Fn::Sub`, `Fn::Join` are resolved; parameters take
their defaults unless `--parameter` says otherwise). A property this module
does not know how to apply fails the deploy, naming it, so the template cannot
grow something LocalStack silently lacks. It is idempotent; an existing
table's keys and indexes are not changed. The functions and the API are not
deployed: run the API with `make run` pointed at the endpoint
(docs/operations/localstack.md), or deploy the whole template with
`samlocal deploy` where Docker can run Lambda containers.

Before anything, `deploy` waits up to `--wait` seconds for the endpoint to
answer; if nothing does, it says in one line what to start.

Emulators take any credentials; dummy ones are used unless some are set.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from infra import definitions as d

DEFAULT_ENDPOINT = "http://localhost:4566"
SERVICES = ("dynamodb", "sqs", "events")
TABLE, QUEUE = "AWS::DynamoDB::Table", "AWS::SQS::Queue"
RULE, QUEUE_POLICY = "AWS::Events::Rule", "AWS::SQS::QueuePolicy"
DATA_PLANE = (TABLE, QUEUE, RULE, QUEUE_POLICY)
DEPLOY_WAIT_SECONDS = 10.0


class TemplateError(Exception):
    """The template asks for something this deploy cannot apply (the message names it)."""


def clients(endpoint: str) -> dict[str, Any]:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    config = Config(region_name=region(), connect_timeout=5, read_timeout=30, retries={"max_attempts": 3})
    session = boto3.session.Session()
    return {name: session.client(name, endpoint_url=endpoint, config=config) for name in (*SERVICES, "sts")}


def region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"


def answers(endpoint: str) -> bool:
    """LocalStack reports every service we need; or another emulator (moto's server) answers HTTP at all."""
    url = endpoint.rstrip("/") + "/_localstack/health"
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - a loopback URL we were given
            health = json.load(response).get("services", {})
        return all(health.get(s) in ("available", "running") for s in SERVICES)
    except urllib.error.HTTPError:
        return True  # something speaking HTTP that is not LocalStack: its APIs will say the rest
    except (urllib.error.URLError, OSError, ValueError):
        return False


def wait(endpoint: str, timeout: float = 90.0, ready: Callable[[str], bool] = answers) -> bool:
    """True once the endpoint answers (polled every half second, at most `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        if ready(endpoint):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)


# --- the template --------------------------------------------------------------------------------


def data_plane(template: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: resource for name, resource in template.get("Resources", {}).items()
            if resource.get("Type") in DATA_PLANE}


def references(value: Any) -> set[str]:
    """Logical ids (and parameter names) a value refers to."""
    if isinstance(value, list):
        return set().union(*(references(v) for v in value)) if value else set()
    if not isinstance(value, dict):
        return set()
    if set(value) == {"Ref"}:
        return {value["Ref"]}
    if set(value) == {"Fn::GetAtt"}:
        target = value["Fn::GetAtt"]
        return {(target if isinstance(target, str) else target[0]).split(".")[0]}
    if set(value) == {"Fn::Sub"} and isinstance(value["Fn::Sub"], str):
        return {name.split(".")[0] for name in re.findall(r"\$\{([^}!]+)\}", value["Fn::Sub"])}
    return set().union(*(references(v) for v in value.values())) if value else set()


def creation_order(resources: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each resource after the ones it refers to; a reference outside the data plane is an error."""
    needs = {name: references(resource.get("Properties", {})) for name, resource in resources.items()}
    order: list[str] = []
    while len(order) < len(resources):
        done = set(order)
        ready = sorted(n for n in resources if n not in done and needs[n] <= done | _outside(needs[n], resources))
        if not ready:
            raise TemplateError(f"a reference cycle among {sorted(set(resources) - set(order))}")
        order.extend(ready)
    return order


def _outside(names: set[str], resources: Mapping[str, Any]) -> set[str]:
    """Names that are not data-plane resources (parameters, pseudo parameters): resolved, never created."""
    return {n for n in names if n not in resources}


class Resolver:
    """Intrinsic functions over parameters, pseudo parameters and what was created so far."""

    def __init__(self, parameters: Mapping[str, str], pseudo: Callable[[str], str]) -> None:
        self.parameters = dict(parameters)
        self.pseudo = pseudo
        self.refs: dict[str, str] = {}
        self.attributes: dict[tuple[str, str], str] = {}

    def ref(self, name: str) -> str:
        if name in self.refs:
            return self.refs[name]
        if name in self.parameters:
            return self.parameters[name]
        if name.startswith("AWS::"):
            return self.pseudo(name)
        raise TemplateError(f"Ref {name}: not a parameter or a data-plane resource of the template")

    def get_att(self, name: str, attribute: str) -> str:
        if (name, attribute) not in self.attributes:
            raise TemplateError(f"Fn::GetAtt {name}.{attribute}: not a data-plane resource's attribute")
        return self.attributes[(name, attribute)]

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, argument), = value.items()
            if key == "Ref":
                return self.ref(argument)
            if key == "Fn::GetAtt":
                name, attribute = argument.split(".", 1) if isinstance(argument, str) else argument
                return self.get_att(name, attribute)
            if key == "Fn::Sub" and isinstance(argument, str):
                return re.sub(r"\$\{([^}!]+)\}", lambda m: self._sub(m.group(1)), argument)
            if key == "Fn::Join":
                separator, parts = argument
                return separator.join(str(self.resolve(p)) for p in parts)
            if key.startswith("Fn::") or key == "Condition":
                raise TemplateError(f"{key}: an intrinsic function this deploy does not resolve")
        return {k: self.resolve(v) for k, v in value.items()}

    def _sub(self, name: str) -> str:
        if "." in name and not name.startswith("AWS::"):
            return self.get_att(*name.split(".", 1))
        return self.ref(name)


# --- applying each type ----------------------------------------------------------------------------

_TABLE_CREATE = ("TableName", "KeySchema", "AttributeDefinitions", "GlobalSecondaryIndexes", "LocalSecondaryIndexes",
                 "BillingMode", "ProvisionedThroughput", "DeletionProtectionEnabled", "StreamSpecification")
_TABLE_AFTER = ("TimeToLiveSpecification", "PointInTimeRecoverySpecification", "SSESpecification")


def _known(kind: str, name: str, properties: Mapping[str, Any], known: tuple[str, ...]) -> None:
    unknown = sorted(set(properties) - set(known))
    if unknown:
        raise TemplateError(f"{name} ({kind}): property {', '.join(unknown)} is not applied by infra/localstack.py: "
                            "teach it (one line per property), or the emulator would silently lack it")


def apply_table(c: Mapping[str, Any], name: str, p: Mapping[str, Any]) -> dict[tuple[str, str] | str, str]:
    _known(TABLE, name, p, _TABLE_CREATE + _TABLE_AFTER)
    dynamodb = c["dynamodb"]
    arguments = {k: p[k] for k in _TABLE_CREATE if k in p}
    if "SSESpecification" in p:  # CloudFormation's SSEEnabled is the API's Enabled
        arguments["SSESpecification"] = {"Enabled": bool(p["SSESpecification"].get("SSEEnabled"))}
    try:
        dynamodb.create_table(**arguments)
        dynamodb.get_waiter("table_exists").wait(TableName=p["TableName"], WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "ResourceInUseException":
            raise
    if "TimeToLiveSpecification" in p:
        with contextlib.suppress(ClientError):  # "TimeToLive is already enabled" on a second deploy
            dynamodb.update_time_to_live(TableName=p["TableName"], TimeToLiveSpecification=p["TimeToLiveSpecification"])
    if "PointInTimeRecoverySpecification" in p:
        with contextlib.suppress(ClientError):  # not every emulator implements continuous backups
            dynamodb.update_continuous_backups(TableName=p["TableName"],
                                               PointInTimeRecoverySpecification=p["PointInTimeRecoverySpecification"])
    arn = dynamodb.describe_table(TableName=p["TableName"])["Table"]["TableArn"]
    return {"Ref": p["TableName"], ("", "Arn"): arn}


def apply_queue(c: Mapping[str, Any], name: str, p: Mapping[str, Any]) -> dict[tuple[str, str] | str, str]:
    # Every property but the name is an SQS attribute of the same name (CloudFormation's and the API's agree).
    sqs = c["sqs"]
    attributes = d.sqs_api_attributes({k: v for k, v in p.items() if k != "QueueName"})
    try:
        url = sqs.create_queue(QueueName=p["QueueName"], Attributes=attributes)["QueueUrl"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") not in ("QueueAlreadyExists", "QueueNameExists"):
            raise
        url = sqs.get_queue_url(QueueName=p["QueueName"])["QueueUrl"]
        sqs.set_queue_attributes(QueueUrl=url, Attributes=attributes)
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return {"Ref": url, ("", "Arn"): arn, ("", "QueueName"): p["QueueName"], ("", "QueueUrl"): url}


_RULE_KNOWN = ("Name", "Description", "EventBusName", "EventPattern", "ScheduleExpression", "State", "Targets")


def apply_rule(c: Mapping[str, Any], name: str, p: Mapping[str, Any]) -> dict[tuple[str, str] | str, str]:
    _known(RULE, name, p, _RULE_KNOWN)
    events = c["events"]
    arguments: dict[str, Any] = {k: p[k] for k in ("Name", "Description", "EventBusName", "ScheduleExpression", "State")
                                 if k in p}
    if "EventPattern" in p:
        arguments["EventPattern"] = json.dumps(p["EventPattern"])
    arn = events.put_rule(**arguments)["RuleArn"]
    if p.get("Targets"):
        events.put_targets(Rule=p["Name"], EventBusName=p.get("EventBusName", "default"), Targets=p["Targets"])
    return {"Ref": p["Name"], ("", "Arn"): arn}


def apply_queue_policy(c: Mapping[str, Any], name: str, p: Mapping[str, Any]) -> dict[tuple[str, str] | str, str]:
    _known(QUEUE_POLICY, name, p, ("Queues", "PolicyDocument"))
    for url in p["Queues"]:
        c["sqs"].set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(p["PolicyDocument"])})
    return {"Ref": name}


APPLY = {TABLE: apply_table, QUEUE: apply_queue, RULE: apply_rule, QUEUE_POLICY: apply_queue_policy}


def deploy(template: Mapping[str, Any], endpoint: str, parameters: Mapping[str, str] | None = None,
           c: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Create or update the template's data plane; returns each resource's `Ref` value by logical id."""
    c = c or clients(endpoint)
    declared = template.get("Parameters", {})
    defaults = {name: str(spec["Default"]) for name, spec in declared.items() if "Default" in spec}
    unknown = sorted(set(parameters or {}) - set(declared))
    if unknown:
        raise TemplateError(f"no parameter {', '.join(unknown)} in the template")
    account: list[str] = []

    def pseudo(name: str) -> str:
        if name == "AWS::Region":
            return region()
        if name == "AWS::Partition":
            return "aws"
        if name == "AWS::AccountId":
            if not account:
                account.append(c["sts"].get_caller_identity()["Account"])
            return account[0]
        raise TemplateError(f"Ref {name}: a pseudo parameter this deploy does not know")

    resolver = Resolver({**defaults, **(parameters or {})}, pseudo)
    resources = data_plane(template)
    for name in creation_order(resources):
        resource = resources[name]
        properties = resolver.resolve(resource.get("Properties", {}))
        made = APPLY[resource["Type"]](c, name, properties)
        for key, value in made.items():
            if key == "Ref":
                resolver.refs[name] = value
            else:
                resolver.attributes[(name, key[1])] = value
    return {name: resolver.refs[name] for name in resources}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.localstack", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    waiting = commands.add_parser("wait", help="wait until LocalStack answers")
    waiting.add_argument("--endpoint", default=DEFAULT_ENDPOINT)
    waiting.add_argument("--timeout", type=float, default=90.0)
    deploying = commands.add_parser("deploy", help="create or update the packaged template's data plane")
    deploying.add_argument("--template", type=Path, default=Path("build/dev/sam.json"),
                           help="the packaged template (make package STAGE=...)")
    deploying.add_argument("--endpoint", default=DEFAULT_ENDPOINT)
    deploying.add_argument("--parameter", action="append", default=[], metavar="NAME=VALUE",
                           help="a template parameter (ViewEventBusName, ViewEventSource)")
    deploying.add_argument("--wait", type=float, default=DEPLOY_WAIT_SECONDS,
                           help="seconds to wait for the endpoint to answer")
    args = parser.parse_args(argv)

    if args.command == "wait":
        if wait(args.endpoint, args.timeout):
            print(f"LocalStack is up at {args.endpoint}")
            return 0
        print(f"LocalStack did not answer at {args.endpoint} within {args.timeout:.0f} s", file=sys.stderr)
        return 1

    if not args.template.is_file():
        print(f"no packaged template at {args.template}: run make package (or give --template)", file=sys.stderr)
        return 1
    if not wait(args.endpoint, args.wait):
        print(f"nothing answers at {args.endpoint} (waited {args.wait:.0f} s): start LocalStack first "
              "(make localstack-up, needs Docker), or set LOCALSTACK_ENDPOINT to where it runs", file=sys.stderr)
        return 1
    template = json.loads(args.template.read_text())
    parameters = dict(item.split("=", 1) for item in args.parameter)
    try:
        created = deploy(template, args.endpoint, parameters)
    except TemplateError as exc:
        print(f"{args.template}: {exc}", file=sys.stderr)
        return 1
    for what, value in created.items():
        print(f"{what:28} {value}")
    table = next(value for what, value in created.items() if template["Resources"][what]["Type"] == TABLE)
    print(f"\nrun the API on it:  AWS_ENDPOINT_URL={args.endpoint} RP_TABLE_NAME={table} make run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
