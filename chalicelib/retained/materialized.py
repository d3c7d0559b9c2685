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

from collections.abc import Mapping
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
from chalicelib.store.codec import to_item, to_value
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
    version: int = 0  # rises with every commit, the list's or only its stamp's; absent before issue 18


@dataclass(frozen=True)
class SiteState:
    revision: int
    list_hash: str
    counters: Stamp
    header: Header | None = field(default=None)
    # Counter -> the scopes counted on it since they were last folded into the stored list.
    scopes: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # The Site's item index is whole: no item was written before the intake kept it (the intake before
    # issue 18 counted items as `changes` on the revision item, which the one since never writes).
    indexed: bool = True

    @property
    def pending(self) -> frozenset[str]:
        """Every scope whose rows may differ from the stored list's."""
        return frozenset().union(*self.scopes.values())


def read_state(client: Any, table: str, site: str) -> SiteState:
    revision, list_hash, header, indexed = 0, EMPTY_DIGEST, None, True
    counters: dict[str, int] = {}
    scopes: dict[str, frozenset[str]] = {}
    partition = query_all(client, table, KeyConditionExpression="pk = :p",
                          ExpressionAttributeValues={":p": {"S": site_partition(site)}})
    for item in partition:
        sk = item["sk"]
        if "changes" in item:
            counters[sk] = int(item["changes"])
        if item.get("scopes"):
            scopes[sk] = frozenset(str(s) for s in item["scopes"])
        if sk == "-":
            revision = int(item.get("revision", 0))
            list_hash = str(item.get("listHash", EMPTY_DIGEST))
            indexed = "changes" not in item
        elif sk == "list":
            header = Header(int(item["generation"]), int(item["chunks"]), str(item["digest"]),
                            {k: int(v) for k, v in item["stamp"].items()}, int(item.get("version", 0)))
    return SiteState(revision, list_hash, counters, header, scopes, indexed)


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


def _header_condition(replaced: Header | None) -> dict[str, Any]:
    """The stored header is still the one the list was computed against (every commit moves `version`)."""
    if replaced is None:
        return {"ConditionExpression": "attribute_not_exists(pk)"}
    if replaced.version == 0:
        return {"ConditionExpression": "generation = :g AND attribute_not_exists(version)",
                "ExpressionAttributeValues": {":g": {"N": str(replaced.generation)}}}
    return {"ConditionExpression": "version = :v", "ExpressionAttributeValues": {":v": {"N": str(replaced.version)}}}


def _prune_ops(table: str, site: str, state: SiteState) -> list[dict[str, Any]]:
    """Take the folded scopes off their counters, each only while its count is still the one read
    (a count that moved may have counted one of them again: it stays, and is folded again later)."""
    return [{"Update": {"TableName": table, "Key": {"pk": {"S": site_partition(site)}, "sk": {"S": counter}},
                        "UpdateExpression": "DELETE scopes :s", "ConditionExpression": "changes = :c",
                        "ExpressionAttributeValues": {":s": {"SS": sorted(scopes)},
                                                      ":c": {"N": str(state.counters.get(counter, 0))}}}}
            for counter, scopes in sorted(state.scopes.items())]


def _list_ops(table: str, site: str, replaced: Header | None, stamp: Stamp, accounts: list[RetainedAccount],
              digest: str) -> list[dict[str, Any]]:
    """The header first, then the new generation's chunks, then the deletes of the one it replaces;
    with no header at all when the list is too big to store (a read computes it every time)."""
    chunks = split(encode_list(accounts), CHUNK_BYTES)
    condition = _header_condition(replaced)
    old_chunks = [{"Delete": {"TableName": table, "Key": list_chunk_key(site, replaced.generation, n)}}
                  for n in range(replaced.chunks)] if replaced is not None else []
    if len(chunks) > MAX_CHUNKS:
        if replaced is None:
            return []
        return [{"Delete": {"TableName": table, "Key": list_header_key(site), **condition}}, *old_chunks]
    generation = replaced.generation + 1 if replaced is not None else 1
    header = {**list_header_key(site), **to_item({
        "generation": generation, "chunks": len(chunks), "digest": digest, "entries": len(accounts),
        "stamp": dict(stamp), "version": (replaced.version if replaced is not None else 0) + 1})}
    ops: list[dict[str, Any]] = [{"Put": {"TableName": table, "Item": header, **condition}}]
    ops += [{"Put": {"TableName": table, "Item": {**list_chunk_key(site, generation, n),
                                                   "generation": {"N": str(generation)}, "data": {"B": data}}}}
            for n, data in enumerate(chunks)]
    return ops + old_chunks


def _stamp_ops(table: str, site: str, replaced: Header, stamp: Stamp) -> list[dict[str, Any]]:
    """The same list, now known current at `stamp`: only the header's stamp and version change."""
    condition = _header_condition(replaced)
    return [{"Update": {"TableName": table, "Key": list_header_key(site),
                        "UpdateExpression": "SET stamp = :stamp ADD version :one",
                        "ConditionExpression": condition["ConditionExpression"],
                        "ExpressionAttributeValues": {**condition.get("ExpressionAttributeValues", {}),
                                                      ":stamp": to_value(dict(stamp)), ":one": {"N": "1"}}}}]


def store_list(client: Any, table: str, site: str, state: SiteState, accounts: list[RetainedAccount],
               digest: str, *, unchanged: bool = False) -> bool:
    """Store `accounts`, computed from inputs read after `state`, in place of `state.header`'s list
    and take the scopes `state` counted off the counters, in one transaction.

    `unchanged`: the list is the stored one (only its stamp moves; no chunk is written). False when
    another read committed first (its list is at least as new). A counter whose count moved since
    `state` keeps its scopes (the list is stored without that prune: one more transaction).
    """
    replaced = state.header
    if unchanged and replaced is not None:
        ops = _stamp_ops(table, site, replaced, state.counters)
    else:
        ops = _list_ops(table, site, replaced, state.counters, accounts, digest)
    prunes = _prune_ops(table, site, state)
    for _ in range(2):
        if not ops and not prunes:
            return True
        try:
            transact(client, ops + prunes)
        except TransactionCanceled as canceled:
            if any(canceled.failed(i) for i in range(len(ops))):
                return False
            prunes = [p for n, p in enumerate(prunes) if not canceled.failed(len(ops) + n)]
            continue
        return True
    return False


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
