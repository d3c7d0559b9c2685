"""The request log line carries the fields operators need and never a key or a body; metrics are EMF."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from chalicelib import observability
from chalicelib.config import ConfigurationError
from chalicelib.observability import logger, metrics_enabled, record_request
from chalicelib.view.sqs import consume
from tests.support import factories as f

ROOT = Path(__file__).resolve().parents[2]

SENTINEL = "sentinel-body-value-7f3a"


@pytest.fixture
def capture() -> Iterator[io.StringIO]:
    """Everything the service logger writes while the test runs: a handler of the test's own, with the
    service's formatter, on the service's logger (so no earlier test's handler or stream can hide a line)."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logger.registered_handler.formatter)
    inner = logger._logger
    inner.addHandler(handler)
    level, disabled = inner.level, inner.disabled
    inner.setLevel(logging.INFO)
    inner.disabled = False
    try:
        yield buffer
    finally:
        inner.removeHandler(handler)
        inner.setLevel(level)
        inner.disabled = disabled


def _requests(stream: io.StringIO) -> tuple[str, list[dict]]:
    raw = stream.getvalue()
    lines = [json.loads(line) for line in raw.splitlines() if line.strip()]
    return raw, [line for line in lines if line.get("message") == "request"]


def test_request_line_has_the_fields_and_never_the_key_or_body(api, keys, capture):
    stream = capture
    bind = {"events": [f.binding_event("b-1", "wproj-1")]}
    assert api.post("/api/resource-provisioning/events", bind, key="service").status == 200
    report = f.report(resourceRef=SENTINEL, offeringRef=SENTINEL, observedAt="2026-03-01T10:00:00Z")
    accepted = api.post("/resource-provisioning/k8s/reports", report, key="k8s")
    assert accepted.status == 200
    stale = f.report(resourceRef=SENTINEL, offeringRef=SENTINEL, observedAt="2026-03-01T09:00:00Z")
    refused = api.post("/resource-provisioning/k8s/reports", stale, key="k8s")
    assert refused.status == 422 and refused.body["rejection"]["code"] == "stale"
    wrong_key = "wrong-key-" + SENTINEL
    assert api.post("/resource-provisioning/k8s/reports", report, key=wrong_key).status == 401

    raw, lines = _requests(stream)
    intake, first, second, unauthorized = lines
    assert intake["operation"] == "intakeEvents" and (intake["applied"], intake["ignored"]) == (1, 0)
    assert {k: first[k] for k in ("operation", "status", "site", "outcome", "allocationId", "clientRequestId")} == {
        "operation": "report", "status": 200, "site": "k8s", "outcome": "accepted",
        "allocationId": accepted.body["allocationId"], "clientRequestId": report["requestId"],
    }
    # chalice's test client has no API Gateway request id; Lambda's is always there
    assert "code" not in first and isinstance(first["latencyMs"], float | int) and first["lambdaRequestId"]
    assert (second["outcome"], second["code"], second["allocationId"]) == ("rejected", "stale",
                                                                            accepted.body["allocationId"])
    assert (unauthorized["status"], unauthorized["outcome"], unauthorized["code"]) == (401, "error", "unauthorized")
    for secret in (*keys.values(), wrong_key, SENTINEL, "Bearer", "wproj-1"):
        assert secret not in raw, f"{secret!r} leaked into the logs"
    assert "authorization" not in raw.lower()


def test_path_values_of_the_wrong_shape_are_not_logged(capture):
    stream = capture
    request = SimpleNamespace(context={"requestId": "gw-1"}, headers={"authorization": "Bearer k"})
    record_request(operation="getAllocation", status=400, latency_ms=1.0, request=request,
                   params={"site": "k8s\n<script>", "allocationId": "../../etc"},
                   body={"code": "invalid_allocation_id"})
    raw, [line] = _requests(stream)
    assert "site" not in line and "allocationId" not in line
    assert line["code"] == "invalid_allocation_id" and line["requestId"] == "gw-1"
    assert "script" not in raw and "etc" not in raw


def test_sqs_batch_is_logged_with_its_counts(services, capture):
    stream = capture
    event = f.project_event()
    result = consume(services, [json.dumps(event), json.dumps({"detail-type": "project", "detail": event})])
    assert (result.applied, result.ignored) == (1, 1)
    [line] = [json.loads(x) for x in stream.getvalue().splitlines() if '"view events"' in x]
    assert (line["source"], line["messages"], line["applied"], line["ignored"]) == ("sqs", 2, 1, 1)


def test_metrics_are_on_in_lambda_and_off_elsewhere_unless_told(monkeypatch):
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    monkeypatch.delenv("POWERTOOLS_DEV", raising=False)
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    assert not metrics_enabled()
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "resource-provisioning-dev")
    assert metrics_enabled()
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    assert not metrics_enabled()
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    assert metrics_enabled()


def _emf(out: str) -> list[dict]:
    return [doc for doc in (json.loads(x) for x in out.splitlines() if x.startswith('{"_aws"'))]


def test_metrics_are_emf_flushed_per_request(monkeypatch, capsys, capture):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    request = SimpleNamespace(context={"requestId": "gw-1"})
    body = {"requestId": "r-1", "allocationId": "11111111-1111-4111-8111-111111111111", "outcome": "rejected",
            "rejection": {"code": "retired", "message": "m"}}
    record_request(operation="report", status=422, latency_ms=7.5, request=request, params={"site": "k8s"}, body=body)
    docs = _emf(capsys.readouterr().out)
    assert len(docs) == 2  # flushed now, not at some later point
    by_name = {m["Name"]: doc for doc in docs for m in doc["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
    assert by_name["Requests"]["operation"] == "report" and by_name["Latency"]["Latency"] == [7.5]
    assert by_name["Unavailable"]["Unavailable"] == [0.0]
    report = by_name["Reports"]
    assert (report["outcome"], report["code"], report["Reports"]) == ("rejected", "retired", [1.0])
    assert report["_aws"]["CloudWatchMetrics"][0]["Namespace"] == observability.NAMESPACE

    record_request(operation="reportAccounts", status=503, latency_ms=1, request=request, params={},
                   body={"code": "unavailable"})
    docs = _emf(capsys.readouterr().out)
    by_name = {m["Name"]: doc for doc in docs for m in doc["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
    assert by_name["Unavailable"]["Unavailable"] == [1.0]
    assert (by_name["AccountReports"]["outcome"], by_name["AccountReports"]["code"]) == ("error", "unavailable")


def test_metrics_off_print_nothing(monkeypatch, capsys, capture):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    for _ in range(150):  # past Powertools' 100-value auto-flush, which ignores the switch
        record_request(operation="report", status=200, latency_ms=1, request=None, params={}, body={})
    assert _emf(capsys.readouterr().out) == []


def test_importing_the_app_leaves_the_service_logger_to_powertools():
    """Chalice configures a logger named after the app (the service's name) unless told not to: its own
    handler, propagation off and level ERROR, whenever sys.stdout is not the stream Powertools took."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import io, logging, sys\n"
        "import chalicelib.observability\n"
        "real, sys.stdout = sys.stdout, io.StringIO()\n"
        "import app\n"
        "sys.stdout = real\n"
        "log = logging.getLogger('resource-provisioning')\n"
        "print(log.getEffectiveLevel(), log.propagate, len(log.handlers))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    level, propagate, handlers = done.stdout.split()[-3:]
    assert (int(level), propagate, handlers) == (logging.INFO, "True", "1")


# --- an agent's 400: the answer is the code alone, the log says where and which rule ----------------------


def _invalid_lines(stream: io.StringIO) -> tuple[str, list[dict]]:
    raw = stream.getvalue()
    lines = [json.loads(line) for line in raw.splitlines() if line.strip()]
    return raw, [line for line in lines if line.get("message") == "invalid request"]


@pytest.mark.parametrize(("mutate", "pointer", "rule"), [
    (lambda r: r["resource"].__setitem__("observedAt", SENTINEL), "/resource/observedAt", "timestamp"),
    (lambda r: r["resource"].pop("offeringRef"), "/resource/offeringRef", "missing"),
    (lambda r: r["resource"].__setitem__("applied", {"cpu": SENTINEL}), "/resource/applied", "integer"),
    (lambda r: r.__setitem__("x/" + SENTINEL, 1), "/*", "extra_forbidden"),
])
def test_an_invalid_report_logs_the_pointer_and_rule_never_the_value(api, keys, capture, mutate, pointer, rule):
    report = f.report()
    mutate(report)
    answer = api.post("/resource-provisioning/k8s/reports", report, key="k8s")
    assert (answer.status, answer.body) == (400, {"code": "invalid_request"})
    raw, lines = _invalid_lines(capture)
    assert SENTINEL not in raw
    assert len(lines) == 1 and lines[0]["operation"] == "report" and lines[0]["pointer"] == pointer
    assert lines[0]["rule"] == rule


def test_an_invalid_event_batch_logs_the_pointer(api, keys, capture):
    batch = {"events": [f.binding_event("b-1", "wproj-1"), {**f.binding_event("b-2", "w"), "revision": SENTINEL}]}
    answer = api.post("/api/resource-provisioning/events", batch, key="service")
    assert (answer.status, answer.body) == (400, {"code": "invalid_request"})
    raw, lines = _invalid_lines(capture)
    assert SENTINEL not in raw and [line["pointer"] for line in lines] == ["/events/1/revision"]


# --- RP_LOG_FORMAT: text for people at make run, JSON everywhere else -------------------------------------


def test_the_log_format_is_json_unless_text_is_asked_for():
    assert observability.log_format({}) == "json"
    assert observability.log_format({"RP_LOG_FORMAT": "text"}) == "text"
    with pytest.raises(ConfigurationError, match=r"^RP_LOG_FORMAT must be one of: json, text$"):
        observability.log_format({"RP_LOG_FORMAT": "yaml"})


def test_the_log_level_is_a_level_name_in_any_case():
    assert observability.log_level({}) is None
    assert observability.log_level({"RP_LOG_LEVEL": "warning"}) == "WARNING"
    with pytest.raises(ConfigurationError, match=r"^RP_LOG_LEVEL must be one of: DEBUG, INFO, WARNING, ERROR, "
                                                 r"CRITICAL$"):
        observability.log_level({"RP_LOG_LEVEL": "LOUD"})


@pytest.mark.parametrize(("variable", "value"), [("RP_LOG_LEVEL", "LOUD"), ("RP_LOG_FORMAT", "xml")])
def test_a_bad_log_setting_does_not_stop_the_app_from_loading(variable, value):
    # read as a Lambda container starts: an import error there would fail every route with API Gateway's 502
    env = {**os.environ, variable: value, "POWERTOOLS_METRICS_DISABLED": "true"}
    done = subprocess.run([sys.executable, "-c", "import app"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    logged = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [(line["level"], line["problem"]) for line in logged if "problem" in line] == [
        ("WARNING", f"{variable} must be one of: "
         + (", ".join(observability.LOG_LEVELS) if variable == "RP_LOG_LEVEL" else "json, text"))]
    assert value not in done.stdout + done.stderr


def test_a_text_line_has_the_same_fields_readably():
    line = observability.text_line({"level": "INFO", "location": "x:1", "message": "request",
                                     "timestamp": "2026-03-01 10:00:00,123+0000", "service": "rp",
                                     "operation": "report", "status": 200, "code": None, "latencyMs": 3.2})
    assert line == "10:00:00 INFO    request  operation=report status=200 latencyMs=3.2"


def test_text_logs_are_what_a_process_writes_with_rp_log_format_text():
    import subprocess
    import sys

    script = ("from chalicelib.observability import logger\n"
              "logger.info('request', extra={'operation': 'report', 'status': 200})\n")
    env = {"RP_LOG_FORMAT": "text", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
                         timeout=60, cwd=observability.__file__.rsplit("/chalicelib/", 1)[0])
    assert re.fullmatch(r"\d\d:\d\d:\d\d INFO    request  operation=report status=200\n", out.stdout), out.stdout
