"""The commitment sync's items in the service table (the DynamoDB adapter; the client is injected).

| item                             | pk       | sk                            | gsi1pk, gsi1sk                       |
|----------------------------------|----------|-------------------------------|--------------------------------------|
| reservation (one per commitment) | CMTRES   | <commitment uuid>             | CMTRESP#<project>, <status>#<uuid>   |
| run record                       | CMTRUN   | <start ms, 15 digits>#<runId> | -                                    |
| the lease (one pass at a time)   | CMTLEASE | -                             | -                                    |

Reservations share one partition, so a pass reads them all with one consistent Query
(no Scan) of what it needs (sk, record, revision), in pages of RESERVATIONS_PAGE. The record is
one JSON string attribute (`record`; items written before issue 14 hold it as a map, read
alike) and the status is also a top-level attribute, for the listing's filter: a map is
one AttributeValue per field, and the embedded store (moto) spends most of a Query
serializing those (500 map records took 2 s unloaded and 12 s on a busy machine, past
the 5 s read timeout; as strings, 0.3 s). The project index entry serves
`?projectId=` listings. A reservation's `revision` is its concurrency token: every write
is conditioned on the revision read (or on absence). `released` reservations carry the
table's TTL attribute (30 days after the release, or after the commitment's expiry while
Limes still lists it); the commitment's own expiry is the record's `expiresAt`
inside `record`, not the item's TTL (`released_ttl` says when). Run records keep 90 days.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from chalicelib.commitments.models import Reservation
from chalicelib.commitments.rules import MISSING_FROM_LIMES, PROJECT_GONE, canonical_uuid
from chalicelib.store.codec import from_item, key, to_item
from chalicelib.store.errors import store_errors
from chalicelib.store.lease import Lease
from chalicelib.store.ops import batch_get, get_item, put_if, query_all, query_pages
from chalicelib.store.schema import GSI1, TTL_ATTRIBUTE

RESERVATIONS_PK = "CMTRES"
RUNS_PK = "CMTRUN"
LEASE_PK = "CMTLEASE"
PASS_LEASE = Lease(key(LEASE_PK))  # one pass at a time (chalicelib/store/lease.py)
PROJECT_INDEX = "CMTRESP#"
RELEASED_TTL_SECONDS = 30 * 24 * 3600
RUN_TTL_SECONDS = 90 * 24 * 3600
PAGE_LIMIT = 100
RESERVATIONS_PAGE = 200  # items per Query page of the pass's read: each call stays short on any store
TOKEN_MAX_CHARS = 4096  # a page token is a few hundred characters; anything longer is not one of ours
# Release reasons after which Limes lists the commitment no more (it hides expired and superseded ones).
GONE_FROM_LIMES = frozenset({MISSING_FROM_LIMES, PROJECT_GONE, "expired", "superseded"})


class InvalidToken(Exception):
    """A `nextToken` this store did not issue for this listing."""


@dataclass(frozen=True)
class Stored:
    record: Reservation
    revision: int


def released_ttl(record: Reservation, now: float) -> int:
    """When a released reservation leaves the table: 30 days after its release, or, while Limes still lists
    the commitment (fully used, nothing to hold, waiting after a hold), 30 days after it expires. Otherwise
    the item would vanish under a commitment that is still listed and be written again: a write in an
    unchanged world."""
    start = int(now)
    if record.reason not in GONE_FROM_LIMES and record.expires_at is not None:
        start = max(start, record.expires_at)
    return start + RELEASED_TTL_SECONDS


def reservation_key(uuid: str) -> dict[str, Any]:
    return key(RESERVATIONS_PK, uuid)


def run_sk(started_ms: int, run_id: str) -> str:
    return f"{started_ms:015d}#{run_id}"


def _stored(item: dict[str, Any]) -> Stored:
    record = item["record"]
    return Stored(Reservation.from_dict(json.loads(record) if isinstance(record, str) else record),
                  int(item["revision"]))


def encode_token(last_key: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(last_key, sort_keys=True, separators=(",", ":")).encode()).decode()


def _nesting_at_most(text: str, depth: int) -> bool:
    """Whether JSON text nests arrays and objects at most `depth` deep (strings skipped): checked before
    json.loads, whose recursion a deeply nested token would otherwise exhaust (RecursionError, a 503)."""
    level, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            level += 1
            if level > depth:
                return False
        elif char in "]}":
            level -= 1
    return True


def decode_token(token: str, expected: dict[str, str | None]) -> dict[str, Any]:
    """The ExclusiveStartKey a token stands for, decided by a bounded parser: at most TOKEN_MAX_CHARS of
    URL-safe base64, JSON at most two levels deep, exactly this listing's key attributes (`expected`: the
    index attributes besides pk and sk, each with its required value or None for any) as strings, the
    reservations' partition, a canonical commitment UUID as sk and, on the project index, `<status>#<sk>`."""
    if not 0 < len(token) <= TOKEN_MAX_CHARS:
        raise InvalidToken()
    try:
        text = base64.urlsafe_b64decode(token.encode("ascii")).decode("utf-8")
    except (ValueError, binascii.Error, UnicodeError):
        raise InvalidToken() from None
    if not _nesting_at_most(text, 2):
        raise InvalidToken()
    try:
        raw = json.loads(text)
    except ValueError:
        raise InvalidToken() from None
    if not isinstance(raw, dict) or set(raw) != set(expected) | {"pk", "sk"}:
        raise InvalidToken()
    for name, value in raw.items():
        if not (isinstance(value, dict) and set(value) == {"S"} and isinstance(value["S"], str)):
            raise InvalidToken()
        if expected.get(name) is not None and value["S"] != expected[name]:
            raise InvalidToken()
    sk = raw["sk"]["S"]
    if raw["pk"]["S"] != RESERVATIONS_PK or not canonical_uuid(sk):
        raise InvalidToken()
    if "gsi1sk" in raw:
        status, hash_, uuid = raw["gsi1sk"]["S"].partition("#")
        if not (hash_ and uuid == sk and status.isascii() and status.isalpha()):
            raise InvalidToken()
    return raw


class CommitmentStore:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    # --- reservations ---------------------------------------------------------------------------

    def reservations(self) -> dict[str, Stored]:
        """Every reservation, by commitment uuid: one consistent Query of the reservations' partition, only
        the attributes the pass reads, in bounded pages."""
        items = query_all(self.client, self.table, KeyConditionExpression="pk = :pk",
                          ProjectionExpression="sk, #record, revision", ExpressionAttributeNames={"#record": "record"},
                          ExpressionAttributeValues={":pk": {"S": RESERVATIONS_PK}}, Limit=RESERVATIONS_PAGE)
        return {item["sk"]: _stored(item) for item in items}

    def put_reservation(self, record: Reservation, read: Stored | None, now: float) -> bool:
        """Write the record if it is still as read (revision, or absent); False when someone else wrote it."""
        revision = (read.revision if read else 0) + 1
        item: dict[str, Any] = {
            "pk": RESERVATIONS_PK, "sk": record.commitment_uuid, "kind": "commitment-reservation",
            "record": json.dumps(record.to_dict(), sort_keys=True, separators=(",", ":")), "status": record.status,
            "revision": revision, "updatedAt": int(now),
            "gsi1pk": f"{PROJECT_INDEX}{record.project_id}", "gsi1sk": f"{record.status}#{record.commitment_uuid}",
        }
        if record.status == "released":
            item[TTL_ATTRIBUTE] = released_ttl(record, now)
        if read is None:
            return put_if(self.client, self.table, to_item(item), "attribute_not_exists(pk)")
        return put_if(self.client, self.table, to_item(item), "revision = :read",
                      values={":read": {"N": str(read.revision)}})

    def reservation_page(self, project_id: str | None, status: str | None, token: str | None,
                         limit: int = PAGE_LIMIT) -> tuple[list[Stored], str | None]:
        """One page (at most `limit`) of reservations with their revisions, by uuid; a project's through its
        index entry."""
        if project_id is not None:
            return self._project_page(project_id, status, token, limit)
        query: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk", "Limit": limit,
            "ExpressionAttributeValues": {":pk": {"S": RESERVATIONS_PK}},
        }
        if status is not None:
            # The top-level status; items written before issue 14 have it only inside their record map.
            query["FilterExpression"] = "#status = :status OR #rec.#status = :status"
            query["ExpressionAttributeNames"] = {"#rec": "record", "#status": "status"}
            query["ExpressionAttributeValues"][":status"] = {"S": status}
        if token is not None:
            query["ExclusiveStartKey"] = decode_token(token, {})
        # A filter applies after Limit: read on until the page is full or the partition ends.
        records: list[Stored] = []
        while True:
            query["Limit"] = limit - len(records)
            with store_errors():
                page = self.client.query(TableName=self.table, ConsistentRead=True, **query)
            records.extend(_stored(from_item(raw) or {}) for raw in page.get("Items", []))
            last = page.get("LastEvaluatedKey")
            if last is None or len(records) >= limit:
                return records, encode_token(last) if last else None
            query["ExclusiveStartKey"] = last

    def _project_page(self, project_id: str, status: str | None, token: str | None,
                      limit: int) -> tuple[list[Stored], str | None]:
        gsi1pk = f"{PROJECT_INDEX}{project_id}"
        query: dict[str, Any] = {
            "IndexName": GSI1, "ConsistentRead": False, "Limit": limit,
            "KeyConditionExpression": "gsi1pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": gsi1pk}},
        }
        if status is not None:
            query["KeyConditionExpression"] += " AND begins_with(gsi1sk, :status)"
            query["ExpressionAttributeValues"][":status"] = {"S": f"{status}#"}
        if token is not None:
            query["ExclusiveStartKey"] = decode_token(token, {"gsi1pk": gsi1pk, "gsi1sk": None})
        with store_errors():
            page = self.client.query(TableName=self.table, **query)
        # The index is keys-only and lags the table: read the items themselves, keep those still matching.
        uuids = [raw["sk"]["S"] for raw in page.get("Items", [])]
        found = batch_get(self.client, self.table, [reservation_key(u) for u in uuids]) if uuids else {}
        records = []
        for uuid in uuids:
            item = found.get((RESERVATIONS_PK, uuid))
            if item is None:
                continue
            stored = _stored(item)
            if stored.record.project_id == project_id and (status is None or stored.record.status == status):
                records.append(stored)
        last = page.get("LastEvaluatedKey")
        return records, encode_token(last) if last else None

    # --- runs -----------------------------------------------------------------------------------

    def put_run(self, run: dict[str, Any], started: float) -> None:
        item = {"pk": RUNS_PK, "sk": run_sk(int(started * 1000), run["runId"]), "kind": "commitment-run",
                "run": run, TTL_ATTRIBUTE: int(started) + RUN_TTL_SECONDS}
        with store_errors():
            self.client.put_item(TableName=self.table, Item=to_item(_decimal_safe(item)))

    def runs(self, limit: int) -> list[dict[str, Any]]:
        """The most recent runs, newest first."""
        page = next(query_pages(self.client, self.table, KeyConditionExpression="pk = :pk", ScanIndexForward=False,
                                Limit=limit, ExpressionAttributeValues={":pk": {"S": RUNS_PK}}))
        return [item["run"] for item in page]

    # --- the lease ------------------------------------------------------------------------------

    def take_lease(self, owner: str, now: float, seconds: float) -> bool:
        """One pass at a time: the lease is free, or its holder's time is up. False: another pass holds it."""
        return PASS_LEASE.take(self.client, self.table, owner, int(now * 1000), int(seconds * 1000))

    def renew_lease(self, owner: str, now: float, seconds: float) -> bool:
        """Move the lease's end to `now + seconds`, only while it is still ours. False: it is not (it ran out
        and another pass took it, or it is gone)."""
        return PASS_LEASE.renew(self.client, self.table, owner, int(now * 1000), int(seconds * 1000))

    def lease_until(self) -> float | None:
        """When the lease runs out (seconds), None when nobody holds it (for tests and operators)."""
        item = get_item(self.client, self.table, key(LEASE_PK))
        return int(item["until"]) / 1000 if item is not None else None

    def release_lease(self, owner: str) -> None:
        """Give the lease back, only if it is still ours (an expired lease may have passed to another pass)."""
        PASS_LEASE.release(self.client, self.table, owner)


def _decimal_safe(value: Any) -> Any:
    """Floats become Decimals through their repr (boto3's serializer refuses floats)."""
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, dict):
        return {k: _decimal_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decimal_safe(v) for v in value]
    return value
