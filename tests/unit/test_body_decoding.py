"""JSON body decoding: what is no JSON is `invalid_json`; JSON we cannot take as it is, `invalid_request`."""

from __future__ import annotations

import sys

import pytest

from chalicelib.errors import BadRequest
from chalicelib.http.bodies import decode_json_object

LONG_DIGITS = sys.get_int_max_str_digits() + 1


def code_of(raw: bytes) -> str:
    with pytest.raises(BadRequest) as caught:
        decode_json_object(raw, "application/json")
    return caught.value.code


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1, "a": 1}',
        b'{"a": 1, "a": 2}',
        b'{"x": {"b": true, "b": false}}',
        b'{"x": [{"k": 1}, {"k": 1, "k": 2}]}',
        b'{"requestId": "r1", "requestId": "r2"}',
        b'{"a": 1, "\\u0061": 2}',  # the same name, escaped
    ],
)
def test_a_name_twice_in_an_object_is_refused(raw: bytes) -> None:
    assert code_of(raw) == "invalid_request"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"n": ' + b"1" * LONG_DIGITS + b"}",
        b'{"n": -' + b"9" * LONG_DIGITS + b"}",
        b'{"x": {"n": [' + b"7" * 100_000 + b"]}}",
    ],
)
def test_an_integer_too_long_to_convert_is_json_but_refused(raw: bytes) -> None:
    assert code_of(raw) == "invalid_request"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1, "a": 2',                                    # a duplicate, but the document never ends
        b'{"x": {"b": 1, "b": 2}, }',                           # a duplicate, then a syntax error
        b'{"n": ' + b"1" * LONG_DIGITS + b", }",                # a long integer, then a syntax error
        b'{"n": 01}',
        b"{'a': 1}",
        b'{"a": NaN}',
        b"",
    ],
)
def test_what_is_no_json_stays_invalid_json(raw: bytes) -> None:
    assert code_of(raw) == "invalid_json"


def test_the_longest_convertible_integer_is_kept_exactly() -> None:
    digits = "9" * sys.get_int_max_str_digits()
    assert decode_json_object(b'{"n": ' + digits.encode() + b"}", None) == {"n": int(digits)}


def test_distinct_names_and_the_same_name_in_different_objects_are_fine() -> None:
    raw = b'{"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]}'
    assert decode_json_object(raw, "application/json") == {"a": {"k": 1}, "b": {"k": 2},
                                                          "c": [{"k": 3}, {"k": 4}]}
