"""Render infra/definitions.py for `chalice package --merge-template`, and check the result.

    python -m infra.build template --stage dev --out build/dev-infra.json
    python -m infra.build policies [--stage dev] [--check]
    python -m infra.build verify --stage dev build/dev/sam.json

`template` writes the resources Chalice does not make (the table, the events
queue and its dead-letter queue, the EventBridge rule and the queue policies,
one log group per function) and the changes to the ones it does: each
function's name, each role's policy (least privilege, with exact ARNs), the SQS
event source pointing at the queue of this stack, and API Gateway's own
answers. Chalice deep-merges it into its SAM template.

`policies` writes (or with --check compares) `.chalice/policy-*.json`, which
Chalice requires with `autogen_policy: false`. They carry the same statements
with name-scoped ARNs; in the packaged template the merge replaces them with
exact ones.

`verify` checks that the merge landed where it should (a renamed Chalice
resource would otherwise leave a half resource) and prints the resource list.

`prune` takes out of the Lambda zip what `chalice package` puts in but no
function imports (NOT_SHIPPED: setuptools, which pbr's metadata pulls in, and
its hooks), and says how much smaller the zip got.
Nothing here talks to AWS.

    python -m infra.build prune build/dev/deployment.zip
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

from chalicelib.store import schema
from infra import definitions as d

TABLE = "Table"
QUEUE = "EventsQueue"
DLQ = "EventsDeadLetterQueue"
RULE = "ViewEventsRule"
QUEUE_POLICY = "EventsQueuePolicy"
DLQ_POLICY = "EventsDeadLetterQueuePolicy"
REST_API = "RestAPI"  # Chalice's logical id for the API
GATEWAY_RESPONSES_KEY = "x-amazon-apigateway-gateway-responses"


def get_att(logical_id: str, attribute: str = "Arn") -> dict[str, Any]:
    return {"Fn::GetAtt": [logical_id, attribute]}


def ref(logical_id: str) -> dict[str, Any]:
    return {"Ref": logical_id}


def queue_ref() -> dict[str, Any]:
    """The SQS event source's queue: this stack's queue, by reference.

    Chalice writes `{"Fn::Sub": "arn:...:<queue name>"}`, an ARN built from the name with no
    dependency on the queue, so the event source mapping could be created before the queue.
    The merge is a deep merge (a dict cannot replace a dict), so this overrides the same
    `Fn::Sub` key with a reference to the queue's ARN.
    """
    return {"Fn::Sub": "${" + QUEUE + ".Arn}"}


def _retention(settings: d.StageSettings) -> dict[str, str]:
    policy = "Retain" if settings.protect_data else "Delete"
    return {"DeletionPolicy": policy, "UpdateReplacePolicy": policy}


def merge_template(stage: d.Stage) -> dict[str, Any]:
    functions = d.app_functions()
    table_name = stage.table_name(functions.names)
    queue_name = stage.queue_name(functions.names)
    bus_arn = {"Fn::Sub": "arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:event-bus/"
               + stage.fleet_event_bus(functions.names)}
    secret_name = stage.commitments_secret(functions.names)
    secret_arn = d.secret_arn(secret_name, template=True) if secret_name else None
    consumers = functions.sqs_consumers or []
    consumer_timeout = max((stage.lambda_timeout(f) for f in consumers), default=30)
    settings = stage.settings

    resources: dict[str, Any] = {
        TABLE: {
            "Type": "AWS::DynamoDB::Table",
            **_retention(settings),
            "Properties": d.table_properties(table_name, settings),
        },
        DLQ: {
            "Type": "AWS::SQS::Queue",
            **_retention(settings),
            "Properties": {"QueueName": d.dead_letter_queue_name(queue_name), **d.dead_letter_queue_attributes()},
        },
        QUEUE: {
            "Type": "AWS::SQS::Queue",
            **_retention(settings),
            "Properties": {"QueueName": queue_name,
                           **d.events_queue_attributes(consumer_timeout, get_att(DLQ))},
        },
        RULE: {
            "Type": "AWS::Events::Rule",
            "Properties": {
                "Name": d.rule_name(stage),
                "Description": "Beto's view events (identity, membership) to the Resource Provisioning intake queue",
                "EventBusName": ref("ViewEventBusName"),
                "EventPattern": d.view_event_pattern(ref("ViewEventSource")),
                "State": "ENABLED",
                "Targets": [d.rule_target(get_att(QUEUE), get_att(DLQ))],
            },
        },
        QUEUE_POLICY: {
            "Type": "AWS::SQS::QueuePolicy",
            "Properties": {"Queues": [ref(QUEUE)], "PolicyDocument": d.queue_policy(get_att(QUEUE), get_att(RULE))},
        },
        DLQ_POLICY: {
            "Type": "AWS::SQS::QueuePolicy",
            "Properties": {"Queues": [ref(DLQ)], "PolicyDocument": d.queue_policy(get_att(DLQ), get_att(RULE))},
        },
    }

    for function in functions.names:
        fn_id, log_id = d.function_logical_id(function), d.log_group_logical_id(function)
        function_name = stage.function_name(function)
        # Created before the function (its role refers to it), so Lambda never makes one without retention;
        # the role has no logs:CreateLogGroup.
        resources[log_id] = {
            "Type": "AWS::Logs::LogGroup",
            "DeletionPolicy": "Delete",
            "UpdateReplacePolicy": "Delete",
            "Properties": {"LogGroupName": f"/aws/lambda/{function_name}",
                           "RetentionInDays": settings.log_retention_days},
        }
        policy = d.function_policy(d.FUNCTION_ACCESS[function], table_arn=get_att(TABLE), queue_arn=get_att(QUEUE),
                                   log_group_arn=get_att(log_id), event_bus_arn=bus_arn,
                                   commitments_secret_arn=secret_arn)
        role_id = d.role_logical_id(function)
        resources[role_id] = {"Properties": {"Policies": [{"PolicyName": f"{role_id}Policy",
                                                           "PolicyDocument": policy}]}}
        properties: dict[str, Any] = {"FunctionName": function_name}
        if function in consumers:
            # One bad message must not send the good ones of its batch to the dead-letter queue.
            properties["Events"] = {d.sqs_event_logical_id(function): {"Properties": {
                "Queue": queue_ref(), "FunctionResponseTypes": ["ReportBatchItemFailures"]}}}
        if function in functions.scheduled:
            # The stage's schedule (Chalice writes the one app.py names; the merge replaces it).
            properties["Events"] = {d.schedule_event_logical_id(function): {"Properties": {
                "Schedule": d.schedule_for(settings, function)}}}
        if function == d.API_HANDLER:
            # How Placement authenticates and authorizes (docs/placement-keystone.md): the deployer's choice
            # per stack. Keystone's URL and the service's credentials are the RP_COMMITMENTS_SECRET_ID
            # secret's (its auth_url), which only this function and the commitment sync may read.
            properties["Environment"] = {"Variables": {
                variable: ref(parameter) for parameter, (variable, _, _) in d.PLACEMENT_AUTH_PARAMETERS.items()}}
        resources[fn_id] = {"Properties": properties}

    if d.API_HANDLER in functions.names:
        resources[REST_API] = {"Properties": {"DefinitionBody": {GATEWAY_RESPONSES_KEY: d.gateway_responses()}}}

    return {
        "Description": f"Resource Provisioning ({stage.name}): API, view intake, DynamoDB table, events queue",
        "Parameters": {
            "ViewEventBusName": {
                "Type": "String", "Default": d.DEFAULT_EVENT_BUS,
                "Description": "The EventBridge bus Beto publishes the view's events on",
            },
            "ViewEventSource": {
                "Type": "String", "Default": d.DEFAULT_VIEW_EVENT_SOURCE,
                "Description": "The `source` of Beto's events on that bus",
            },
            **{parameter: {"Type": "String", "Default": choices[0], "AllowedValues": list(choices),
                           "Description": description}
               for parameter, (_, choices, description) in d.PLACEMENT_AUTH_PARAMETERS.items()},
        },
        "Resources": resources,
        "Outputs": {
            "TableName": {"Value": ref(TABLE)},
            "EventsQueueUrl": {"Value": ref(QUEUE)},
            "EventsQueueArn": {"Value": get_att(QUEUE)},
            "EventsDeadLetterQueueUrl": {"Value": ref(DLQ)},
            "ViewEventsRuleArn": {"Value": get_att(RULE)},
        },
    }


def policy_documents(stage: d.Stage) -> dict[Path, dict[str, Any]]:
    """The `.chalice/policy-*.json` files: the same statements, ARNs scoped by name."""
    functions = d.app_functions()
    table_name = stage.table_name(functions.names)
    queue_name = stage.queue_name(functions.names)
    bus_name = stage.fleet_event_bus(functions.names)
    secret_name = stage.commitments_secret(functions.names)
    documents: dict[Path, dict[str, Any]] = {}
    for function in functions.names:
        path = stage.policy_file(function)
        document = d.function_policy(
            d.FUNCTION_ACCESS[function],
            table_arn=f"arn:aws:dynamodb:*:*:table/{table_name}",
            queue_arn=f"arn:aws:sqs:*:*:{queue_name}",
            log_group_arn=f"arn:aws:logs:*:*:log-group:/aws/lambda/{stage.function_name(function)}:*",
            event_bus_arn=f"arn:aws:events:*:*:event-bus/{bus_name}",
            commitments_secret_arn=d.secret_arn(secret_name, template=False) if secret_name else None,
        )
        if path in documents and documents[path] != document:
            raise SystemExit(f"{path.name} is shared by functions with different access: "
                             "give each its own iam_policy_file in .chalice/config.json")
        documents[path] = document
    return documents


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


def cmd_template(args: argparse.Namespace) -> int:
    stage = d.Stage.load(args.stage)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(merge_template(stage)))
    print(f"wrote {out}")
    return cmd_policies(argparse.Namespace(stage=args.stage, check=True))


def cmd_policies(args: argparse.Namespace) -> int:
    stages = [args.stage] if args.stage else sorted(d.load_config_from_disk().get("stages", {}))
    stale = []
    for name in stages:
        for path, document in policy_documents(d.Stage.load(name)).items():
            text = render(document)
            current = path.read_text() if path.exists() else None
            if current == text:
                continue
            if args.check:
                stale.append(path.name)
            else:
                path.write_text(text)
                print(f"wrote {path.relative_to(d.ROOT)}")
    if stale:
        print(f"stale IAM policy files {stale}: run `make policies` and commit them", file=sys.stderr)
        return 1
    return 0


class VerifyError(Exception):
    pass


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise VerifyError(message)


def verify(stage: d.Stage, template: dict[str, Any]) -> None:
    resources = template.get("Resources", {})
    for logical_id, resource in resources.items():
        _check("Type" in resource, f"{logical_id}: merged onto nothing (did Chalice rename it?)")
    expected = merge_template(stage)["Resources"]
    functions = d.app_functions()
    for function in functions.names:
        fn = resources.get(d.function_logical_id(function), {})
        _check(fn.get("Type") == "AWS::Serverless::Function", f"{function}: no function resource")
        props = fn["Properties"]
        _check(props.get("FunctionName") == stage.function_name(function), f"{function}: FunctionName not merged")
        role_id = d.role_logical_id(function)
        _check(props.get("Role") == get_att(role_id), f"{function}: not on its own role {role_id}")
        policies = resources[role_id]["Properties"]["Policies"]
        _check(policies == expected[role_id]["Properties"]["Policies"], f"{role_id}: policy not the generated one")
        if function in functions.sqs_consumers:
            events = props.get("Events", {})
            source = events.get(d.sqs_event_logical_id(function), {})
            _check(source.get("Type") == "SQS" and source["Properties"].get("Queue") == queue_ref(),
                   f"{function}: SQS event source does not read {QUEUE}")
        if function in functions.scheduled:
            event = props.get("Events", {}).get(d.schedule_event_logical_id(function), {})
            _check(event.get("Type") == "Schedule"
                   and event["Properties"].get("Schedule") == d.schedule_for(stage.settings, function),
                   f"{function}: not scheduled at the stage's schedule")
    table = resources[TABLE]["Properties"]
    _check(table["KeySchema"] == schema.KEY_SCHEMA
           and table["GlobalSecondaryIndexes"] == schema.GLOBAL_SECONDARY_INDEXES,
           "table keys differ from chalicelib/store/schema.py")
    if d.API_HANDLER in functions.names:
        body = resources[REST_API]["Properties"]["DefinitionBody"]
        _check(body.get(GATEWAY_RESPONSES_KEY) == d.gateway_responses(), "gateway responses not merged")
    roles = [k for k, v in resources.items() if v["Type"] == "AWS::IAM::Role"]
    ours = {d.role_logical_id(f) for f in functions.names}
    # SAM adds CodeDeployServiceRole only for gradual deployments, which this template does not use.
    _check(set(roles) == ours, f"roles {sorted(set(roles) - ours)} are not covered by infra/")


def cmd_verify(args: argparse.Namespace) -> int:
    stage = d.Stage.load(args.stage)
    template = json.loads(Path(args.template).read_text())
    try:
        verify(stage, template)
    except VerifyError as exc:
        print(f"{args.template}: {exc}", file=sys.stderr)
        return 1
    print(f"{args.template}: verified; resources:")
    for logical_id, resource in sorted(template["Resources"].items()):
        print(f"  {logical_id:32} {resource['Type']}")
    return 0


# Top-level names in the Lambda zip that nothing imports at run time (decision 0029):
# setuptools comes in because pbr (keystoneauth1's, stevedore's) declares it; `import app` loads none of it.
NOT_SHIPPED = re.compile(r"^(setuptools|pkg_resources|_distutils_hack|distutils-precedence\.pth"
                         r"|setuptools-[^/]*\.dist-info)(/|$)")


def prune(zip_path: Path) -> tuple[int, int, list[str]]:
    """Rewrite the zip without NOT_SHIPPED; returns (bytes before, bytes after, top-level names taken out)."""
    before = zip_path.stat().st_size
    pruned = zip_path.with_suffix(".pruned.zip")
    removed: set[str] = set()
    with zipfile.ZipFile(zip_path) as source, zipfile.ZipFile(pruned, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if NOT_SHIPPED.match(info.filename):
                removed.add(info.filename.split("/", 1)[0])
                continue
            with source.open(info) as member, target.open(info, "w") as copy:  # the same name, mode and time
                shutil.copyfileobj(member, copy)
    pruned.replace(zip_path)
    return before, zip_path.stat().st_size, sorted(removed)


def cmd_prune(args: argparse.Namespace) -> int:
    before, after, removed = prune(Path(args.zip))
    print(f"{args.zip}: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB without {', '.join(removed) or 'nothing'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.build", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    template = commands.add_parser("template", help="write the merge template for one stage")
    template.add_argument("--stage", required=True)
    template.add_argument("--out", required=True)
    template.set_defaults(run=cmd_template)
    policies = commands.add_parser("policies", help="write (or --check) .chalice/policy-*.json")
    policies.add_argument("--stage")
    policies.add_argument("--check", action="store_true")
    policies.set_defaults(run=cmd_policies)
    check = commands.add_parser("verify", help="check a packaged template and list its resources")
    check.add_argument("--stage", required=True)
    check.add_argument("template")
    check.set_defaults(run=cmd_verify)
    pruning = commands.add_parser("prune", help="take what no function imports out of the Lambda zip")
    pruning.add_argument("zip")
    pruning.set_defaults(run=cmd_prune)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
