"""Compute inputs: strict, closed, and every error a JSON pointer at the offending member."""

from typing import Annotated

import pytest
from pydantic import StringConstraints

from chalicelib.compute.errors import InvalidArgument
from chalicelib.compute.validation import InvalidInput, StrictModel, parse, pointer
from chalicelib.http.compute import decode_object

ClassName = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]*$")]


class Pool(StrictModel):
    name: str
    capacity: dict[ClassName, int]
    archived: bool = False


class Document(StrictModel):
    pools: list[Pool]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"pools": [{"name": "a", "capacity": {"vcpu": 1}}]}, "/document/pools/0/capacity/vcpu"),
        ({"pools": [{"name": "a", "capacity": {"VCPU": "64"}}]}, "/document/pools/0/capacity/VCPU"),
        ({"pools": [{"name": "a", "capacity": {}, "archived": "yes"}]}, "/document/pools/0/archived"),
        ({"pools": [{"name": "a", "capacity": {}, "colour": "red"}]}, "/document/pools/0/colour"),
        ({"pools": [{"capacity": {}}]}, "/document/pools/0/name"),
        ({"pools": {}}, "/document/pools"),
    ],
)
def test_errors_point_at_the_member(body, field):
    with pytest.raises(InvalidInput) as caught:
        parse(Document, body, base="/document")
    assert (caught.value.field, caught.value.details) == (field, {})


def test_pointers_escape_slash_and_tilde():
    assert pointer(["a/b", "c~d", 0]) == "/a~1b/c~0d/0"


@pytest.mark.parametrize("raw", [b"{", b"[]", b"1", b'{"a":1,"a":2}', b"\xff"])
def test_bodies_that_are_not_one_object_are_invalid_at_the_root(raw):
    with pytest.raises(InvalidArgument) as caught:
        decode_object(raw)
    assert caught.value.details == {"field": ""}


def test_an_empty_body_is_an_empty_object():
    assert decode_object(b"") == {}
