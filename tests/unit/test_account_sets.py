"""How an account set is laid out in items (pure): the stored row, digests, part keys, splitting."""

from __future__ import annotations

import hashlib
import json
import random
import uuid
import zlib

from chalicelib.accounts.models import Account
from chalicelib.accounts.sets import (
    PART_BYTES,
    EncodedBucket,
    SetHeader,
    StoredAccount,
    bucket_of,
    carry_over,
    content_digest,
    decode_rows,
    encode_bucket,
    group_by_bucket,
    part_digest,
    part_sk,
)
from tests.support.view_factories import account

P1, P2 = "11111111-1111-4111-8111-111111111111", "33333333-3333-4333-8333-333333333333"


def _account(**kw) -> Account:
    return Account.model_validate(account(**kw))


def test_the_stored_row_is_pinned() -> None:
    ready = StoredAccount(P1, "member-a", "uid-é", "sb-1", 3, True, "2026-03-01T10:00:00Z", 2)
    waiting = StoredAccount(P2, "member-b", "uid-2", "sb-2", 1, False, "2026-03-01T10:00:00Z", 1)
    assert ready.row() == [P1, "member-a", "uid-é", "sb-1", 3, 1, "2026-03-01T10:00:00Z", 2]
    assert waiting.row()[5] == 0
    assert [StoredAccount.from_row(a.row()) for a in (ready, waiting)] == [ready, waiting]


def test_a_bucket_is_stored_as_compressed_compact_utf8_json_rows() -> None:
    rows = [StoredAccount(P2, "member-b", "uid-é", "sb-2", 1, False, "t", 1),
            StoredAccount(P1, "member-a", "uid-1", "sb-1", 3, True, "t", 2)]
    encoded = encode_bucket("07", "content-7", rows)
    assert (encoded.bucket, encoded.content, encoded.splits) == ("07", "content-7", ())
    text = zlib.decompress(encoded.parts[0]).decode("utf-8")
    assert text == (f'[["{P1}","member-a","uid-1","sb-1",3,1,"t",2],'
                    f'["{P2}","member-b","uid-é","sb-2",1,0,"t",1]]')  # sorted by partyId
    assert decode_rows(encoded.parts[0]) == sorted(rows, key=lambda a: a.party_id)
    assert encoded.part_digests == (hashlib.sha256(encoded.parts[0]).hexdigest()[:32],)


def test_content_digest_is_pinned_and_order_free() -> None:
    a, b = _account(party_id=P1, reference="member-a", native_uid="u1"), _account(party_id=P2, reference="member-b",
                                                                                  native_uid="u2")
    rows = sorted([[P1, "member-a", "u1", "sb-1", 1, "ready"], [P2, "member-b", "u2", "sb-1", 1, "ready"]])
    canonical = json.dumps(rows, separators=(",", ":"))
    assert content_digest([b, a]) == hashlib.sha256(canonical.encode()).hexdigest()[:32]


def test_carry_over_copies_what_was_reported() -> None:
    reported = _account(party_id=P1, reference="member-a", native_uid="uid-1", binding_id="sb-7", generation=4,
                        state="incomplete")
    stored = carry_over(reported, None, "t1")
    assert stored == StoredAccount(P1, "member-a", "uid-1", "sb-7", 4, False, "t1", 1)


def test_part_keys_and_digests() -> None:
    assert [part_sk("07", i) for i in range(3)] == ["b07", "b07.1", "b07.2"]
    header = SetHeader(1, "t", "fp", 5, 4, {"07": ("c", 3), "12": ("d", 1)})
    assert header.part_sks("07") == ["b07", "b07.1", "b07.2"]
    assert header.part_sks("12") == ["b12"]
    assert part_digest(b"part") == hashlib.sha256(b"part").hexdigest()[:32]


def test_group_by_bucket() -> None:
    accounts = [_account(party_id=str(uuid.UUID(int=i, version=4))) for i in range(40)]
    groups = group_by_bucket(accounts)
    assert sum(len(g) for g in groups.values()) == 40
    for bucket, group in groups.items():
        assert all(bucket_of(a.party_id) == bucket for a in group)
        assert group == [a for a in accounts if bucket_of(a.party_id) == bucket]  # report order kept


def _random_text(chars: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(chr(rng.randrange(0x100, 0x800)) for _ in range(chars))


def _uid_encoding_to(size: int, seed: int) -> str:
    """Random text whose one-account encoding is about `size` bytes (measured: zlib's ratio on it)."""
    sample = _random_text(20_000, seed)
    per_char = len(encode_bucket("00", "c", [_stored("p", sample)]).parts[0]) / len(sample)
    return _random_text(int(size / per_char), seed)


def _stored(party: str, uid: str) -> StoredAccount:
    return StoredAccount(party, "member-x", uid, "sb-1", 1, True, "t", 1)


def test_an_oversized_bucket_takes_the_fewest_balanced_parts() -> None:
    # Seven accounts sorted p0..p6; p0 and p3 are big (about 0.7 and 0.4 of a part), the rest tiny.
    # Two balanced chunks of 4 hold p0 and p3 together (too big); three chunks of 3 fit: 3 parts,
    # split before p3 and p6. More parts than needed (chunks of 2 or 1) is a regression.
    big, medium = _uid_encoding_to(int(PART_BYTES * 0.7), 1), _uid_encoding_to(int(PART_BYTES * 0.4), 2)
    rows = [_stored(f"p{i}", big if i == 0 else medium if i == 3 else "u") for i in range(7)]
    encoded = encode_bucket("00", "c", list(reversed(rows)))
    assert isinstance(encoded, EncodedBucket)
    assert encoded.splits == ("p3", "p6")
    assert [[a.party_id for a in decode_rows(p)] for p in encoded.parts] == [["p0", "p1", "p2"], ["p3", "p4", "p5"],
                                                                             ["p6"]]
    assert all(len(p) <= PART_BYTES for p in encoded.parts)
    assert (encoded.bucket, encoded.content) == ("00", "c")


def _account_encoding_exactly(size: int) -> StoredAccount:
    """An account whose bucket encoding alone is exactly `size` bytes (random text, then digits to tune)."""
    from chalicelib.accounts.sets import _encode

    uid = _uid_encoding_to(size - 3000, 1)
    for seed in range(5, 25):
        rng = random.Random(seed)
        digits = "".join(rng.choice("0123456789") for _ in range(20_000))

        def account_with(k: int, digits: str = digits) -> StoredAccount:
            return StoredAccount("p0", "member-x", uid, "sb-" + digits[:k], 1, True, "t", 1)

        lo, hi = 0, len(digits)
        while lo < hi:  # the first k whose encoding reaches `size`
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if len(_encode([account_with(mid)])) < size else (lo, mid)
        if len(_encode([account_with(lo)])) == size:
            return account_with(lo)
    raise AssertionError(f"no account encodes to exactly {size} bytes")


def test_a_part_of_exactly_part_bytes_is_allowed() -> None:
    exact = _account_encoding_exactly(PART_BYTES)
    encoded = encode_bucket("00", "c", [_stored("p1", "u"), exact])
    assert len(encoded.parts[0]) == PART_BYTES
    assert encoded.splits == ("p1",)
    assert [[a.party_id for a in decode_rows(p)] for p in encoded.parts] == [["p0"], ["p1"]]
