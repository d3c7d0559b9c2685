"""The pointer an agent's 400 logs: RFC 6901 into the request as sent, union members skipped."""

from chalicelib.contract.validation import json_pointer


def test_steps_follow_the_document():
    data = {"events": [{"a": 1}, {"revision": "x"}]}
    assert json_pointer(("events", 1, "project_binding", "revision"), data) == "/events/1/revision"


def test_a_missing_field_is_named_last():
    assert json_pointer(("resource", "offeringRef"), {"resource": {}}) == "/resource/offeringRef"


def test_names_that_are_not_plain_are_hidden():
    assert json_pointer(("a~b",), {}) == "/*"
    assert json_pointer(("x/" + "y" * 3,), {}) == "/*"
    assert json_pointer(("bad name\n",), {}) == "/*"
    assert json_pointer((), {}) == ""
