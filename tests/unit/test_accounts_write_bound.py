"""The cheap bound that lets ordinary accounts reports skip encoding their set twice covers the real write."""

from __future__ import annotations

import random
import string
import uuid
from types import SimpleNamespace

import pytest

from chalicelib.accounts.models import AccountsRequest
from chalicelib.accounts.repository import written_bytes
from chalicelib.accounts.service import _ITEMS_OVERHEAD, _rows_bound, _set_ops, set_fingerprint


def report(count: int, native_uid, observed_at: str = "2026-03-01T10:00:00Z") -> AccountsRequest:
    rnd = random.Random(count)
    accounts = [{
        "partyId": str(uuid.UUID(int=rnd.getrandbits(128), version=4)),
        "accountReference": "member-" + "".join(rnd.choice(string.ascii_lowercase) for _ in range(56)),
        "nativeUid": native_uid(rnd),
        "bindingId": "b" + "".join(rnd.choice(string.ascii_letters) for _ in range(127)),
        "generation": rnd.randrange(1, 2**53),
        "state": "ready",
    } for _ in range(count)]
    return AccountsRequest.model_validate({"requestId": "q", "resourceRef": "res-1", "observedAt": observed_at,
                                           "accounts": accounts})


@pytest.mark.parametrize(
    ("count", "native_uid", "observed_at"),
    [
        (1, lambda r: "1001", "2026-03-01T10:00:00Z"),
        (300, lambda r: "".join(chr(r.randrange(0x10000, 0x10FFFF)) for _ in range(256)), "2026-03-01T10:00:00Z"),
        (300, lambda r: "".join(chr(r.randrange(1, 9)) for _ in range(256)), "2026-03-01T10:00:00Z"),  # \u0001...
        (300, lambda r: '"\\' * 128, "2026-03-01T10:00:00." + "7" * 1000 + "Z"),
        (64, lambda r: "".join(r.choice(string.printable[:94]) for _ in range(256)), "0000-01-01T00:00:00Z"),
    ],
)
def test_the_bound_covers_a_first_write(count, native_uid, observed_at) -> None:
    request = report(count, native_uid, observed_at)
    ops = _set_ops(SimpleNamespace(table="t", client=None), "k8s", "a" * 36, None, request,
                   set_fingerprint(request.accounts))
    assert written_bytes(ops) <= _rows_bound(request) * 1.01 + _ITEMS_OVERHEAD
