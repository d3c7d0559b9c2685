"""Every deployed setting, once.

`infra/build.py` renders these into the CloudFormation resources merged into
Chalice's SAM template (and into `.chalice/policy-*.json`); `infra/localstack.py`
creates the same data plane through the AWS APIs. Nothing here restates the
table: its keys, index and TTL attribute come from `chalicelib.store.schema`,
the view's event types from `chalicelib.view.events`, the names, timeouts and
environment from `.chalice/config.json` (resolved with Chalice's own Config,
so per-function overrides count exactly as Chalice counts them).

ARNs are passed in, never built here: the template passes intrinsic functions
(`Fn::GetAtt`), the policy files and LocalStack pass strings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chalice.config import Config
from chalice.utils import to_cfn_resource_name

from chalicelib.store import schema
from chalicelib.view.events import EVENT_ADAPTER

ROOT = Path(__file__).resolve().parent.parent
CHALICE_DIR = ROOT / ".chalice"
API_HANDLER = "api_handler"  # Chalice's name for the function behind API Gateway

Arn = Any  # a string, or a CloudFormation intrinsic function that yields one


# ---------------------------------------------------------------------------
# Stage settings Chalice's config has no key for. A stage missing here fails the build.


@dataclass(frozen=True)
class StageSettings:
    log_retention_days: int
    protect_data: bool  # table: deletion protection + Retain; queues: Retain
    drift_schedule: str = "rate(15 minutes)"  # the fleet drift reconciler's EventBridge schedule
    # --- commitment sync (issue 10) ---
    commitments_schedule: str = "rate(1 hour)"  # the commitments_sync function's EventBridge schedule
    # --- end commitment sync ---


STAGE_SETTINGS = {
    "dev": StageSettings(log_retention_days=14, protect_data=False),
    "prod": StageSettings(log_retention_days=90, protect_data=True, drift_schedule="rate(15 minutes)",
                          commitments_schedule="rate(1 hour)"),
}


# --- commitment sync (issue 10) ---
COMMITMENTS_FUNCTION = "commitments_sync"
COMMITMENTS_SECRET_VARIABLE = "RP_COMMITMENTS_SECRET_ID"  # noqa: S105 - a variable name; its value names the secret


def schedule_for(settings: StageSettings, function: str) -> str:
    """The stage's schedule of a scheduled function (the fleet reconciler's unless it is the commitment sync)."""
    return settings.commitments_schedule if function == COMMITMENTS_FUNCTION else settings.drift_schedule


def secret_arn(name: str, template: bool) -> Arn:
    """Secrets Manager ARNs end in "-" and six random characters: the policy names exactly that one secret."""
    if template:
        return {"Fn::Sub": "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:"
                + name + "-??????"}
    return f"arn:aws:secretsmanager:*:*:secret:{name}-??????"
# --- end commitment sync ---


# --- Placement behind Keystone (issue 16) ---
# Template parameter -> (the API function's variable, its values with the default first, description).
# Keystone's URL and the service account are the RP_COMMITMENTS_SECRET_ID secret's: no RP_OPENSTACK_*.
PLACEMENT_AUTH_PARAMETERS = {
    "PlacementAuth": ("RP_PLACEMENT_AUTH", ("keys", "keystone"),
                      "What opens Placement: Placement keys only, or Keystone tokens too (validated at the "
                      "auth_url of the RP_COMMITMENTS_SECRET_ID secret, whose account needs the service role)"),
    "PlacementPolicy": ("RP_PLACEMENT_POLICY", ("secure", "legacy"),
                        "Placement's policy defaults: the new ones, or the deprecated rules too"),
}
# --- end Placement behind Keystone ---


# ---------------------------------------------------------------------------
# What each Lambda function may do. Derived from the store calls the code makes
# (grep chalicelib for `client.` and the TransactItems it builds):
#   api_handler  GetItem        auth/repository.find, allocations/repository.get, accounts/repository,
#                               retained/service, view/projects, view/intake
#                BatchGetItem   store/ops.batch_get (reports, accounts, members), retained/reader
#                PutItem        view/intake (events route); transaction Put (idempotency, allocations,
#                               accounts, intake)
#                UpdateItem     retained/service (revision); transaction Update (view/intake)
#                DeleteItem     transaction Delete (accounts/repository: parts of a shrunk account set)
#                ConditionCheckItem  transaction ConditionCheck (allocations/repository, accounts/repository)
#                Query          on the table: accounts/repository (an allocation's account set),
#                               retained/reader (a Site's accepted items); on gsi1:
#                               allocations/repository.project_has_live_allocation
#   view_events  the view intake only: GetItem, PutItem, UpdateItem (+ TransactWriteItems of Put/Update)
#   fleet_drift  the fleet reconciler (chalicelib/fleet/reconciler.py): Query (a tenant's objects, Sites,
#                events; gsi1: tenants with an applied document, outbox items), GetItem (status, outbox),
#                BatchGetItem (pools' providers, document chunks), UpdateItem (outbox claim), transaction
#                Put (status, outbox, event record) and Delete (outbox); events:PutEvents on the fleet bus.
#                api_handler publishes too: POST /api/fleet/reconcile runs the same pass.
#   commitments_sync  the commitment sync pass (chalicelib/commitments/service.py): Query (reservations'
#                partition, a tenant's fleet objects and Sites, custom classes), BatchGetItem (Placement
#                consumers and pools' providers), PutItem (reservation, run record, lease), DeleteItem (the
#                lease), transaction Put/Update/Delete (Placement allocation writes);
#                secretsmanager:GetSecretValue on the OpenStack secret (RP_COMMITMENTS_SECRET_ID) only.
#                api_handler reads that secret too: POST /api/commitments/sync runs the same pass.
# TransactWriteItems has no IAM action of its own: each item needs its own action.
# DescribeTable/CreateTable/UpdateTimeToLive (schema.ensure_table) and the key
# repository's Query/UpdateItem on KEYS (issue, list, revoke) run only in
# `make run`, the tests and the operator CLI, never in Lambda.


@dataclass(frozen=True)
class FunctionAccess:
    table_actions: tuple[str, ...] = ()
    index_actions: tuple[str, ...] = ()
    consumes_events_queue: bool = False
    publishes_fleet_events: bool = False  # events:PutEvents on the fleet bus (RP_FLEET_EVENT_BUS) only
    reads_commitments_secret: bool = False  # secretsmanager:GetSecretValue on RP_COMMITMENTS_SECRET_ID only


FUNCTION_ACCESS = {
    API_HANDLER: FunctionAccess(
        table_actions=("BatchGetItem", "ConditionCheckItem", "DeleteItem", "GetItem", "PutItem", "Query",
                       "UpdateItem"),
        index_actions=("Query",),
        publishes_fleet_events=True,
        reads_commitments_secret=True,
    ),
    "view_events": FunctionAccess(
        table_actions=("GetItem", "PutItem", "UpdateItem"),
        consumes_events_queue=True,
    ),
    "fleet_drift": FunctionAccess(
        table_actions=("BatchGetItem", "DeleteItem", "GetItem", "PutItem", "Query", "UpdateItem"),
        index_actions=("Query",),
        publishes_fleet_events=True,
    ),
    # --- commitment sync (issue 10) ---
    "commitments_sync": FunctionAccess(
        table_actions=("BatchGetItem", "DeleteItem", "PutItem", "Query", "UpdateItem"),
        reads_commitments_secret=True,
    ),
    # --- end commitment sync ---
}

# What Lambda's SQS event source mapping needs on the queue it polls.
SQS_CONSUMER_ACTIONS = ("sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage")
LOG_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")


# ---------------------------------------------------------------------------
# The stage, resolved from .chalice/config.json.


def load_config_from_disk() -> dict[str, Any]:
    return json.loads((CHALICE_DIR / "config.json").read_text())


@dataclass(frozen=True)
class Stage:
    name: str
    config_from_disk: dict[str, Any]

    @classmethod
    def load(cls, name: str) -> Stage:
        disk = load_config_from_disk()
        if name not in disk.get("stages", {}):
            raise SystemExit(f"stage {name!r} is not in .chalice/config.json")
        if name not in STAGE_SETTINGS:
            raise SystemExit(f"stage {name!r} has no entry in infra/definitions.py STAGE_SETTINGS")
        if "log_retention_in_days" in json.dumps(disk):
            # Chalice would create a second log group of the same name; retention lives in STAGE_SETTINGS.
            raise SystemExit("set log retention in infra/definitions.py STAGE_SETTINGS, not in .chalice/config.json")
        return cls(name, disk)

    def config(self, function: str = API_HANDLER) -> Config:
        return Config(
            chalice_stage=self.name, function_name=function,
            config_from_disk=self.config_from_disk, user_provided_params={"project_dir": str(ROOT)},
        )

    @property
    def settings(self) -> StageSettings:
        return STAGE_SETTINGS[self.name]

    @property
    def app_name(self) -> str:
        return self.config().app_name

    def _variable(self, name: str, functions: list[str]) -> str:
        values = {self.config(f).environment_variables.get(name) for f in functions}
        if len(values) != 1 or None in values:
            raise SystemExit(f"{name} must be set once for stage {self.name!r} (and equal for every function)")
        return values.pop()  # type: ignore[return-value]

    def table_name(self, functions: list[str]) -> str:
        return self._variable("RP_TABLE_NAME", functions)

    def queue_name(self, functions: list[str]) -> str:
        return self._variable("RP_EVENTS_QUEUE", functions)

    def fleet_event_bus(self, functions: list[str]) -> str:
        return self._variable("RP_FLEET_EVENT_BUS", functions)

    def commitments_secret(self, functions: list[str]) -> str | None:
        """The OpenStack secret's name, set alike for every function that may read it (None: no such function)."""
        readers = [f for f in functions if FUNCTION_ACCESS[f].reads_commitments_secret]
        return self._variable(COMMITMENTS_SECRET_VARIABLE, readers) if readers else None

    def function_name(self, function: str) -> str:
        """The deployed Lambda name: Chalice's own convention (`chalice deploy` names them alike)."""
        base = f"{self.app_name}-{self.name}"
        return base if function == API_HANDLER else f"{base}-{function}"

    def policy_file(self, function: str) -> Path:
        return CHALICE_DIR / (self.config(function).iam_policy_file or f"policy-{self.name}.json")

    def lambda_timeout(self, function: str) -> int:
        return int(self.config(function).lambda_timeout or 60)


def dead_letter_queue_name(queue_name: str) -> str:
    return f"{queue_name}-dlq"


def rule_name(stage: Stage) -> str:
    return f"{stage.app_name}-{stage.name}-view-events"


# ---------------------------------------------------------------------------
# Chalice's logical ids (chalice/package.py): the API function is always APIHandler,
# every other function and every role is its name in CamelCase.


def function_logical_id(function: str) -> str:
    return "APIHandler" if function == API_HANDLER else to_cfn_resource_name(function)


def role_logical_id(function: str) -> str:
    return to_cfn_resource_name(f"{function}_role")


def sqs_event_logical_id(function: str) -> str:
    return to_cfn_resource_name(f"{function}-sqs-event-source")


def log_group_logical_id(function: str) -> str:
    return f"{function_logical_id(function)}LogGroup"


# ---------------------------------------------------------------------------
# The Chalice app's functions.


@dataclass(frozen=True)
class AppFunctions:
    names: list[str]
    sqs_consumers: list[str]
    scheduled: list[str]


def app_functions() -> AppFunctions:
    """Every Lambda function `chalice package` will emit for app.py."""
    from app import app  # imported late: importing the app reads the environment

    names: list[str] = []
    if app.routes:
        names.append(API_HANDLER)
    sqs: list[str] = []
    scheduled: list[str] = []
    for source in app.event_sources:
        names.append(source.name)
        if type(source).__name__ == "SQSEventConfig":
            sqs.append(source.name)
        if type(source).__name__ == "ScheduledEventConfig":
            scheduled.append(source.name)
    names.extend(f.name for f in app.pure_lambda_functions)
    if getattr(app, "websocket_handlers", None):
        raise SystemExit("websocket handlers are not covered by infra/")
    unknown = [n for n in names if n not in FUNCTION_ACCESS]
    if unknown:
        raise SystemExit(f"no IAM access declared for {unknown}: add them to infra/definitions.py FUNCTION_ACCESS "
                         "and give each its own iam_policy_file in .chalice/config.json")
    return AppFunctions(names, sqs, scheduled)


# ---------------------------------------------------------------------------
# DynamoDB


def table_properties(table_name: str, settings: StageSettings) -> dict[str, Any]:
    """CloudFormation properties: CreateTable's arguments (schema.table_definition) plus the durable settings."""
    return {
        **schema.table_definition(table_name),
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        "SSESpecification": {"SSEEnabled": True},
        "TimeToLiveSpecification": {"AttributeName": schema.TTL_ATTRIBUTE, "Enabled": True},
        "DeletionProtectionEnabled": settings.protect_data,
    }


def index_arn(table_arn: Arn) -> Arn:
    if isinstance(table_arn, str):
        return f"{table_arn}/index/{schema.GSI1}"
    logical_id, attribute = table_arn["Fn::GetAtt"]
    return {"Fn::Sub": f"${{{logical_id}.{attribute}}}/index/{schema.GSI1}"}


# ---------------------------------------------------------------------------
# SQS: the view's events queue and its dead-letter queue.

MAX_RECEIVE_COUNT = 5  # deliveries before a message is parked in the dead-letter queue
QUEUE_RETENTION_SECONDS = 4 * 24 * 3600
DLQ_RETENTION_SECONDS = 14 * 24 * 3600  # the maximum: time to look at and redrive what failed
VISIBILITY_TIMEOUT_FACTOR = 6  # AWS's advice for Lambda consumers: six times the function timeout


def events_queue_attributes(consumer_timeout: int, dlq_arn: Arn) -> dict[str, Any]:
    """SQS attributes (the same names in CloudFormation and in SetQueueAttributes)."""
    return {
        "VisibilityTimeout": max(30, VISIBILITY_TIMEOUT_FACTOR * consumer_timeout),
        "MessageRetentionPeriod": QUEUE_RETENTION_SECONDS,
        "SqsManagedSseEnabled": True,
        "RedrivePolicy": {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": MAX_RECEIVE_COUNT},
    }


def dead_letter_queue_attributes() -> dict[str, Any]:
    return {"MessageRetentionPeriod": DLQ_RETENTION_SECONDS, "SqsManagedSseEnabled": True}


def sqs_api_attributes(attributes: dict[str, Any]) -> dict[str, str]:
    """The SQS API takes every attribute as a string."""
    def text(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, dict):
            return json.dumps(value, separators=(",", ":"))
        return str(value)

    return {name: text(value) for name, value in attributes.items()}


# ---------------------------------------------------------------------------
# EventBridge: the view's events, published by Beto, routed to the queue.
#
# An event on the bus is routed when its `source` is the view source (default
# "beto") and its `detail-type` is either one event type of the intake (the
# event's own `type`, e.g. "project_binding"; `detail` is that event) or
# "events" (`detail` is a whole batch `{"events": [...]}`). chalicelib/view/sqs.py
# unwraps the envelope.

DEFAULT_VIEW_EVENT_SOURCE = "beto"
DEFAULT_EVENT_BUS = "default"
BATCH_DETAIL_TYPE = "events"
RULE_TARGET_ID = "view-events-queue"
TARGET_RETRY_POLICY = {"MaximumEventAgeInSeconds": 24 * 3600, "MaximumRetryAttempts": 185}


def view_event_types() -> list[str]:
    return sorted(EVENT_ADAPTER.json_schema()["discriminator"]["mapping"])


def view_event_pattern(source: Any) -> dict[str, Any]:
    return {"source": [source], "detail-type": [*view_event_types(), BATCH_DETAIL_TYPE]}


def rule_target(queue_arn: Arn, dlq_arn: Arn) -> dict[str, Any]:
    """The rule's one target (the same shape in CloudFormation and in PutTargets).

    Events EventBridge cannot deliver after its retries land in the same
    dead-letter queue as the messages the function could not apply.
    """
    return {
        "Id": RULE_TARGET_ID,
        "Arn": queue_arn,
        "DeadLetterConfig": {"Arn": dlq_arn},
        "RetryPolicy": dict(TARGET_RETRY_POLICY),
    }


def queue_policy(queue_arn: Arn, rule_arn: Arn) -> dict[str, Any]:
    """Lets the rule (and only it) send to the queue."""
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Sid": "ViewEventsRule",
            "Effect": "Allow",
            "Principal": {"Service": "events.amazonaws.com"},
            "Action": "sqs:SendMessage",
            "Resource": queue_arn,
            "Condition": {"ArnEquals": {"aws:SourceArn": rule_arn}},
        }],
    }


# ---------------------------------------------------------------------------
# IAM


def schedule_event_logical_id(function: str) -> str:
    """Chalice's name for a scheduled function's event (chalice/package.py: `<Function>Event`)."""
    return f"{to_cfn_resource_name(function)}Event"


def function_policy(access: FunctionAccess, *, table_arn: Arn, queue_arn: Arn, log_group_arn: Arn,
                    event_bus_arn: Arn = None, commitments_secret_arn: Arn = None) -> dict[str, Any]:
    statements: list[dict[str, Any]] = [{
        "Sid": "Logs",
        "Effect": "Allow",
        "Action": list(LOG_ACTIONS),
        "Resource": log_group_arn,
    }]
    if access.table_actions:
        statements.append({
            "Sid": "Table",
            "Effect": "Allow",
            "Action": [f"dynamodb:{a}" for a in access.table_actions],
            "Resource": table_arn,
        })
    if access.index_actions:
        statements.append({
            "Sid": "TableIndex",
            "Effect": "Allow",
            "Action": [f"dynamodb:{a}" for a in access.index_actions],
            "Resource": index_arn(table_arn),
        })
    if access.consumes_events_queue:
        statements.append({
            "Sid": "EventsQueue",
            "Effect": "Allow",
            "Action": list(SQS_CONSUMER_ACTIONS),
            "Resource": queue_arn,
        })
    if access.publishes_fleet_events:
        if event_bus_arn is None:
            raise SystemExit("a function publishing fleet events needs the fleet bus ARN")
        statements.append({
            "Sid": "FleetEvents",
            "Effect": "Allow",
            "Action": ["events:PutEvents"],
            "Resource": event_bus_arn,
        })
    if access.reads_commitments_secret:
        if commitments_secret_arn is None:
            raise SystemExit("a function reading the commitments secret needs its ARN")
        statements.append({
            "Sid": "CommitmentsSecret",
            "Effect": "Allow",
            "Action": ["secretsmanager:GetSecretValue"],
            "Resource": commitments_secret_arn,
        })
    return {"Version": "2012-10-17", "Statement": statements}


# ---------------------------------------------------------------------------
# API Gateway's own answers, shaped like the app's: `{"code": ...}` and the
# statuses the contract knows (devkit/gateway.py answers alike locally).
# The app registers every method and content type on its routes, so most of
# these only fire for paths no route matches, oversized bodies and throttling.

UNAUTHORIZED = (401, "unauthorized")
UNAVAILABLE = (503, "unavailable")

GATEWAY_RESPONSES: dict[str, tuple[int, str]] = {
    "MISSING_AUTHENTICATION_TOKEN": (404, "not_found"),  # no route for this path (and method)
    "RESOURCE_NOT_FOUND": (404, "not_found"),
    "UNSUPPORTED_MEDIA_TYPE": (400, "unsupported_media_type"),
    "REQUEST_TOO_LARGE": (400, "too_large"),
    "BAD_REQUEST_BODY": (400, "invalid_request"),
    "BAD_REQUEST_PARAMETERS": (400, "invalid_request"),
    "ACCESS_DENIED": UNAUTHORIZED,
    "UNAUTHORIZED": UNAUTHORIZED,
    "INVALID_API_KEY": UNAUTHORIZED,
    "INVALID_SIGNATURE": UNAUTHORIZED,
    "EXPIRED_TOKEN": UNAUTHORIZED,
    # The contract has no 429: a throttled or over-quota request is "unavailable, repeat it".
    "THROTTLED": UNAVAILABLE,
    "QUOTA_EXCEEDED": UNAVAILABLE,
    "INTEGRATION_FAILURE": UNAVAILABLE,
    "INTEGRATION_TIMEOUT": UNAVAILABLE,
    "API_CONFIGURATION_ERROR": UNAVAILABLE,
    "AUTHORIZER_FAILURE": UNAVAILABLE,
    "AUTHORIZER_CONFIGURATION_ERROR": UNAVAILABLE,
    "DEFAULT_4XX": (400, "invalid_request"),
    "DEFAULT_5XX": UNAVAILABLE,
}


def gateway_responses() -> dict[str, Any]:
    """The `x-amazon-apigateway-gateway-responses` extension of the API definition."""
    responses = {}
    for kind, (status, code) in sorted(GATEWAY_RESPONSES.items()):
        response: dict[str, Any] = {
            "statusCode": str(status),
            "responseTemplates": {"application/json": json.dumps({"code": code}, separators=(",", ":"))},
        }
        if status == 401:
            response["responseParameters"] = {"gatewayresponse.header.WWW-Authenticate": "'Bearer'"}
        responses[kind] = response
    return responses
