"""Accounts rules (pure): Site name rules, duplicates, nativeUid, ordering, storage layout."""

from __future__ import annotations

import hashlib
import secrets
import uuid

import pytest
from pydantic import TypeAdapter, ValidationError

from chalicelib.accounts.decision import (
    RETIRED,
    STALE,
    UNKNOWN_RESOURCE,
    Accepted,
    Rejected,
    check_accounts,
    confirmed_count,
    decide,
    set_fingerprint,
)
from chalicelib.accounts.models import Account, AccountsRequest, NativeUid
from chalicelib.accounts.names import valid_account_reference
from chalicelib.accounts.sets import (
    BUCKETS,
    PART_BYTES,
    SetHeader,
    StoredAccount,
    bucket_of,
    carry_over,
    content_digest,
    decode_rows,
    encode_bucket,
    part_index,
)
from chalicelib.allocations.repository import AllocationRecord
from chalicelib.allocations.rules import Observed, status_for
from chalicelib.contract.validation import validate_model
from chalicelib.errors import BadRequest
from tests.support.view_factories import account, accounts_report


@pytest.mark.parametrize(
    ("site", "name", "valid"),
    [
        ("k8s", "member-a", True),
        ("k8s", "member-0", True),
        ("k8s", "member-alice-1", True),
        ("k8s", "member--x", True),
        ("k8s", "member-" + "a" * 56, True),  # 63 characters
        ("k8s", "member-" + "a" * 57, False),  # 64 characters
        ("k8s", "member-", False),
        ("k8s", "member-a-", False),
        ("k8s", "member-Alice", False),
        ("k8s", "member-a_b", False),
        ("k8s", "member-a.b", False),
        ("k8s", "alice", False),
        ("k8s", "Member-a", False),
        ("k8s", "xmember-a", False),
        ("slurm", "alice", True),
        ("slurm", "_svc", True),
        ("slurm", "a.b_c-d9", True),
        ("slurm", "a" * 32, True),
        ("slurm", "a" * 33, False),
        ("slurm", "1alice", False),
        ("slurm", "-alice", False),
        ("slurm", "Alice", False),
        ("slurm", "al:ice", False),
        ("slurm", "member-a", True),
        ("other", "alice", False),
    ],
)
def test_account_reference_rules(site: str, name: str, valid: bool) -> None:
    assert valid_account_reference(site, name) is valid


def _accounts(*items: dict) -> list[Account]:
    return [Account.model_validate(i) for i in items]


P1, P2 = str(uuid.uuid4()), str(uuid.uuid4())


@pytest.mark.parametrize(
    ("site", "accounts", "code"),
    [
        ("k8s", [account(P1, "member-a"), account(P2, "member-b")], None),
        ("k8s", [account(P1, "member-a"), account(P1, "member-b")], "duplicate_party"),
        ("k8s", [account(P1, "member-a"), account(P2, "member-a")], "duplicate_account_reference"),
        ("k8s", [account(P1, "alice")], "invalid_account_reference"),
        ("slurm", [account(P1, "member-a")], None),
        ("slurm", [account(P1, "1abc")], "invalid_account_reference"),
        ("k8s", [], None),
    ],
)
def test_check_accounts(site: str, accounts: list[dict], code: str | None) -> None:
    parsed = _accounts(*accounts)
    if code is None:
        check_accounts(site, parsed)
    else:
        with pytest.raises(BadRequest) as raised:
            check_accounts(site, parsed)
        assert raised.value.code == code


@pytest.mark.parametrize(
    ("native_uid", "valid"),
    [
        ("a", True),
        ("x" * 256, True),
        ("é" * 256, True),
        ("\U0001f600" * 256, True),
        ("", False),
        ("x" * 257, False),
        ("a b", False),
        ("a\tb", False),
        ("a\u00a0b", False),  # NBSP is ECMA whitespace
        ("a\ufeffb", False),  # ZWNBSP is ECMA whitespace (not Python's)
        ("a\u2028b", False),
        ("a\u3000b", False),
        ("a\x1cb", True),  # a separator Python calls space, ECMA does not
        ("a\ud800b", False),  # lone surrogate
        (12, False),
    ],
)
def test_native_uid(native_uid: object, valid: bool) -> None:
    body = accounts_report([{**account(), "nativeUid": native_uid}])
    if valid:
        assert validate_model(AccountsRequest, body).accounts[0].native_uid == native_uid
    else:
        with pytest.raises(BadRequest) as raised:
            validate_model(AccountsRequest, body)
        assert raised.value.code == "invalid_request"
        with pytest.raises(ValidationError) as refused:
            TypeAdapter(NativeUid).validate_python(native_uid)
        assert [(e["type"], e["msg"]) for e in refused.value.errors()] == [("native_uid", "not a native UID")]


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b["accounts"][0].update(generation=0),
        lambda b: b["accounts"][0].update(generation=1.5),
        lambda b: b["accounts"][0].update(generation="1"),
        lambda b: b["accounts"][0].update(state="gone"),
        lambda b: b["accounts"][0].update(extra=1),
        lambda b: b["accounts"][0].pop("bindingId"),
        lambda b: b["accounts"][0].update(partyId="not-an-id"),
        lambda b: b["accounts"][0].update(accountReference="-x"),
        lambda b: b.update(observedAt="2026-02-30T10:00:00Z"),
        lambda b: b.update(accounts=[account() for _ in range(4097)]),
        lambda b: b.update(accounts=None),
        lambda b: b.pop("resourceRef"),
    ],
)
def test_request_schema_refusals(mutate) -> None:
    body = accounts_report()
    mutate(body)
    with pytest.raises(BadRequest):
        validate_model(AccountsRequest, body)


def _allocation(site: str = "k8s", state: str = "OK") -> AllocationRecord:
    observed = Observed("p", state, False, "ns", {"cpu": 1}, {"cpu": 1})
    return AllocationRecord("a", site, "res", "off", "wp", status_for(observed), None,
                            "2026-01-01T00:00:00Z", "fp", 1, 1)


def _header(observed_at: str, fp: str = "same") -> SetHeader:
    return SetHeader(1, observed_at, fp, 0, 0, {})


T = "2026-03-01T10:00:00Z"


@pytest.mark.parametrize(
    ("allocation", "current", "observed_at", "fp", "expected"),
    [
        (None, None, T, "same", Rejected(UNKNOWN_RESOURCE)),
        (_allocation(site="slurm"), None, T, "same", Rejected(UNKNOWN_RESOURCE)),
        (_allocation(state="Terminated"), None, T, "same", Rejected(RETIRED)),
        (_allocation(state="Terminated"), _header(T), "2027-01-01T00:00:00Z", "same", Rejected(RETIRED)),
        (_allocation(), None, T, "same", Accepted(changed=True)),
        (_allocation(), _header(T), "2026-03-01T09:59:59.999Z", "same", Rejected(STALE)),
        (_allocation(), _header(T), "2026-03-01T11:00:00+01:00", "same", Accepted(changed=False)),
        (_allocation(), _header(T), "2026-03-01T10:00:00.000Z", "other", Rejected(STALE)),
        (_allocation(), _header(T), "2026-03-01T10:00:00.0001Z", "other", Accepted(changed=True)),
        (_allocation(), _header(T), "2026-03-01T10:00:00.0001Z", "same", Accepted(changed=True)),
    ],
)
def test_decide(allocation, current, observed_at, fp, expected) -> None:
    assert decide("k8s", allocation, current, observed_at, fp) == expected


def test_set_fingerprint_ignores_order() -> None:
    a, b = _accounts(account(P1, "member-a"), account(P2, "member-b"))
    assert set_fingerprint([a, b]) == set_fingerprint([b, a])
    assert content_digest([a, b]) == content_digest([b, a])
    assert set_fingerprint([a]) != set_fingerprint([a, b])


def test_confirmed_count_counts_the_ready_accounts() -> None:
    accounts = _accounts(account(P1, "member-a"), account(P2, "member-b", state="incomplete"),
                         account(str(uuid.uuid4()), "member-c"))
    assert confirmed_count(accounts) == 2
    assert confirmed_count(accounts[1:2]) == 0
    assert confirmed_count([]) == 0


def test_carry_over_records_a_remade_account() -> None:
    first = carry_over(_accounts(account(P1, "member-a", native_uid="uid-1"))[0], None, "t1")
    assert (first.since, first.incarnation) == ("t1", 1)
    same = carry_over(_accounts(account(P1, "member-a", native_uid="uid-1", state="incomplete"))[0], first, "t2")
    assert (same.since, same.incarnation, same.ready) == ("t1", 1, False)
    remade = carry_over(_accounts(account(P1, "member-a", native_uid="uid-2"))[0], same, "t3")
    assert (remade.native_uid, remade.since, remade.incarnation) == ("uid-2", "t3", 2)


@pytest.mark.parametrize(
    ("party_id", "bucket"),
    [
        ("11111111-1111-4111-8111-111111111111", "37"),
        ("33333333-3333-4333-8333-333333333333", "17"),
        ("00000000-0000-4000-8000-000000000000", "32"),
        ("ffffffff-ffff-4fff-bfff-ffffffffffff", "17"),
    ],
)
def test_bucket_of_is_pinned(party_id: str, bucket: str) -> None:
    # Stored sets are found by these buckets: any change to bucket_of orphans them.
    assert bucket_of(party_id) == bucket
    digest = hashlib.sha256(party_id.encode("ascii")).digest()
    assert bucket == f"{int.from_bytes(digest[:4], 'big') % 64:02d}"


def test_buckets_spread() -> None:
    parties = [str(uuid.uuid4()) for _ in range(4096)]
    used = {bucket_of(p) for p in parties}
    assert len(used) == BUCKETS


def _stored(party: str, uid_len: int = 256) -> StoredAccount:
    return StoredAccount(party, "member-" + party[:8], secrets.token_hex(uid_len // 2), "b" * 128, 7, True,
                         "2026-03-01T10:00:00Z", 1)


def test_small_bucket_is_one_part() -> None:
    rows = [_stored(str(uuid.uuid4())) for _ in range(64)]
    encoded = encode_bucket("07", "c", rows)
    assert len(encoded.parts) == 1 and encoded.splits == ()
    assert decode_rows(encoded.parts[0]) == sorted(rows, key=lambda a: a.party_id)


def test_oversized_bucket_splits_by_party_range_and_every_party_is_found() -> None:
    # All 4,096 accounts in one bucket (partyIds chosen to collide), nativeUids incompressible.
    rows = [_stored(str(uuid.uuid4())) for _ in range(4096)]
    encoded = encode_bucket("00", "c", rows)
    assert len(encoded.parts) > 1
    assert all(len(p) <= PART_BYTES for p in encoded.parts)
    assert list(encoded.splits) == sorted(encoded.splits)
    decoded = [decode_rows(p) for p in encoded.parts]
    for row in rows:
        assert row in decoded[part_index(encoded.splits, row.party_id)]
