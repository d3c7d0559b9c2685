"""The stored retained list: its header, its chunks and patch, and the change counters.

Layout (chalicelib/store/schema.py; the intake's items are view/keys.py's):
- `RETAINED#<site>` / `-`: the revision item (`revision`, `listHash`); the intake adds 1 to
  `revision` with every applied accepted_item of the Site. Before issue 18 it also added 1 to
  `changes` there: a Site whose revision item has `changes` has items the item index lacks.
- `RETAINED#<site>` / `changes#NN`: `changes` and `scopes`, the scopes of every applied event
  counted on it since the list last took them in (view/marks.py), written in the event's transaction.
- `RETAINED#<site>` / `list`: the header: `generation`, `chunks`, `digest`, `entries`, `stamp`
  (the counts when the list's inputs were read), `version` (every commit adds 1), `base` and
  `patch` (the list is the chunks of generation `base` with a patch), `baseBytes`.
- `RETAINEDLIST#<site>` / `<generation>#<n>`: chunk n of that generation's encoded list (`data`).
- `RETAINEDLIST#<site>` / `<generation>#patch`: that generation's patch: `scopes` and `data` (the
  rows those scopes have now, replacing the base's rows of them).

A read takes the whole `RETAINED#<site>` partition in one consistent Query (one read unit while no
scope is pending), then the header's chunks (and patch) in one consistent BatchGet. A commit is
one transaction conditioned on the header's `version` that writes the new header, the new chunks
or patch, the deletes of what the old header named and no longer needs, and takes the folded
scopes off each counter on condition that its count is still the one read. A reader holding an
old header finds its chunks or patch gone (never mixed with newer ones) and reads again.
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
    decode_strings,
    encode_list,
    encode_strings,
    patch_list,
    split,
)
from chalicelib.store.codec import key, to_item, to_value
from chalicelib.store.errors import CONDITION_FAILED, error_code, store_errors
from chalicelib.store.ops import ConditionFailed, Op, batch_get, get_item, query_all, transact
from chalicelib.view.keys import retained_key

# A new list is written in one transaction (at most 100 items, 4 MB): its chunks and the old ones.
MAX_CHUNKS = 10
# A list whose encoding is smaller is written whole at each change (a patch would save little); a
# larger one keeps its base and stores what changed as one patch item, until the patch passes this
# share of the base, when the list is written whole again.
PATCH_FROM_BYTES = 32 * 1024
PATCH_SHARE = 8


@dataclass(frozen=True)
class Header:
    generation: int
    chunks: int
    digest: str
    stamp: Stamp
    version: int = 0  # rises with every commit, the list's or only its stamp's; absent before issue 18
    base: int = 0  # the generation whose chunks hold the list's base (0: this generation's own)
    patch: bool = False  # a patch item `<generation>#patch` replaces the rows of its scopes in the base
    base_bytes: int = 0  # the base's encoded size (0 before issue 18: never patched)

    @property
    def base_generation(self) -> int:
        return self.base or self.generation


@dataclass(frozen=True)
class StoredList:
    """A stored list as read: its base, and the scopes whose rows the patch replaces with its rows."""

    base: list[RetainedAccount]
    scopes: frozenset[str] = frozenset()
    rows: list[RetainedAccount] = field(default_factory=list)

    def accounts(self) -> list[RetainedAccount]:
        return patch_list(self.base, self.scopes, self.rows) if self.scopes else self.base


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


LIST_OP = "retained_list"  # the list's header, chunks and patch: one invariant, the header version read
PRUNE = "prune:"  # + a change counter's sort key

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
                            {k: int(v) for k, v in item["stamp"].items()}, int(item.get("version", 0)),
                            int(item.get("base", 0)), bool(item.get("patch", False)),
                            int(item.get("baseBytes", 0)))
    return SiteState(revision, list_hash, counters, header, scopes, indexed)


def _bytes(value: Any) -> bytes:
    return bytes(value.value) if hasattr(value, "value") else bytes(value)


def patch_key(site: str, generation: int) -> dict[str, Any]:
    return key(f"RETAINEDLIST#{site}", f"{generation}#patch")


def read_stored(client: Any, table: str, site: str, header: Header) -> StoredList | None:
    """The header's list, base chunks and patch in one BatchGet; None when it was replaced since the
    header was read (its patch or its base chunks are gone: never mixed with a newer list's)."""
    base = header.base_generation
    keys = [list_chunk_key(site, base, n) for n in range(header.chunks)]
    if header.patch:
        keys.append(patch_key(site, header.generation))
    found = batch_get(client, table, keys)
    items = [found.get((k["pk"]["S"], k["sk"]["S"])) for k in keys]
    patch = items.pop() if header.patch else None
    if any(item is None or int(item["generation"]) != base for item in items):
        return None
    accounts = decode_list(b"".join(_bytes(item["data"]) for item in items if item is not None))
    if not header.patch:
        return StoredList(accounts)
    if patch is None or int(patch["generation"]) != header.generation:
        return None
    return StoredList(accounts, frozenset(decode_strings(_bytes(patch["scopes"]))), decode_list(_bytes(patch["data"])))


def read_list(client: Any, table: str, site: str, header: Header) -> list[RetainedAccount] | None:
    """The header's list; None when it was replaced since the header was read."""
    stored = read_stored(client, table, site, header)
    return None if stored is None else stored.accounts()


def _header_condition(replaced: Header | None) -> dict[str, Any]:
    """The stored header is still the one the list was computed against (every commit moves `version`)."""
    if replaced is None:
        return {"ConditionExpression": "attribute_not_exists(pk)"}
    if replaced.version == 0:
        return {"ConditionExpression": "generation = :g AND attribute_not_exists(version)",
                "ExpressionAttributeValues": {":g": {"N": str(replaced.generation)}}}
    return {"ConditionExpression": "version = :v", "ExpressionAttributeValues": {":v": {"N": str(replaced.version)}}}


def _prune_ops(table: str, site: str, state: SiteState) -> list[Op]:
    """Take the folded scopes off their counters, each only while its count is still the one read:
    then its set is still the one read, so it goes whole (however many scopes it holds, the request
    stays small). A count that moved may have counted one of them again: it stays, folded later.
    Each operation is named after its counter, so a cancellation says which counters moved."""
    return [Op(f"{PRUNE}{counter}", {"Update": {
        "TableName": table, "Key": {"pk": {"S": site_partition(site)}, "sk": {"S": counter}},
        "UpdateExpression": "REMOVE scopes", "ConditionExpression": "changes = :c",
        "ExpressionAttributeValues": {":c": {"N": str(state.counters.get(counter, 0))}}}})
        for counter in sorted(state.scopes)]


def _list_ops(table: str, site: str, replaced: Header | None, stamp: Stamp, accounts: list[RetainedAccount],
              digest: str) -> list[dict[str, Any]]:
    """The header first, then the new generation's chunks, then the deletes of the one it replaces;
    with no header at all when the list is too big to store (a read computes it every time)."""
    encoded = encode_list(accounts)
    chunks = split(encoded, CHUNK_BYTES)
    condition = _header_condition(replaced)
    old_chunks = _old_list_deletes(table, site, replaced)
    if len(chunks) > MAX_CHUNKS:
        if replaced is None:
            return []
        return [{"Delete": {"TableName": table, "Key": list_header_key(site), **condition}}, *old_chunks]
    generation = replaced.generation + 1 if replaced is not None else 1
    header = {**list_header_key(site), **to_item({
        "generation": generation, "chunks": len(chunks), "digest": digest, "entries": len(accounts),
        "stamp": dict(stamp), "version": (replaced.version if replaced is not None else 0) + 1,
        "baseBytes": len(encoded)})}
    ops: list[dict[str, Any]] = [{"Put": {"TableName": table, "Item": header, **condition}}]
    ops += [{"Put": {"TableName": table, "Item": {**list_chunk_key(site, generation, n),
                                                   "generation": {"N": str(generation)}, "data": {"B": data}}}}
            for n, data in enumerate(chunks)]
    return ops + old_chunks


def _old_list_deletes(table: str, site: str, replaced: Header | None) -> list[dict[str, Any]]:
    if replaced is None:
        return []
    ops = [{"Delete": {"TableName": table, "Key": list_chunk_key(site, replaced.base_generation, n)}}
           for n in range(replaced.chunks)]
    if replaced.patch:
        ops.append({"Delete": {"TableName": table, "Key": patch_key(site, replaced.generation)}})
    return ops


def _patch_ops(table: str, site: str, replaced: Header, stamp: Stamp, accounts: list[RetainedAccount],
               digest: str, patch: StoredList) -> list[dict[str, Any]] | None:
    """The new generation as the replaced one's base and a patch (`patch.scopes`, `patch.rows`): the
    header, the new patch item, the old patch's delete. None when the list is better written whole:
    small enough that a patch saves nothing, or a patch grown past its share of the base."""
    if replaced.base_bytes < PATCH_FROM_BYTES:
        return None
    scopes, rows = encode_strings(sorted(patch.scopes)), encode_list(patch.rows)
    if len(scopes) + len(rows) > min(replaced.base_bytes // PATCH_SHARE, CHUNK_BYTES):
        return None
    generation = replaced.generation + 1
    header = {**list_header_key(site), **to_item({
        "generation": generation, "chunks": replaced.chunks, "digest": digest, "entries": len(accounts),
        "stamp": dict(stamp), "version": replaced.version + 1, "base": replaced.base_generation, "patch": True,
        "baseBytes": replaced.base_bytes})}
    ops: list[dict[str, Any]] = [
        {"Put": {"TableName": table, "Item": header, **_header_condition(replaced)}},
        {"Put": {"TableName": table, "Item": {**patch_key(site, generation), "generation": {"N": str(generation)},
                                               "scopes": {"B": scopes}, "data": {"B": rows}}}}]
    if replaced.patch:
        ops.append({"Delete": {"TableName": table, "Key": patch_key(site, replaced.generation)}})
    return ops


def _stamp_ops(table: str, site: str, replaced: Header, stamp: Stamp) -> list[dict[str, Any]]:
    """The same list, now known current at `stamp`: only the header's stamp and version change."""
    condition = _header_condition(replaced)
    return [{"Update": {"TableName": table, "Key": list_header_key(site),
                        "UpdateExpression": "SET stamp = :stamp ADD version :one",
                        "ConditionExpression": condition["ConditionExpression"],
                        "ExpressionAttributeValues": {**condition.get("ExpressionAttributeValues", {}),
                                                      ":stamp": to_value(dict(stamp)), ":one": {"N": "1"}}}}]


def store_list(client: Any, table: str, site: str, state: SiteState, accounts: list[RetainedAccount],
               digest: str, *, unchanged: bool = False, patch: StoredList | None = None) -> bool:
    """Store `accounts`, computed from inputs read after `state`, in place of `state.header`'s list
    and take the scopes `state` counted off the counters, in one transaction.

    `unchanged`: the list is the stored one (only its stamp moves; no chunk is written). `patch`: the
    list is the stored list's base with `patch.scopes` replaced by `patch.rows` (a large list is then
    stored as that base and a small patch, not written whole; decision 0002). False when
    another read committed first (its list is at least as new). A counter whose count moved since
    `state` keeps its scopes (the list is stored without that prune: one more transaction).
    """
    replaced = state.header
    patched = None
    if replaced is not None and patch is not None and not unchanged:
        patched = _patch_ops(table, site, replaced, state.counters, accounts, digest, patch)
    if unchanged and replaced is not None:
        ops = _stamp_ops(table, site, replaced, state.counters)
    elif patched is not None:
        ops = patched
    else:
        ops = _list_ops(table, site, replaced, state.counters, accounts, digest)
    named = [Op(LIST_OP, op) for op in ops]
    prunes = _prune_ops(table, site, state)
    for _ in range(2):
        if not named and not prunes:
            return True
        try:
            transact(client, named + prunes)
        except ConditionFailed as failed:
            if LIST_OP in failed:
                return False
            prunes = [p for p in prunes if p.name not in failed]
            continue
        return True
    return False


def prune(client: Any, table: str, site: str, state: SiteState) -> None:
    """Take the scopes `state` read off their counters, with nothing else: a Site without items has
    the empty list whatever changed (a counter whose count moved keeps its set)."""
    prunes = _prune_ops(table, site, state)
    while prunes:
        try:
            transact(client, prunes)
        except ConditionFailed as failed:
            prunes = [p for p in prunes if p.name not in failed]
            continue
        return


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
