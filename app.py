"""Routes and event sources only; all behaviour lives in chalicelib/.

Every contract path accepts every method so that a wrong method is our own
405 `method_not_allowed` (after authentication), never API Gateway's 403, and
every content type so that a non-JSON body is our 400, never Chalice's 415.
"""

from __future__ import annotations

import os

from chalicelib import api
from chalicelib.http.app import ThreadSafeChalice
from chalicelib.http.dispatch import ALL_METHODS, ANY_CONTENT_TYPE, dispatch
from chalicelib.runtime import services
from chalicelib.view.sqs import consume

app = ThreadSafeChalice(app_name="resource-provisioning")

ROUTE = {"methods": ALL_METHODS, "content_types": ANY_CONTENT_TYPE}


@app.route("/resource-provisioning/{site}/reports", **ROUTE)
def report(site: str):
    return dispatch(app.current_request, api.REPORT, {"site": site})


@app.route("/resource-provisioning/{site}/accounts", **ROUTE)
def report_accounts(site: str):
    return dispatch(app.current_request, api.REPORT_ACCOUNTS, {"site": site})


@app.route("/resource-provisioning/{site}/members/{username}", **ROUTE)
def get_member(site: str, username: str):
    return dispatch(app.current_request, api.GET_MEMBER, {"site": site, "username": username})


@app.route("/resource-provisioning/{site}/retained-accounts", **ROUTE)
def get_retained_accounts(site: str):
    return dispatch(app.current_request, api.GET_RETAINED_ACCOUNTS, {"site": site})


@app.route("/resource-provisioning/{site}/allocations/{allocationId}", **ROUTE)
def get_allocation(site: str, allocationId: str):  # noqa: N803
    return dispatch(app.current_request, api.GET_ALLOCATION, {"site": site, "allocationId": allocationId})


@app.route("/resource-provisioning/{site}/projects/{providerProjectRef}", **ROUTE)
def get_project(site: str, providerProjectRef: str):  # noqa: N803
    return dispatch(
        app.current_request, api.GET_PROJECT, {"site": site, "providerProjectRef": providerProjectRef}
    )


@app.route("/api/resource-provisioning/events", **ROUTE)
def intake_events():
    return dispatch(app.current_request, api.INTAKE_EVENTS, {})


@app.on_sqs_message(queue=os.environ.get("RP_EVENTS_QUEUE", "resource-provisioning-events"), batch_size=10)
def view_events(event):
    consume(services(), [record.body for record in event])
