"""Structured logs and metrics (aws-lambda-powertools).

Logs: one JSON line per request ("request") and one per SQS batch of view
events ("view events"). RP_LOG_FORMAT=text writes the same fields as one
readable line each (`make run` does so when its output is a terminal); json,
the default, is what Lambda and CloudWatch Logs Insights read. A request line carries the operation, status,
outcome, code (the rejection code of a refused report, or the error code),
site, allocationId, the report's own requestId (`clientRequestId`), API
Gateway's and Lambda's request ids, latency and whether the process was cold.
Fields are picked one by one from what the service already validated or
answered; the Authorization header and request bodies are never read here,
so they cannot be logged.

Metrics: CloudWatch Embedded Metric Format (Powertools), namespace
POWERTOOLS_METRICS_NAMESPACE, every metric with the `service` dimension:

| metric                                   | unit         | dimensions         |
|------------------------------------------|--------------|--------------------|
| Requests; Unavailable (1 for a 503, or 0) | Count        | operation          |
| Latency (the handler's, per request)     | Milliseconds | operation          |
| Reports (report), AccountReports          | Count        | outcome, code      |
| IntakeEventsApplied, IntakeEventsIgnored | Count        | source (http, sqs) |

They are flushed at the end of each request and each SQS batch, which in
Lambda is every invocation. They are on in Lambda and off elsewhere (`make
run`, tests, bench) unless POWERTOOLS_METRICS_DISABLED says otherwise
(`false` prints the EMF lines to stdout locally).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from chalicelib.errors import ConfigurationError

SERVICE_NAME = os.environ.get("POWERTOOLS_SERVICE_NAME") or "resource-provisioning"
NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "ResourceProvisioning"

# Metric names per operation for the two report kinds (by outcome and code).
REPORT_METRICS = {"report": "Reports", "reportAccounts": "AccountReports"}
NO_CODE = "none"

logging.getLogger("werkzeug").setLevel(logging.WARNING)

LOG_FORMATS = ("json", "text")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# First in a text line, in this order; the other fields follow as key=value, in the order they were added.
_TEXT_LEADS = ("timestamp", "level", "message")
_TEXT_OMITS = frozenset({"service", "location", "xray_trace_id", "sampling_rate", "stack_trace", "exception",
                         "exception_name"})


def _known_format(name: str) -> str:
    if name not in LOG_FORMATS:
        raise ConfigurationError(f"RP_LOG_FORMAT must be one of: {', '.join(LOG_FORMATS)}")
    return name


def log_format(env: Mapping[str, str] | None = None) -> str:
    return _known_format((os.environ if env is None else env).get("RP_LOG_FORMAT") or "json")


def log_level(env: Mapping[str, str] | None = None) -> str | None:
    """RP_LOG_LEVEL as a level name (any case), None when unset (Powertools' own resolution then)."""
    raw = (os.environ if env is None else env).get("RP_LOG_LEVEL")
    if not raw:
        return None
    if raw.upper() not in LOG_LEVELS:
        raise ConfigurationError(f"RP_LOG_LEVEL must be one of: {', '.join(LOG_LEVELS)}")
    return raw.upper()


# Settings read when this module is imported (a Lambda container's start), where a bad one must not stop
# every route: its default is used and the problem logged once the logger exists (`make run` refuses them).
_IGNORED: list[str] = []
T = TypeVar("T")


def _or_default(read: Callable[[], T], default: T) -> T:
    try:
        return read()
    except ConfigurationError as problem:
        _IGNORED.append(str(problem))
        return default


def text_line(log: Mapping[str, Any]) -> str:
    """The fields Powertools would serialize as JSON, for a person: `10:00:00 INFO request status=200 ...`."""
    timestamp = str(log.get("timestamp", ""))
    clock = timestamp[11:19] if len(timestamp) >= 19 else timestamp
    head = f"{clock} {log.get('level', ''):<7} {log.get('message', '')}"
    exception = log.get("exception")
    fields = " ".join(f"{key}={value}" for key, value in log.items()
                      if key not in _TEXT_LEADS and key not in _TEXT_OMITS and value is not None)
    line = f"{head}  {fields}" if fields else head
    return f"{line}\n{exception}" if exception else line


# RP_LOG_LEVEL wins; otherwise Powertools' own resolution (POWERTOOLS_LOG_LEVEL, Lambda's, INFO).
logger = Logger(service=SERVICE_NAME, level=_or_default(log_level, None))


def _powertools_formatter() -> LambdaPowertoolsFormatter:
    formatter = logger.registered_formatter
    if not isinstance(formatter, LambdaPowertoolsFormatter):  # the one whose serializer is swapped below
        raise TypeError(f"unexpected log formatter {type(formatter).__name__}")
    return formatter


_FORMATTER = _powertools_formatter()
_JSON_LINE = _FORMATTER.json_serializer


def use_log_format(name: str) -> None:
    """Powertools' formatter builds one dict per line and hands it to its serializer: JSON, or the text line."""
    _FORMATTER.json_serializer = text_line if _known_format(name) == "text" else _JSON_LINE


use_log_format(_or_default(log_format, "json"))
for _problem in _IGNORED:
    logger.warning("setting not used: its default is", extra={"problem": _problem})

# Only values of these shapes are logged from the path (anything else is attacker-chosen text).
_SITE = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")  # the contract's Opaque
_CODE = re.compile(r"^[a-z][a-z_]{0,63}$")

_cold = True
_cold_lock = threading.Lock()


def _cold_start() -> bool:
    global _cold
    with _cold_lock:
        cold, _cold = _cold, False
    return cold


def _shaped(value: Any, pattern: re.Pattern[str]) -> str | None:
    return value if isinstance(value, str) and pattern.fullmatch(value) else None


def metrics_enabled() -> bool:
    """POWERTOOLS_METRICS_DISABLED (or POWERTOOLS_DEV) when set; otherwise on only inside Lambda."""
    if os.environ.get("POWERTOOLS_METRICS_DISABLED", "") != "" or os.environ.get("POWERTOOLS_DEV"):
        return not is_metrics_disabled()
    return bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME"))


def _emit(dimensions: Mapping[str, str], values: list[tuple[str, MetricUnit, float]]) -> None:
    """One EMF document: its own metric set (so threads never share one), flushed at once."""
    metrics = EphemeralMetrics(namespace=NAMESPACE, service=SERVICE_NAME)
    for dimension, label in dimensions.items():
        metrics.add_dimension(name=dimension, value=label)
    for name, unit, amount in values:
        metrics.add_metric(name=name, unit=unit, value=amount)
    metrics.flush_metrics()


def _outcome(status: int, body: Mapping[str, Any]) -> tuple[str, str | None]:
    """(outcome, code): `accepted`/`rejected` with the rejection code, `ok`, or `error` with the error code."""
    outcome = body.get("outcome")
    if outcome in ("accepted", "rejected"):
        rejection = body.get("rejection")
        code = rejection.get("code") if isinstance(rejection, Mapping) else None
        return outcome, _shaped(code, _CODE)
    if status < 400:
        return "ok", None
    return "error", _shaped(body.get("code"), _CODE)


def request_fields(
    *, operation: str, status: int, latency_ms: float, request: Any, params: Mapping[str, str],
    body: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The log fields of one request. Reads only the request's context, never its headers or body."""
    body = body or {}
    outcome, code = _outcome(status, body)
    context = getattr(request, "context", None)
    lambda_context = getattr(request, "lambda_context", None)
    fields: dict[str, Any] = {
        "operation": operation,
        "status": status,
        "outcome": outcome,
        "code": code,
        "site": _shaped(params.get("site"), _SITE),
        "allocationId": _shaped(body.get("allocationId"), _UUID) or _shaped(params.get("allocationId"), _UUID),
        "clientRequestId": _shaped(body.get("requestId"), _TOKEN),
        "requestId": context.get("requestId") if isinstance(context, dict) else None,
        "lambdaRequestId": getattr(lambda_context, "aws_request_id", None),
        "latencyMs": round(latency_ms, 2),
        "coldStart": _cold_start(),
    }
    if status == 200 and isinstance(body.get("applied"), int) and isinstance(body.get("ignored"), int):
        fields["applied"], fields["ignored"] = body["applied"], body["ignored"]
    return fields


def record_request(
    *,
    operation: str,
    status: int,
    latency_ms: float,
    request: Any,
    params: Mapping[str, str],
    body: Mapping[str, Any] | None,
) -> None:
    """Called once per request by chalicelib.http.dispatch: the log line, then the metrics."""
    fields = request_fields(operation=operation, status=status, latency_ms=latency_ms, request=request,
                            params=params, body=body)
    (logger.warning if status >= 500 else logger.info)("request", extra=fields)
    if not metrics_enabled():
        return
    _emit({"operation": operation}, [
        ("Requests", MetricUnit.Count, 1),
        ("Unavailable", MetricUnit.Count, 1 if status == 503 else 0),
        ("Latency", MetricUnit.Milliseconds, latency_ms),
    ])
    if operation in REPORT_METRICS:
        _emit({"outcome": fields["outcome"], "code": fields["code"] or NO_CODE},
              [(REPORT_METRICS[operation], MetricUnit.Count, 1)])
    if "applied" in fields:
        _record_intake_metrics("http", fields["applied"], fields["ignored"])


def _record_intake_metrics(source: str, applied: int, ignored: int) -> None:
    _emit({"source": source}, [
        ("IntakeEventsApplied", MetricUnit.Count, applied),
        ("IntakeEventsIgnored", MetricUnit.Count, ignored),
    ])


def record_intake(*, source: str, messages: int, applied: int, ignored: int, failed: int = 0) -> None:
    """Called once per SQS batch of view events (chalicelib.view.sqs): the log line, then the metrics."""
    log = logger.warning if failed else logger.info
    log("view events", extra={"source": source, "messages": messages, "applied": applied,
                              "ignored": ignored, "failed": failed, "coldStart": _cold_start()})
    if metrics_enabled():
        _record_intake_metrics(source, applied, ignored)
        _emit({"source": source}, [("IntakeMessagesFailed", MetricUnit.Count, failed)])
