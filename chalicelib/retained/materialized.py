"""The stored retained list: its header, its chunks, and the change counters it is checked against.

Layout (chalicelib/store/schema.py):
- `RETAINED#<site>` / `-`: the revision item (`revision`, `listHash`) and `changes`, which the
  intake adds 1 to with every applied accepted_item of the Site (same transaction).
- `RETAINED#<site>` / `changes#NN`: `changes`, added 1 to by every applied Project, membership
  (both Sites) and Party Site binding (its Site) event, in the transaction that writes the entity.
- `RETAINED#<site>` / `list`: the header of the stored list: `generation`, `chunks`, `digest`,
  `entries` and `stamp` (every counter's count when the list's inputs were read).
- `RETAINEDLIST#<site>` / `<generation>#<n>`: chunk n of that generation's encoded list (`data`).

A read takes the whole `RETAINED#<site>` partition in one consistent Query (a few hundred bytes:
one read unit), then, when the header's stamp still matches the counters, the header's chunks in
one consistent BatchGet. A new list replaces the header, writes its own chunks and deletes the
previous generation's in one transaction, on condition that the header is still the one it
replaces: a reader holding the old header finds its chunks gone (never mixed with new ones) and
reads again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.errors import Unavailable
from chalicelib.retained.keys import list_chunk_key, list_header_key, site_partition
from chalicelib.retained.rules import (
    CHUNK_BYTES,
    EMPTY_DIGEST,
    RetainedAccount,
    Stamp,
    decode_list,
    encode_list,
    split,
)
from chalicelib.store.codec import to_item
from chalicelib.store.errors import CONDITION_FAILED, error_code, store_errors
from chalicelib.store.ops import TransactionCanceled, batch_get, get_item, query_all, transact
from chalicelib.view.keys import retained_key

# A new list is written in one transaction (at most 100 items, 4 MB): its chunks and the old ones.
MAX_CHUNKS = 10


@dataclass(frozen=True)
class Header:
    generation: int
    chunks: int
    digest: str
    stamp: Stamp


@dataclass(frozen=True)
class SiteState:
    revision: int
    list_hash: str
    counters: Stamp
    header: Header | None = field(default=None)


def read_state(client: Any, table: str, site: str) -> SiteState:
    revision, list_hash, header = 0, EMPTY_DIGEST, None
    counters: dict[str, int] = {}
    partition = query_all(client, table, KeyConditionExpression="pk = :p",
                          ExpressionAttributeValues={":p": {"S": site_partition(site)}})
    for item in partition:
        sk = item["sk"]
        if "changes" in item:
            counters[sk] = int(item["changes"])
        if sk == "-":
            revision = int(item.get("revision", 0))
            list_hash = str(item.get("listHash", EMPTY_DIGEST))
        elif sk == "list":
            header = Header(int(item["generation"]), int(item["chunks"]), str(item["digest"]),
                            {k: int(v) for k, v in item["stamp"].items()})
    return SiteState(revision, list_hash, counters, header)


def _bytes(value: Any) -> bytes:
    return bytes(value.value) if hasattr(value, "value") else bytes(value)


def read_list(client: Any, table: str, site: str, header: Header) -> list[RetainedAccount] | None:
    """The header's list; None when its generation was replaced since the header was read."""
    keys = [list_chunk_key(site, header.generation, n) for n in range(header.chunks)]
    found = batch_get(client, table, keys)
    parts = []
    for chunk_key in keys:
        item = found.get((chunk_key["pk"]["S"], chunk_key["sk"]["S"]))
        if item is None or int(item["generation"]) != header.generation:
            return None
        parts.append(_bytes(item["data"]))
    return decode_list(b"".join(parts))


def store_list(client: Any, table: str, site: str, replaced: Header | None, stamp: Stamp,
               accounts: list[RetainedAccount], digest: str) -> bool:
    """Replace the stored list with `accounts` computed at `stamp`; False when another read replaced
    `replaced` first (its list is at least as new) or when the list is too big to store."""
    chunks = split(encode_list(accounts), CHUNK_BYTES)
    if len(chunks) > MAX_CHUNKS:
        return False
    generation = replaced.generation + 1 if replaced is not None else 1
    header = {**list_header_key(site), **to_item({
        "generation": generation, "chunks": len(chunks), "digest": digest, "entries": len(accounts),
        "stamp": dict(stamp)})}
    if replaced is None:
        condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
    else:
        condition = {"ConditionExpression": "generation = :g",
                     "ExpressionAttributeValues": {":g": {"N": str(replaced.generation)}}}
    ops: list[dict[str, Any]] = [{"Put": {"TableName": table, "Item": header, **condition}}]
    ops += [{"Put": {"TableName": table, "Item": {**list_chunk_key(site, generation, n),
                                                   "generation": {"N": str(generation)}, "data": {"B": data}}}}
            for n, data in enumerate(chunks)]
    if replaced is not None:
        ops += [{"Delete": {"TableName": table, "Key": list_chunk_key(site, replaced.generation, n)}}
                for n in range(replaced.chunks)]
    try:
        transact(client, ops)
    except TransactionCanceled:
        return False
    return True


def read_revision(client: Any, table: str, site: str) -> tuple[int, str]:
    """The Site's revision and the digest of the list it denotes."""
    item = get_item(client, table, retained_key(site)) or {}
    return int(item.get("revision", 0)), str(item.get("listHash", EMPTY_DIGEST))


def claim_revision(client: Any, table: str, site: str, digest: str) -> int | None:
    """The next revision, now denoting `digest`; None when the stored digest already is `digest`."""
    try:
        with store_errors():
            response = client.update_item(
                TableName=table, Key=retained_key(site),
                UpdateExpression="SET listHash = :h ADD revision :one",
                ConditionExpression="attribute_not_exists(listHash) OR listHash <> :h",
                ExpressionAttributeValues={":h": {"S": digest}, ":one": {"N": "1"}},
                ReturnValues="UPDATED_NEW",
                ReturnConsumedCapacity="TOTAL",
            )
    except ClientError as exc:
        if error_code(exc) == CONDITION_FAILED:
            return None
        raise Unavailable() from exc
    return int(response["Attributes"]["revision"]["N"])
