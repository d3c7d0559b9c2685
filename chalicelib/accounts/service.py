"""`POST /resource-provisioning/{site}/accounts`: replace a resource's confirmed account set.

Storage choice (see sets.py and repository.py for the layout): the set lives
in at most 64 hash buckets of compressed rows under `ACCTS#<allocationId>`,
plus a header that is the pointer to the current set. A report is applied as
ONE DynamoDB transaction: the saved result, a check that the allocation is
still live at this Site, the new header (conditioned on the version it was
computed from) and only the bucket items whose content changed (puts, and
deletes for buckets that emptied). Compression keeps every report of
realistic content far below the transaction's 4 MB and its item count below
100; a report that could not fit (only reachable with thousands of long,
incompressible nativeUids) is refused as 400 `too_large` before anything is
written (`check_storable`, docs/limits.md). So there is no multi-step write at
all: a store failure at any point leaves the previous set intact, a
repeat converges, and no reader can see a mix of two reports. We chose this
over chunked versioned sets with a pointer flip because it needs no garbage
collection of unreferenced chunks, keeps the (allocation, party) lookup to one
key, and lets an unchanged report (the agent's every cycle) write only the
header: the buckets whose digest did not change are not touched.

Round trips: a replay is 1 (one consistent BatchGet finds the saved result);
a refusal is 1 (nothing is stored); an accepted report is 2 (BatchGet +
transaction), or 3 when buckets that already existed changed (their previous
rows are read to carry each account's history: same nativeUid continues,
another nativeUid is recorded as a re-made account). A lost race (another
writer moved the header or took the requestId) re-reads and decides again.
"""

from __future__ import annotations

from typing import Any

from chalicelib.accounts.decision import (
    MESSAGES,
    Rejected,
    check_accounts,
    confirmed_count,
    decide,
    set_fingerprint,
)
from chalicelib.accounts.models import AccountsRequest
from chalicelib.accounts.repository import (
    SET_WRITE_BYTES,
    allocation_live_op,
    bucket_put_ops,
    header_check_op,
    header_from_item,
    header_key,
    header_put_op,
    part_delete_op,
    part_key,
    rows_of_parts,
    written_bytes,
)
from chalicelib.accounts.sets import (
    SetHeader,
    StoredAccount,
    carry_over,
    content_digest,
    encode_bucket,
    group_by_bucket,
    part_sk,
    reported_row,
)
from chalicelib.allocations.repository import allocation_key, record_from_item
from chalicelib.allocations.rules import allocation_id_for
from chalicelib.contract.results import rejected
from chalicelib.contract.validation import validate_model
from chalicelib.errors import BadRequest, Unavailable
from chalicelib.idempotency import fingerprint
from chalicelib.observability import logger
from chalicelib.store.commands import Command, Outcome, Reread, run_command
from chalicelib.store.keys import KeyId, key_id
from chalicelib.store.ops import Item, Op, batch_get
from chalicelib.store.table import TableAccess

OPERATION = "accounts"
_MAX_TRANSACTION_ITEMS = 100
# JSON text of one stored row beyond its strings: brackets, quotes, commas, the ready flag, the incarnation.
_ROW_OVERHEAD = 64
# Items beyond the rows: per bucket item its names and digests, and the header (observedAt and bucket map).
_ITEMS_OVERHEAD = 64 * 1024
_ESCAPED_CHARACTER = 6  # the longest a character becomes in JSON text (\u0001)


def request_fingerprint(request: AccountsRequest) -> str:
    """Content of a request for idempotency: JSON as data, the accounts list as a set."""
    return fingerprint({
        "requestId": request.request_id,
        "resourceRef": request.resource_ref,
        "observedAt": request.observed_at,
        "accounts": sorted(reported_row(a) for a in request.accounts),
    })


def _previous_accounts(db: TableAccess, allocation_id: str, current: SetHeader,
                       buckets: list[str]) -> dict[str, StoredAccount]:
    """The stored accounts of the given buckets, by partyId (raises Reread when inconsistent)."""
    keys = [part_key(allocation_id, sk) for b in buckets for sk in current.part_sks(b)]
    found = batch_get(db.client, db.table, keys)
    pk = keys[0]["pk"]["S"] if keys else ""
    previous: dict[str, StoredAccount] = {}
    for bucket in buckets:
        content, parts = current.buckets[bucket]
        head = found.get((pk, part_sk(bucket, 0)))
        rows = rows_of_parts(head, [found.get((pk, part_sk(bucket, i))) for i in range(1, parts)])
        if rows is None or head is None or head.get("c") != content:
            raise Reread()
        previous.update((a.party_id, a) for a in rows)
    return previous


def _set_ops(db: TableAccess, site: str, allocation_id: str, current: SetHeader | None,
             request: AccountsRequest, set_fp: str) -> list[Op]:
    """Header put plus the puts and deletes of every bucket item whose content changed."""
    table = db.table
    groups = group_by_bucket(request.accounts)
    contents = {bucket: content_digest(accounts) for bucket, accounts in groups.items()}
    old = current.buckets if current else {}
    changed = [b for b in sorted(groups) if b not in old or old[b][0] != contents[b]]
    previous = _previous_accounts(db, allocation_id, current, [b for b in changed if b in old]) \
        if current else {}

    ops: list[Op] = []
    buckets: dict[str, tuple[str, int]] = {}
    for bucket in sorted(groups):
        if bucket not in changed:
            buckets[bucket] = old[bucket]
            continue
        stored = [carry_over(a, previous.get(a.party_id), request.observed_at) for a in groups[bucket]]
        encoded = encode_bucket(bucket, contents[bucket], stored)
        ops.extend(bucket_put_ops(table, allocation_id, encoded))
        buckets[bucket] = (contents[bucket], len(encoded.parts))
        for index in range(len(encoded.parts), old.get(bucket, ("", 0))[1]):
            ops.append(part_delete_op(table, allocation_id, part_sk(bucket, index)))
    for bucket in sorted(set(old) - set(groups)):
        ops.extend(part_delete_op(table, allocation_id, part_sk(bucket, i)) for i in range(old[bucket][1]))

    header = SetHeader(
        version=(current.version + 1) if current else 1,
        observed_at=request.observed_at,
        fingerprint=set_fp,
        count=len(request.accounts),
        confirmed=confirmed_count(request.accounts),
        buckets=buckets,
    )
    ops.append(header_put_op(table, allocation_id, site, header, current.version if current else None))
    return ops


def _rows_bound(request: AccountsRequest) -> int:
    """Bytes that the set's rows take at most as JSON text, uncompressed, in a first write."""
    return sum(
        len(a.party_id) + len(a.account_reference) + _ESCAPED_CHARACTER * len(a.native_uid) + len(a.binding_id)
        + len(str(a.generation)) + len(request.observed_at) + _ROW_OVERHEAD
        for a in request.accounts
    )


def check_storable(db: TableAccess, site: str, allocation_id: str, request: AccountsRequest,
                   set_fp: str) -> None:
    """400 `too_large` when even a first write of this set could not fit one transaction.

    Decided by the report alone, before anything is read: the items of the set
    written as new (compressed, the way they are stored) are measured with
    DynamoDB's size rules. Only a report whose uncompressed rows could exceed
    the budget pays for encoding them here (compression never grows rows by
    more than a small fraction).
    """
    if _rows_bound(request) * 1.01 + _ITEMS_OVERHEAD <= SET_WRITE_BYTES:
        return
    if written_bytes(_set_ops(db, site, allocation_id, None, request, set_fp)) > SET_WRITE_BYTES:
        raise BadRequest("too_large")


def submit_accounts(db: TableAccess, site: str, data: dict[str, Any], ttl_days: int,
                  ) -> tuple[int, dict[str, Any]]:
    request = validate_model(AccountsRequest, data)
    check_accounts(site, request.accounts)
    allocation_id = allocation_id_for(site, request.resource_ref)
    set_fp = set_fingerprint(request.accounts)
    check_storable(db, site, allocation_id, request, set_fp)
    alloc_key = allocation_key(allocation_id)
    set_key = header_key(allocation_id)
    table = db.table

    def plan(found: dict[KeyId, Item]) -> Outcome:
        current = header_from_item(found.get(key_id(set_key)))
        decision = decide(site, record_from_item(found.get(key_id(alloc_key))), current, request.observed_at, set_fp)
        if isinstance(decision, Rejected):
            # Refusals are not saved: the requestId stays free.
            body = rejected(request.request_id, allocation_id, decision.code, MESSAGES[decision.code])
            return Outcome(422, body, save=False)
        body = {
            "requestId": request.request_id,
            "allocationId": allocation_id,
            "outcome": "accepted",
            "confirmed": confirmed_count(request.accounts),
        }
        if decision.changed:
            set_ops = _set_ops(db, site, allocation_id, current, request, set_fp)
        else:
            set_ops = [header_check_op(table, allocation_id, current.version if current else None)]
        if written_bytes(set_ops) > SET_WRITE_BYTES:
            # Only the history carried from earlier reports (each account's `since`) can bring a set that
            # passed check_storable here; the stored set stays as it is and the same report gets the same answer.
            raise BadRequest("too_large")
        writes = [allocation_live_op(table, allocation_id, site), *set_ops]
        if len(writes) + 1 > _MAX_TRANSACTION_ITEMS:  # cannot happen within the contract's limits; never half-apply
            logger.error("accounts set exceeds one transaction", extra={"items": len(writes) + 1})
            raise Unavailable()
        return Outcome(200, body, writes)

    command = Command(site, OPERATION, request.request_id, allocation_id, request_fingerprint(request))
    return run_command(db.client, table, ttl_days, command,
                       [alloc_key, set_key], plan)
