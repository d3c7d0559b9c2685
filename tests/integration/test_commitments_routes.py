"""The commitment sync's operator routes and CLI group over the app, the fake OpenStack and the integration store."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import pytest

from chalicelib import cli
from chalicelib.commitments.store import CommitmentStore, encode_token
from tests.support.commitments import PASSWORD, TENANT, commitment, sync_world, world

ROOT = "/api/commitments"
UUID = "c0ffee00-0000-4000-8000-000000000001"


@pytest.fixture
def http(services, keys):
    from chalice.test import Client

    from app import app

    class Http:
        def call(self, method: str, path: str, key: str | None = "service") -> tuple[int, Any]:
            headers = {"content-type": "application/json"}
            if key is not None:
                headers["authorization"] = f"Bearer {keys.get(key, key)}"
            response = client.http.request(method, path, headers=headers, body=b"")
            return response.status_code, (json.loads(response.body) if response.body else None)

    with Client(app) as client:
        yield Http()


@pytest.fixture
def synced(services, monkeypatch):
    """A world of 102 commitments: 101 pending in p1 (records, no Placement writes), one held in p2."""
    listed = [commitment(n, status="pending", confirmed_at=None) for n in range(1, 102)]
    raw = world({"p1": listed, "p2": [commitment(200, "p2")]})
    with sync_world(services, raw) as w:
        w.pool("a")
        for name, value in {"AUTH_URL": w.fake.auth_url, "USERNAME": "syncer", "PASSWORD": PASSWORD,
                            "PROJECT_NAME": "cloud_admin"}.items():
            monkeypatch.setenv(f"RP_OPENSTACK_{name}", value)
        monkeypatch.setenv("RP_COMMITMENTS_TENANT", TENANT)
        yield w


def test_sync_answers_200_with_the_run_record_whatever_the_outcome(http, synced) -> None:
    status, run = http.call("POST", f"{ROOT}/sync")
    assert status == 200 and run["outcome"] == "ok", run
    assert set(run) == {"runId", "startedAt", "endedAt", "outcome", "error", "counts"}
    assert run["counts"] == {"projects": 3, "commitments": 102, "held": 1, "pending": 101, "planned": 0,
                             "unplaced": 0, "released": 0, "conflicts": 0, "limesNotFound": 0, "skipped": {},
                             "writes": 103}
    synced.reload(world({"p1": []}, faults=[{"endpoint": "limes", "status": 500}]))
    status, failed = http.call("POST", f"{ROOT}/sync")
    assert (status, failed["outcome"]) == (200, "failed")
    assert synced.store.take_lease("someone", time.time(), 60)
    status, skipped = http.call("POST", f"{ROOT}/sync")
    assert (status, skipped["outcome"]) == (200, "skipped")
    status, runs = http.call("GET", f"{ROOT}/runs")
    assert status == 200
    assert [r["runId"] for r in runs["items"]] == [skipped["runId"], failed["runId"], run["runId"]]
    status, one = http.call("GET", f"{ROOT}/runs?limit=1")
    assert [r["runId"] for r in one["items"]] == [skipped["runId"]]
    assert http.call("GET", f"{ROOT}/runs?limit=0")[1]["error"]["code"] == "INVALID_ARGUMENT"


def test_reservations_pages_filters_and_tokens(http, synced) -> None:
    assert http.call("POST", f"{ROOT}/sync")[1]["outcome"] == "ok"
    status, first = http.call("GET", f"{ROOT}/reservations")
    assert status == 200 and len(first["items"]) == 100 and "nextToken" in first
    status, second = http.call("GET", f"{ROOT}/reservations?nextToken={first['nextToken']}")
    assert status == 200 and len(second["items"]) == 2 and "nextToken" not in second
    uuids = [r["commitmentUuid"] for r in first["items"] + second["items"]]
    assert len(set(uuids)) == 102 and uuids == sorted(uuids)

    status, held = http.call("GET", f"{ROOT}/reservations?status=held")
    assert [(r["projectId"], r["status"]) for r in held["items"]] == [("p2", "held")]
    status, p2 = http.call("GET", f"{ROOT}/reservations?projectId=p2")
    assert [r["commitmentId"] for r in p2["items"]] == [200]  # Limes' integer id, as given
    status, p1_pending = http.call("GET", f"{ROOT}/reservations?projectId=p1&status=pending")
    assert status == 200 and len(p1_pending["items"]) == 100 and "nextToken" in p1_pending
    status, rest = http.call("GET", f"{ROOT}/reservations?projectId=p1&status=pending"
                                    f"&nextToken={p1_pending['nextToken']}")
    assert len(rest["items"]) == 1 and "nextToken" not in rest
    assert http.call("GET", f"{ROOT}/reservations?projectId=p1&status=held")[1] == {"items": []}


@pytest.mark.parametrize("query", [
    "nextToken=not-a-token",
    "nextToken=" + encode_token({"pk": {"S": "KEYS"}, "sk": {"S": "x"}}),  # another partition's key
    "nextToken=" + encode_token({"pk": {"S": "CMTRES"}, "sk": {"S": "x"}, "gsi1pk": {"S": "CMTRESP#p1"},
                                 "gsi1sk": {"S": "held#x"}}),  # a project listing's token without projectId
    "projectId=p2&nextToken=" + encode_token({"pk": {"S": "CMTRES"}, "sk": {"S": "x"},
                                              "gsi1pk": {"S": "CMTRESP#p1"}, "gsi1sk": {"S": "held#x"}}),
    "status=frozen",
    "projectId=p1&projectId=p2",
    "projectId=%3Cscript%3E",
    # Issue 14 item 9: a bounded parser for every parameter, never a 503.
    "nextToken=" + base64.urlsafe_b64encode(b"[" * 3000).decode(),  # deep JSON: RecursionError before
    "nextToken=" + base64.urlsafe_b64encode(b'{"pk":' * 1000).decode(),
    "nextToken=" + encode_token({"pk": {"S": "CMTRES"}, "sk": {"S": "x" * 2000}}),  # sk no uuid (a key too long)
    "nextToken=" + "A" * 5000,
    "nextToken=%C2%B2",
    "projectId=p1&nextToken=" + encode_token({"pk": {"S": "CMTRES"}, "sk": {"S": UUID},
                                              "gsi1pk": {"S": "CMTRESP#p1"}, "gsi1sk": {"S": "held#" + "y" * 36}}),
])
def test_invalid_listing_parameters_are_400_without_echo(http, services, query) -> None:
    status, body = http.call("GET", f"{ROOT}/reservations?{query}")
    assert status == 400 and body["error"]["code"] == "INVALID_ARGUMENT", body
    assert "script" not in json.dumps(body) and "frozen" not in json.dumps(body)


@pytest.mark.parametrize("limit", ["%C2%B2", "%D9%A3", "%EF%BC%95", "1.0", "-1", "+5", "101", "", "1e2", "0x10",
                                   "5%20", "9" * 400])
def test_an_invalid_runs_limit_is_400_never_503(http, services, limit) -> None:
    # "²" (U+00B2), Arabic-Indic three and a fullwidth five pass str.isdigit, then int() fails: was a 503.
    status, body = http.call("GET", f"{ROOT}/runs?limit={limit}")
    assert (status, body["error"]["code"]) == (400, "INVALID_ARGUMENT"), body
    assert http.call("GET", f"{ROOT}/runs?limit=005")[0] == 200


def test_reservation_answers_show_the_revision_which_rises_only_on_a_change(http, synced) -> None:
    assert http.call("POST", f"{ROOT}/sync")[1]["outcome"] == "ok"
    held = http.call("GET", f"{ROOT}/reservations?projectId=p2")[1]["items"]
    assert [(r["commitmentId"], r["revision"]) for r in held] == [(200, 1)]
    assert http.call("GET", f"{ROOT}/reservations")[1]["items"][0]["revision"] == 1
    assert http.call("POST", f"{ROOT}/sync")[1]["counts"]["writes"] == 0
    assert [r["revision"] for r in http.call("GET", f"{ROOT}/reservations?projectId=p2")[1]["items"]] == [1]
    synced.reload(world({"p1": [], "p2": [commitment(200, "p2", amount=3)]}))
    assert http.call("POST", f"{ROOT}/sync")[1]["outcome"] == "ok"
    changed = http.call("GET", f"{ROOT}/reservations?projectId=p2&status=held")[1]["items"]
    assert [(r["amount"], r["revision"]) for r in changed] == [(3, 2)]


def test_the_routes_need_the_service_key(http, services) -> None:
    for method, path in (("POST", "/sync"), ("GET", "/runs"), ("GET", "/reservations")):
        status, body = http.call(method, f"{ROOT}{path}", key=None)
        assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")
        status, body = http.call(method, f"{ROOT}{path}", key="k8s")
        assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")


def test_cli_sync_runs_and_reservations(services, synced, monkeypatch, capsys) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", services.settings.endpoint_url)
    monkeypatch.setenv("RP_TABLE_NAME", services.table)
    assert cli.main(["commitments", "sync"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["outcome"] == "ok" and run["counts"]["held"] == 1
    assert cli.main(["commitments", "runs", "--limit", "5"]) == 0
    assert [json.loads(line)["runId"] for line in capsys.readouterr().out.splitlines()] == [run["runId"]]
    assert cli.main(["commitments", "reservations", "--project-id", "p1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 101 and {json.loads(line)["status"] for line in lines} == {"pending"}
    assert cli.main(["commitments", "reservations", "--status", "held"]) == 0
    assert [json.loads(line)["projectId"] for line in capsys.readouterr().out.splitlines()] == ["p2"]
    assert len(CommitmentStore(services.client, services.table).reservations()) == 102
    synced.reload(world({}, faults=[{"endpoint": "keystone.projects", "status": 503}]))
    assert cli.main(["commitments", "sync"]) == 1
    assert json.loads(capsys.readouterr().out)["outcome"] == "failed"


def test_make_run_timer_only_when_an_interval_is_set(services, synced) -> None:
    import threading

    from devkit.timer import start_sync_timer

    stop = threading.Event()
    assert start_sync_timer(stop, lambda: services, env={}) is None
    stop.set()  # the first pass runs at once; the set stop ends the loop after it
    thread = start_sync_timer(stop, lambda: services, env={"RP_COMMITMENTS_INTERVAL_SECONDS": "3600"})
    assert thread is not None
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert [r["outcome"] for r in CommitmentStore(services.client, services.table).runs(5)] == ["ok"]
