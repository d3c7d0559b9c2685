"""The contract's pattern types, each through its own validator: `Id`, `Opaque`, `AccountName`.

`_pattern` builds these validators at import time, where mutmut cannot switch its mutants on; its
lines carry `# pragma: no mutate` and this file is what makes a change there fail instead: every
pattern accepts what the contract's pattern accepts and refuses the rest, matched as JSON Schema
(ECMA-262) means it (the whole string, no trailing newline), with an error that is an ordinary invalid
value (never `unknown_component`, which the HTTP layer answers differently).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from chalicelib.contract.types import AccountName, Id, Opaque

ID, OPAQUE, ACCOUNT = TypeAdapter(Id), TypeAdapter(Opaque), TypeAdapter(AccountName)

ACCEPTED = [
    (ID, "11111111-1111-4111-8111-111111111111"),
    (ID, "6f1b2a52-4c8e-5d0a-9b7e-3a1c2d4e5f60"),
    (ID, "00000000-0000-1000-a000-000000000000"),
    (ID, "ffffffff-ffff-8fff-bfff-ffffffffffff"),
    (OPAQUE, "a"),
    (OPAQUE, "wp-1"),
    (OPAQUE, "Z9._:-"),
    (OPAQUE, "a" * 128),
    (ACCOUNT, "a"),
    (ACCOUNT, "_"),
    (ACCOUNT, "team_a.b:c-d"),
    (ACCOUNT, "A" * 64),
]

REFUSED = [
    (ID, ""),
    (ID, "6F1B2A52-4C8E-5D0A-9B7E-3A1C2D4E5F60"),  # upper case hex
    (ID, "6f1b2a52-4c8e-0d0a-9b7e-3a1c2d4e5f60"),  # version 0
    (ID, "6f1b2a52-4c8e-9d0a-9b7e-3a1c2d4e5f60"),  # version 9
    (ID, "6f1b2a52-4c8e-5d0a-7b7e-3a1c2d4e5f60"),  # variant 7
    (ID, "6f1b2a524c8e5d0a9b7e3a1c2d4e5f60"),  # no hyphens
    (ID, "11111111-1111-4111-8111-111111111111\n"),  # Python's `$` would accept it
    (ID, "x11111111-1111-4111-8111-111111111111"),  # fullmatch, not search
    (ID, "11111111-1111-4111-8111-1111111111111"),
    (OPAQUE, ""),
    (OPAQUE, "-x"),
    (OPAQUE, ".x"),
    (OPAQUE, "_x"),  # the first character is a letter or digit
    (OPAQUE, "a" * 129),
    (OPAQUE, "a b"),
    (OPAQUE, "a/b"),
    (OPAQUE, "wp\n"),
    (OPAQUE, "é"),
    (OPAQUE, "a\u0661"),  # a non-ASCII digit
    (ACCOUNT, ""),
    (ACCOUNT, "-a"),
    (ACCOUNT, ".a"),
    (ACCOUNT, "A" * 65),
    (ACCOUNT, "a b"),
    (ACCOUNT, "a/b"),
    (ACCOUNT, "a\n"),
    (ACCOUNT, "ä"),
]


def _name(case: tuple[TypeAdapter[Any], str]) -> str:
    adapter, value = case
    return f"{ {ID: 'Id', OPAQUE: 'Opaque', ACCOUNT: 'AccountName'}[adapter] }-{value[:12]!r}"


@pytest.mark.parametrize("case", ACCEPTED, ids=_name)
def test_accepted(case):
    adapter, value = case
    assert adapter.validate_python(value) == value


@pytest.mark.parametrize("case", REFUSED, ids=_name)
def test_refused_as_an_invalid_value(case):
    adapter, value = case
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python(value)
    [error] = caught.value.errors()
    assert error["type"] != "unknown_component"


@pytest.mark.parametrize("adapter", [ID, OPAQUE, ACCOUNT], ids=["Id", "Opaque", "AccountName"])
@pytest.mark.parametrize("value", [1, None, b"a", ["a"]])
def test_only_strings(adapter, value):
    with pytest.raises(ValidationError):
        adapter.validate_python(value)
