"""The compute family's one table from domain errors to its envelope: every error of fleet and tenants has its code."""

from __future__ import annotations

import pytest

from chalicelib.compute.validation import InvalidInput
from chalicelib.errors import BadRequest, ServiceError, Unavailable
from chalicelib.fleet import errors as fleet
from chalicelib.http.compute import as_compute_error
from chalicelib.tenants import errors as tenants


@pytest.mark.parametrize(("error", "status", "code"), [
    (InvalidInput("/a/b", "Fixed."), 400, "INVALID_ARGUMENT"),
    (fleet.UnknownObject(field="/id"), 404, "NOT_FOUND"),
    (fleet.NameTaken(field="/name"), 409, "ALREADY_EXISTS"),
    (fleet.WrongState("Archived.", field="/id"), 422, "INVALID_STATE"),
    (fleet.PlanChanged(expected="a", actual="b"), 409, "CONFIG_DRIFT"),
    (fleet.NotServed(items=101, limit=100), 501, "UNSUPPORTED"),
    (fleet.CallRefused(method="compute.pools.create", permission="p@s"), 403, "PERMISSION_DENIED"),
    (fleet.Contended(), 503, "UNAVAILABLE"),
    (tenants.UnknownPrincipal(), 404, "NOT_FOUND"),
    (tenants.SiteNameTaken(), 409, "ALREADY_EXISTS"),
    (BadRequest(), 400, "INVALID_ARGUMENT"),
    (Unavailable(), 503, "UNAVAILABLE"),
    (ServiceError(), 503, "UNAVAILABLE"),
    (RuntimeError("a bug"), 503, "UNAVAILABLE"),
])
def test_each_error_renders_as_its_code(error, status, code):
    rendered = as_compute_error(error)
    assert (rendered.status, rendered.code) == (status, code)


def test_messages_and_details_pass_through_and_a_missing_message_is_the_codes_own():
    assert as_compute_error(InvalidInput("/x", "Fixed.", limit=3)).body() == {
        "error": {"code": "INVALID_ARGUMENT", "message": "Fixed.", "details": {"field": "/x", "limit": 3}}}
    assert as_compute_error(fleet.NameTaken(field="/name")).body() == {"error": {
        "code": "ALREADY_EXISTS", "message": "An object with this identity already exists.",
        "details": {"field": "/name"}}}
    assert as_compute_error(InvalidInput("")).message == "The request is invalid."
