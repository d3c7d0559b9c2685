"""The report message: limits, integers, strictness, no echo."""

import pytest

from chalicelib.contract.validation import validate_model
from chalicelib.errors import BadRequest
from chalicelib.http.bodies import decode_json_object
from chalicelib.reports.models import ReportRequest
from tests.support import factories as f


def parse(raw: bytes):
    return validate_model(ReportRequest, decode_json_object(raw, "application/json"))


def code_of(raw: bytes) -> str:
    with pytest.raises(BadRequest) as err:
        parse(raw)
    return err.value.code


def test_integral_float_is_an_integer():
    msg = parse(b'{"requestId":"r","resource":' + __import__("json").dumps(f.resource()).encode()
                .replace(b'"cpu": 2000', b'"cpu": 2000.0') + b"}")
    assert msg.resource.configured["cpu"] == 2000 and isinstance(msg.resource.configured["cpu"], int)


@pytest.mark.parametrize("value", ["1.5", '"1"', "true", "-1", "9007199254740992", "1e400", "NaN", "null"])
def test_non_integers_are_refused(value):
    body = '{"requestId":"r","resource":{"resourceRef":"a","offeringRef":"b","providerProjectRef":"c",' \
           f'"providerState":"OK","paused":false,"configured":{{"cpu":{value}}},"observedAt":"2026-01-01T00:00:00Z"}}}}'
    assert code_of(body.encode()) in ("invalid_request", "invalid_json")


def test_max_safe_integer_is_accepted():
    body = '{"requestId":"r","resource":{"resourceRef":"a","offeringRef":"b","providerProjectRef":"c",' \
           '"providerState":"OK","paused":false,"configured":{"cpu":9007199254740991},' \
           '"observedAt":"2026-01-01T00:00:00Z"}}'
    assert parse(body.encode()).resource.configured["cpu"] == 9007199254740991


@pytest.mark.parametrize("name", ["CPU", "gpu", "gpu.", "gpu.A100", "mem", "nvidia.com/gpu", "gpu.a100 ", " cpu"])
def test_unknown_components(name):
    import json

    raw = json.dumps(f.report(configured={name: 1})).encode()
    assert code_of(raw) == "unknown_component"


@pytest.mark.parametrize("name", ["cpu", "memory", "storage", "ephemeral-storage", "gpu.a100", "gpu.h100-80gb.v2"])
def test_canonical_components(name):
    import json

    parse(json.dumps(f.report(configured={name: 1}, applied={name: 1}, used={name: 0})).encode())


@pytest.mark.parametrize(
    "mutation",
    [
        {"nativeScope": None},  # explicit null is not absent
        {"extra": 1},
        {"paused": "false"},
        {"providerState": "ok"},
        {"resourceRef": "-leading-dash"},
        {"resourceRef": "a" * 129},
        {"resourceRef": "abc\n"},
        {"observedAt": "2026-02-30T25:00:00Z"},
        {"observedAt": "2026-01-01T00:00:00"},
        {"configured": {}},
    ],
)
def test_contract_violations(mutation):
    import json

    res = f.resource()
    res.update(mutation)
    assert code_of(json.dumps({"requestId": "r", "resource": res}).encode()) == "invalid_request"


def test_configured_limit_count_bounded():
    import json

    many = {f"gpu.m{i}": 1 for i in range(33)}
    assert code_of(json.dumps(f.report(configured=many)).encode()) == "invalid_request"


@pytest.mark.parametrize(
    ("raw", "ctype", "code"),
    [
        (b"{", "application/json", "invalid_json"),
        (b"[]", "application/json", "invalid_request"),
        (b"\xff\xfe", "application/json", "invalid_json"),
        (b'{"a": NaN}', "application/json", "invalid_json"),
        (b"{}", "text/plain", "unsupported_media_type"),
        (b" " * (5 * 1024 * 1024 + 1), "application/json", "too_large"),
    ],
)
def test_bodies(raw, ctype, code):
    with pytest.raises(BadRequest) as err:
        decode_json_object(raw, ctype)
    assert err.value.code == code


def test_json_media_type_with_charset():
    assert decode_json_object(b"{}", "application/json; charset=utf-8") == {}


def test_long_fractions_are_kept_up_to_the_limit():
    import json

    at = "2026-01-01T00:00:00." + "1" * 900 + "Z"
    assert parse(json.dumps(f.report(observedAt=at)).encode()).resource.observed_at == at
    too_long = "2026-01-01T00:00:00." + "1" * 1100 + "Z"
    assert code_of(json.dumps(f.report(observedAt=too_long)).encode()) == "invalid_request"


def test_contract_revisions_have_no_maximum():
    from pydantic import TypeAdapter

    from chalicelib.contract.types import Revision, StoredRevision

    assert TypeAdapter(Revision).validate_python(2**70) == 2**70
    with pytest.raises(ValueError):
        TypeAdapter(StoredRevision).validate_python(2**70)
