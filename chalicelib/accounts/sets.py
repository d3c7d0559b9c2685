"""How an allocation's confirmed account set is laid out in items (pure).

The set is split into `BUCKETS` buckets by a hash of the partyId, so the
account of one (allocation, party) is found by one key: (`ACCTS#<allocation>`,
`b<bucket>`). Each bucket's accounts are sorted by partyId and stored as
zlib-compressed JSON rows; compression keeps reports of realistic content far
below DynamoDB's 4 MB transaction limit, so a whole report is written in ONE
transaction (a set that cannot fit is refused before the write: docs/limits.md).
A bucket bigger than `PART_BYTES` (only when partyIds were chosen to collide) is
split into parts `b<bucket>.<n>` by partyId range; its head lists the ranges
(`splits`) and each part's digest, so a reader finds the right part and can
tell a part from another report.

A stored account keeps what a launch needs later: the reference, nativeUid,
bindingId and generation the agent reported, whether it is ready, and its
history: `since` (observedAt of the first report that listed this nativeUid
for the Party) and `incarnation` (1 for the first native account seen, +1 each
time the nativeUid changed: the account was deleted and made again). A re-made
account is recorded as a new incarnation, never merged into the old one.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from chalicelib.accounts.models import Account
from chalicelib.idempotency import fingerprint

BUCKETS = 64
# Raw bytes per stored part: DynamoDB's item limit is 400 KB; binary values travel
# base64-encoded and some emulators count that form, so stay well below it.
PART_BYTES = 280_000
_COMPRESSION_LEVEL = 6


def bucket_of(party_id: str) -> str:
    digest = hashlib.sha256(party_id.encode("ascii")).digest()
    return f"{int.from_bytes(digest[:4], 'big') % BUCKETS:02d}"


def reported_row(account: Account) -> list[Any]:
    """What the agent said about one account, in a fixed shape (for digests)."""
    return [account.party_id, account.account_reference, account.native_uid, account.binding_id,
            account.generation, account.state]


def content_digest(accounts: Iterable[Account]) -> str:
    """Digest of a set of reported accounts: order-free (the report is a set)."""
    return fingerprint(sorted(reported_row(a) for a in accounts))[:32]


@dataclass(frozen=True)
class StoredAccount:
    party_id: str
    account_reference: str
    native_uid: str
    binding_id: str
    generation: int
    ready: bool
    since: str
    incarnation: int

    def row(self) -> list[Any]:
        return [self.party_id, self.account_reference, self.native_uid, self.binding_id, self.generation,
                1 if self.ready else 0, self.since, self.incarnation]

    @classmethod
    def from_row(cls, row: list[Any]) -> StoredAccount:
        party, reference, uid, binding, generation, ready, since, incarnation = row
        return cls(party, reference, uid, binding, int(generation), bool(ready), since, int(incarnation))


def carry_over(reported: Account, previous: StoredAccount | None, observed_at: str) -> StoredAccount:
    """The stored form of a reported account, continuing its previous record when it is the same one.

    Same nativeUid: the same native account, so its history continues.
    Another nativeUid: the account was re-made: a new incarnation from now on.
    """
    if previous is None:
        since, incarnation = observed_at, 1
    elif previous.native_uid == reported.native_uid:
        since, incarnation = previous.since, previous.incarnation
    else:
        since, incarnation = observed_at, previous.incarnation + 1
    return StoredAccount(
        party_id=reported.party_id, account_reference=reported.account_reference,
        native_uid=reported.native_uid, binding_id=reported.binding_id, generation=reported.generation,
        ready=reported.ready, since=since, incarnation=incarnation,
    )


def _encode(accounts: list[StoredAccount]) -> bytes:
    raw = json.dumps([a.row() for a in accounts], separators=(",", ":"), ensure_ascii=False)
    return zlib.compress(raw.encode("utf-8"), _COMPRESSION_LEVEL)


def decode_rows(data: bytes) -> list[StoredAccount]:
    return [StoredAccount.from_row(row) for row in json.loads(zlib.decompress(data).decode("utf-8"))]


def part_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def part_sk(bucket: str, index: int) -> str:
    return f"b{bucket}" if index == 0 else f"b{bucket}.{index}"


@dataclass(frozen=True)
class EncodedBucket:
    """One bucket ready to store: its parts (head first) and how to find a Party among them."""

    bucket: str
    content: str  # content_digest of the reported accounts in this bucket
    parts: tuple[bytes, ...]
    splits: tuple[str, ...]  # first partyId of parts[1:], ascending

    @property
    def part_digests(self) -> tuple[str, ...]:
        return tuple(part_digest(p) for p in self.parts)


def encode_bucket(bucket: str, content: str, accounts: list[StoredAccount]) -> EncodedBucket:
    ordered = sorted(accounts, key=lambda a: a.party_id)
    whole = _encode(ordered)
    if len(whole) <= PART_BYTES:
        return EncodedBucket(bucket, content, (whole,), ())
    count = math.ceil(len(whole) / PART_BYTES)
    while True:
        size = math.ceil(len(ordered) / count)
        chunks = [ordered[i:i + size] for i in range(0, len(ordered), size)]
        parts = [_encode(chunk) for chunk in chunks]
        if all(len(p) <= PART_BYTES for p in parts):
            return EncodedBucket(bucket, content, tuple(parts), tuple(c[0].party_id for c in chunks[1:]))
        count += 1


def part_index(splits: list[str] | tuple[str, ...], party_id: str) -> int:
    """Which part of a bucket holds the Party (0 is the head)."""
    return bisect.bisect_right(list(splits), party_id)


@dataclass(frozen=True)
class SetHeader:
    """The pointer to the current set: what was reported last, and which buckets hold it.

    `version` rises with every write of the header and conditions every write
    (optimistic concurrency); `buckets` maps each non-empty bucket to
    (content digest, number of parts).
    """

    version: int
    observed_at: str
    fingerprint: str
    count: int
    confirmed: int
    buckets: dict[str, tuple[str, int]]

    def part_sks(self, bucket: str) -> list[str]:
        _, parts = self.buckets[bucket]
        return [part_sk(bucket, i) for i in range(parts)]


@dataclass(frozen=True)
class AccountSet:
    """A whole stored set as read: its header (None when nothing was ever stored) and accounts by partyId."""

    header: SetHeader | None
    accounts: dict[str, StoredAccount]


def group_by_bucket(accounts: Iterable[Account]) -> dict[str, list[Account]]:
    groups: dict[str, list[Account]] = {}
    for account in accounts:
        groups.setdefault(bucket_of(account.party_id), []).append(account)
    return groups
