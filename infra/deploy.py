"""Deploy a packaged stage (`make package`) to AWS with CloudFormation: what `make deploy` runs.

    python -m infra.deploy --stage dev --stack-name resource-provisioning-dev --bucket ARTIFACTS build/dev
           [--parameter ViewEventSource=beto] [--no-execute]

1. uploads `deployment.zip` to the artifact bucket under its SHA-256 (unchanged code is not re-sent)
   and points every function's `CodeUri` at it;
2. uploads the template (a SAM template is over CloudFormation's inline limit);
3. creates a change set (CAPABILITY_IAM for the function roles, CAPABILITY_AUTO_EXPAND for the SAM
   transform), prints it, and, unless --no-execute, executes it and waits for the stack.

It is `aws cloudformation package` + `deploy` in boto3, so it needs nothing beyond the project's
requirements: credentials and a region come from the usual AWS environment (AWS_PROFILE, AWS_REGION, ...).
The bucket must exist in the stack's region. Keys for the Sites and the service are not part of the
stack: issue them afterwards with `python -m chalicelib.cli keys issue <k8s|slurm|service>`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import ClientError, WaiterError

from infra import definitions as d

CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"]
CODE_PROPERTIES = {"AWS::Serverless::Function": "CodeUri", "AWS::Serverless::LayerVersion": "ContentUri"}
WAIT = {"Delay": 10, "MaxAttempts": 360}  # up to an hour


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def upload(s3: Any, bucket: str, key: str, data: bytes) -> None:
    try:
        s3.head_object(Bucket=bucket, Key=key)
        return  # content-addressed: already there
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey", "NotFound"):
            raise
    s3.put_object(Bucket=bucket, Key=key, Body=data, ServerSideEncryption="AES256")


def point_code_at_s3(template: dict[str, Any], build_dir: Path, s3: Any, bucket: str, prefix: str) -> None:
    """Upload each local artifact the template names and replace the path with its S3 location."""
    for resource in template.get("Resources", {}).values():
        prop = CODE_PROPERTIES.get(resource.get("Type", ""))
        local = (resource.get("Properties") or {}).get(prop) if prop else None
        if not isinstance(local, str) or local.startswith("s3://"):
            continue
        data = (build_dir / local).read_bytes()
        key = f"{prefix}/{sha256(data)}.zip"
        upload(s3, bucket, key, data)
        resource["Properties"][prop] = {"Bucket": bucket, "Key": key}


def template_url(s3: Any, bucket: str, key: str) -> str:
    region = s3.meta.region_name
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"https://{bucket}.s3.{region}.{suffix}/{key}"


def stack_exists(cfn: Any, stack: str) -> bool:
    try:
        stacks = cfn.describe_stacks(StackName=stack)["Stacks"]
    except ClientError as exc:
        if "does not exist" in str(exc):
            return False
        raise
    return bool(stacks) and stacks[0]["StackStatus"] != "REVIEW_IN_PROGRESS"


def deploy(args: argparse.Namespace) -> int:
    stage = d.Stage.load(args.stage)
    build_dir = Path(args.build_dir)
    template = json.loads((build_dir / "sam.json").read_text())
    session = boto3.session.Session()
    if not session.region_name:
        print("no AWS region configured: set AWS_REGION (or AWS_DEFAULT_REGION, or a profile's region)",
              file=sys.stderr)
        return 2
    s3, cfn = session.client("s3"), session.client("cloudformation")
    prefix = f"{args.stack_name}"

    point_code_at_s3(template, build_dir, s3, args.bucket, prefix)
    body = json.dumps(template, indent=1).encode()
    template_key = f"{prefix}/{sha256(body)}.template.json"
    upload(s3, args.bucket, template_key, body)

    exists = stack_exists(cfn, args.stack_name)
    name = f"deploy-{time.strftime('%Y%m%d-%H%M%S')}"
    parameters = [{"ParameterKey": k, "ParameterValue": v} for k, v in (p.split("=", 1) for p in args.parameter)]
    cfn.create_change_set(
        StackName=args.stack_name, ChangeSetName=name, ChangeSetType="UPDATE" if exists else "CREATE",
        TemplateURL=template_url(s3, args.bucket, template_key), Capabilities=CAPABILITIES,
        Parameters=parameters,
        Tags=[{"Key": "app", "Value": stage.app_name}, {"Key": "stage", "Value": stage.name}],
    )
    try:
        cfn.get_waiter("change_set_create_complete").wait(
            StackName=args.stack_name, ChangeSetName=name, WaiterConfig={"Delay": 5, "MaxAttempts": 120})
    except WaiterError:
        described = cfn.describe_change_set(StackName=args.stack_name, ChangeSetName=name)
        reason = described.get("StatusReason", "")
        if "didn't contain changes" in reason or "No updates" in reason:
            print(f"{args.stack_name}: no changes")
            cfn.delete_change_set(StackName=args.stack_name, ChangeSetName=name)
            return 0
        print(f"change set failed: {reason}", file=sys.stderr)
        return 1

    changes = cfn.describe_change_set(StackName=args.stack_name, ChangeSetName=name)["Changes"]
    print(f"{args.stack_name}: change set {name}")
    for change in changes:
        rc = change["ResourceChange"]
        print(f"  {rc['Action']:8} {rc['LogicalResourceId']:32} {rc['ResourceType']}"
              f"{'  (replacement: ' + rc['Replacement'] + ')' if rc.get('Replacement') == 'True' else ''}")
    if args.no_execute:
        print("not executed (--no-execute): review it in the console or run again without the flag")
        return 0

    cfn.execute_change_set(StackName=args.stack_name, ChangeSetName=name)
    waiter = cfn.get_waiter("stack_update_complete" if exists else "stack_create_complete")
    try:
        waiter.wait(StackName=args.stack_name, WaiterConfig=WAIT)
    except WaiterError as exc:
        print(f"{args.stack_name}: {exc}", file=sys.stderr)
        return 1
    outputs = cfn.describe_stacks(StackName=args.stack_name)["Stacks"][0].get("Outputs", [])
    for output in sorted(outputs, key=lambda o: o["OutputKey"]):
        print(f"  {output['OutputKey']:26} {output['OutputValue']}")
    print("next: issue keys with `python -m chalicelib.cli keys issue <k8s|slurm|service>` "
          f"(RP_TABLE_NAME={stage.table_name(d.app_functions().names)})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.deploy", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir", help="the `make package` output, e.g. build/dev")
    parser.add_argument("--stage", required=True)
    parser.add_argument("--stack-name", required=True)
    parser.add_argument("--bucket", default="", help="S3 bucket for the artifacts, in the stack's region")
    parser.add_argument("--parameter", action="append", default=[], metavar="KEY=VALUE",
                        help="a template parameter (ViewEventBusName, ViewEventSource)")
    parser.add_argument("--no-execute", action="store_true", help="create and print the change set only")
    args = parser.parse_args(argv)
    if not args.bucket:
        print("set DEPLOY_BUCKET (make) / --bucket: an S3 bucket in the target region for the artifacts",
              file=sys.stderr)
        return 2
    return deploy(args)


if __name__ == "__main__":
    sys.exit(main())
