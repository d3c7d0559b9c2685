"""Fleet's items in the service table (the DynamoDB adapter; the client is injected).

| item                                   | pk              | sk                         |
|----------------------------------------|-----------------|----------------------------|
| the tenant's fleet version             | FLEET#<tenant>  | OBJ!VERSION                |
| an object (account, pool, quota, ...)  | FLEET#<tenant>  | OBJ#<kind>#<id>            | o: JSON
| status (applied, drift, chunk count)   | FLEET#<tenant>  | STATUS                     |
| a chunk of the applied document        | FLEET#<tenant>  | DOC#<nnnn>                 |
| an event not yet published (outbox)    | FLEET#<tenant>  | OUTBOX#<event id>          |
| a published event                      | FLEET#<tenant>  | EVENT#<event time>#<id>    |

`OBJ!VERSION` sorts just before the objects, so one Query (`begins_with(sk, "OBJ")`)
reads the version and every object together: a consistent snapshot of the tenant.
Status items carry gsi1pk=FLEETAPPLIED (the reconciler's list of tenants), outbox
items gsi1pk=FLEETOUTBOX (events a crashed pass left behind); both are Queries, never Scans.

Every module write puts its objects and moves the version in one transaction
conditioned on the version read, so the version is the tenant's concurrency token.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from chalicelib.fleet.keys import VERSION_SK, fleet_pk, object_sk
from chalicelib.fleet.models import (
    KINDS,
    POOLS,
    FleetObject,
    FleetState,
    actual_pool,
    custom_classes_used,
    provider_name,
)
from chalicelib.fleet.modules import DeleteObject, PutObject, SyncProvider, Write
from chalicelib.fleet.placement_writes import class_ref_items, provider_classes, provider_items
from chalicelib.placement.models import Provider
from chalicelib.placement.store import PlacementStore
from chalicelib.store.codec import key, to_item
from chalicelib.store.lease import Lease
from chalicelib.store.ops import Op, batch_get, get_item, query_all, transact
from chalicelib.tenants.store import TenantStore

STATUS_SK = "STATUS"
DOC = "DOC#"
OUTBOX = "OUTBOX#"
EVENT = "EVENT#"
APPLIED_INDEX = "FLEETAPPLIED"
OUTBOX_INDEX = "FLEETOUTBOX"
CHUNK_BYTES = 350 * 1024

# The names of the operations a fleet transaction holds (a cancellation names those whose condition failed).
OBJECT_OP = "object"  # an object's put (create: absent; update: present) or delete (present)
PROVIDER_NEW_OP = "provider_new"  # a pool's new Placement provider: its uuid is free
NAME_CLAIM_OP = "provider_name_claim"  # ... and its provider name is free
PROVIDER_OP = "provider_unchanged"  # an existing provider's inventories: unchanged since read
CLASS_INDEX_OP = "provider_class_index"  # a class a provider gains or loses, in Placement's class index
CLASS_REFS_OP = "class_refs"  # a CUSTOM_* class's reference count: the class exists
VERSION_OP = "fleet_version"  # the tenant's fleet version: the one the decision was made on
DOCUMENT_OP = "document_chunk"
STATUS_OP = "status"  # the status item: the revision read
OUTBOX_OP = "outbox"
CLAIMED_OP = "outbox_claimed"  # the outbox item is still claimed by this publisher
EVENT_OP = "event_record"


@dataclass(frozen=True)
class Status:
    """The STATUS item: the applied document's record and the last drift check."""

    tenant: str
    rev: int = 0  # bumped by every status write: what apply and the reconciler condition on
    applied: dict[str, Any] | None = None
    chunks: int = 0
    drift: dict[str, Any] | None = None  # {checkedAt, summary, changes, planHash}; None = converged


@dataclass(frozen=True)
class Snapshot:
    state: FleetState
    providers: Mapping[str, Provider | None] = field(default_factory=dict)  # pool id -> provider as read


def object_item(tenant: str, obj: FleetObject) -> dict[str, Any]:
    """An object's item. Its body is one compact JSON string: a 10,000-object export then parses
    10,000 strings instead of 10,000 nested attribute maps (botocore's parser is most of an export's time)."""
    body = {"kind": obj.kind, "id": obj.id, "name": obj.name, "fields": dict(obj.fields), "archived": obj.archived}
    return {"pk": fleet_pk(tenant), "sk": object_sk(obj.kind, obj.id),
            "o": json.dumps(body, separators=(",", ":"))}


def _object(item: dict[str, Any]) -> FleetObject:
    body = json.loads(item["o"])
    return FleetObject(kind=body["kind"], id=body["id"], name=body["name"], fields=body["fields"],
                       archived=bool(body["archived"]))


def _status(tenant: str, item: dict[str, Any] | None) -> Status:
    if not item:
        return Status(tenant)
    return Status(tenant, int(item["rev"]), item.get("applied"), int(item.get("chunks", 0)), item.get("drift"))


def compress(document: Any) -> list[bytes]:
    """The document as compressed chunks of at most CHUNK_BYTES (at least one)."""
    data = zlib.compress(json.dumps(document, sort_keys=True, separators=(",", ":")).encode(), 9)
    return [data[i:i + CHUNK_BYTES] for i in range(0, len(data), CHUNK_BYTES)] or [b""]


def decompress(chunks: Iterable[bytes]) -> Any:
    return json.loads(zlib.decompress(b"".join(chunks)))



def outbox_claim(tenant: str, event_id: str) -> Lease:
    """The publishing claim on one outbox item: one publisher at a time, until its claim runs out; never once
    the item is gone (chalicelib/store/lease.py)."""
    return Lease(key(fleet_pk(tenant), f"{OUTBOX}{event_id}"), owner_attribute="claimBy",
                 until_attribute="claimUntil", item_must_exist=True)

class FleetStore:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table
        self.placement = PlacementStore(client, table)
        self.tenants = TenantStore(client, table)

    # --- reads ------------------------------------------------------------------------------------

    def snapshot(self, tenant: str, *, providers: bool = True) -> Snapshot:
        """The tenant's version and objects (one Query), its Sites, custom classes and pools' providers."""
        items = query_all(self.client, self.table, KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                          ExpressionAttributeValues={":pk": {"S": fleet_pk(tenant)}, ":p": {"S": "OBJ"}})
        version = 0
        objects: dict[str, dict[str, FleetObject]] = {k: {} for k in KINDS}
        for item in items:
            if item["sk"] == VERSION_SK:
                version = int(item["version"])
            else:
                obj = _object(item)
                objects[obj.kind][obj.id] = obj
        sites = frozenset(s.name for s in self.tenants.sites(tenant))
        custom = frozenset(i["sk"] for i in self.placement.custom_classes())
        read: dict[str, Provider | None] = {}
        if providers and objects[POOLS]:
            read = dict(self.placement.providers(sorted(objects[POOLS])))
        classes = {pid: (provider_classes(p) if p is not None else None) for pid, p in read.items()}
        for pid, held in classes.items():
            objects[POOLS][pid] = actual_pool(objects[POOLS][pid], held)
        allocated = {pid: frozenset(rc for rc in p.inventories if p.used(rc)) for pid, p in read.items() if p}
        return Snapshot(FleetState(tenant, version, sites, objects, classes, custom, allocated), read)

    def status(self, tenant: str) -> Status:
        return _status(tenant, get_item(self.client, self.table, key(fleet_pk(tenant), STATUS_SK)))

    def applied_document(self, status: Status) -> Any:
        keys = [key(fleet_pk(status.tenant), f"{DOC}{i:04d}") for i in range(status.chunks)]
        found = batch_get(self.client, self.table, keys)
        return decompress(bytes(found[(k["pk"]["S"], k["sk"]["S"])]["data"]) for k in keys)

    def applied_tenants(self) -> list[str]:
        items = query_all(self.client, self.table, IndexName="gsi1", ConsistentRead=False,
                          KeyConditionExpression="gsi1pk = :pk",
                          ExpressionAttributeValues={":pk": {"S": APPLIED_INDEX}})
        return sorted({i["gsi1sk"] for i in items})

    # --- write items ------------------------------------------------------------------------------

    def version_item(self, tenant: str, read: int) -> Op:
        condition: dict[str, Any] = (
            {"ConditionExpression": "version = :read", "ExpressionAttributeValues": {":read": {"N": str(read)}}}
            if read else {"ConditionExpression": "attribute_not_exists(pk)"})
        return Op(VERSION_OP, {"Put": {"TableName": self.table, "Item": to_item({
            "pk": fleet_pk(tenant), "sk": VERSION_SK, "version": read + 1}), **condition}})

    def write_items(self, snapshot: Snapshot, writes: Iterable[Write]) -> list[Op]:
        """Every write of the module calls as transaction operations, plus the version move (last)."""
        state = snapshot.state
        ops: list[Op] = []
        deltas: dict[str, int] = {}
        written: dict[tuple[str, str], FleetObject | None] = {}  # (kind, id) -> as the writes so far leave it

        def count(obj: FleetObject, after: FleetObject | None) -> None:
            """The CUSTOM_* uses this write moves: those of the object before it, out; after it, in."""
            before = written[(obj.kind, obj.id)] if (obj.kind, obj.id) in written else state.get(obj.kind, obj.id)
            for rc in custom_classes_used(before):
                deltas[rc] = deltas.get(rc, 0) - 1
            for rc in custom_classes_used(after):
                deltas[rc] = deltas.get(rc, 0) + 1
            written[(obj.kind, obj.id)] = after

        for write in writes:
            if isinstance(write, PutObject):
                obj = write.obj
                condition = "attribute_not_exists(pk)" if write.new else "attribute_exists(pk)"
                ops.append(Op(OBJECT_OP, {"Put": {"TableName": self.table, "ConditionExpression": condition,
                                                  "Item": to_item(object_item(state.tenant, obj))}}))
                count(obj, obj)
            elif isinstance(write, DeleteObject):
                obj = write.obj
                ops.append(Op(OBJECT_OP, {"Delete": {
                    "TableName": self.table, "ConditionExpression": "attribute_exists(pk)",
                    "Key": key(fleet_pk(state.tenant), object_sk(obj.kind, obj.id))}}))
                count(obj, None)
            elif isinstance(write, SyncProvider):
                pool = write.pool
                provider, refs = provider_items(self.table, snapshot.providers.get(pool.id), pool.id,
                                                provider_name(state.tenant, pool), write.classes,
                                                tenant=state.tenant)
                # provider_items' order: a new provider and its name claim, or the update of an existing one (or none).
                names = (PROVIDER_NEW_OP, NAME_CLAIM_OP) if snapshot.providers.get(pool.id) is None else (PROVIDER_OP,)
                ops.extend(Op(name, item) for name, item in zip(names, provider, strict=False))
                # ... then the resource-class index items of the classes it gains or loses (no condition).
                ops.extend(Op(CLASS_INDEX_OP, item) for item in provider[len(names):])
                for rc, d in refs.items():
                    deltas[rc] = deltas.get(rc, 0) + d
        ops.extend(Op(CLASS_REFS_OP, item) for item in class_ref_items(self.table, deltas))
        ops.append(self.version_item(state.tenant, state.version))
        return ops

    def document_items(self, tenant: str, document: Any, previous_chunks: int) -> tuple[list[Op], int]:
        chunks = compress(document)
        items = [Op(DOCUMENT_OP, {"Put": {"TableName": self.table, "Item": {
            "pk": {"S": fleet_pk(tenant)}, "sk": {"S": f"{DOC}{i:04d}"}, "data": {"B": chunk}}}})
            for i, chunk in enumerate(chunks)]
        items.extend(Op(DOCUMENT_OP, {"Delete": {"TableName": self.table,
                                                 "Key": key(fleet_pk(tenant), f"{DOC}{i:04d}")}})
                     for i in range(len(chunks), previous_chunks))
        return items, len(chunks)

    def status_item(self, read: Status, written: Status) -> Op:
        condition: dict[str, Any] = (
            {"ConditionExpression": "rev = :rev", "ExpressionAttributeValues": {":rev": {"N": str(read.rev)}}}
            if read.rev else {"ConditionExpression": "attribute_not_exists(pk)"})
        return Op(STATUS_OP, {"Put": {"TableName": self.table, "Item": to_item({
            "pk": fleet_pk(written.tenant), "sk": STATUS_SK, "rev": read.rev + 1, "applied": written.applied,
            "chunks": written.chunks, "drift": written.drift,
            "gsi1pk": APPLIED_INDEX if written.applied else None,
            "gsi1sk": written.tenant if written.applied else None}), **condition}})

    def outbox_item(self, event: dict[str, Any]) -> Op:
        return Op(OUTBOX_OP, {"Put": {
            "TableName": self.table, "ConditionExpression": "attribute_not_exists(pk)", "Item": to_item({
                "pk": fleet_pk(event["tenant"]), "sk": f"{OUTBOX}{event['id']}", "event": event,
                "gsi1pk": OUTBOX_INDEX, "gsi1sk": f"{event['time']}#{event['tenant']}#{event['id']}"})}})

    def transact(self, ops: list[Op]) -> None:
        """One transaction; ConditionFailed names the operations that failed, TooLarge comes before the call."""
        transact(self.client, ops)

    # --- events -----------------------------------------------------------------------------------

    def pending_outbox(self) -> list[tuple[str, str, str]]:
        """(event time, tenant, event id) of every outbox item the index shows, oldest first (the index may lag:
        each is read again)."""
        items = query_all(self.client, self.table, IndexName="gsi1", ConsistentRead=False,
                          KeyConditionExpression="gsi1pk = :pk",
                          ExpressionAttributeValues={":pk": {"S": OUTBOX_INDEX}})
        return [(i["gsi1sk"].split("#", 1)[0], i["pk"][len("FLEET#"):], i["sk"][len(OUTBOX):]) for i in items]

    def tenant_outbox(self, tenant: str) -> list[tuple[str, str, str]]:
        """(event time, tenant, event id) of the tenant's outbox items, read consistently (one Query)."""
        items = query_all(self.client, self.table, KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                          ExpressionAttributeValues={":pk": {"S": fleet_pk(tenant)}, ":p": {"S": OUTBOX}})
        return [(i["event"]["time"], tenant, i["sk"][len(OUTBOX):]) for i in items]

    def outbox(self, tenant: str, event_id: str) -> dict[str, Any] | None:
        return get_item(self.client, self.table, key(fleet_pk(tenant), f"{OUTBOX}{event_id}"))

    def claim(self, tenant: str, event_id: str, owner: str, now_ms: int, lease_ms: int) -> bool:
        """Take the outbox item for publishing; False when it is gone or another publisher holds it."""
        return outbox_claim(tenant, event_id).take(self.client, self.table, owner, now_ms, lease_ms)

    def published_items(self, event: dict[str, Any], owner: str) -> list[Op]:
        """The outbox item goes and the event record appears, only while this publisher holds the claim.

        The record's key is the event's own time (when it went into the outbox), so the tenant's events list
        in the order they were decided, whatever order they were published in."""
        tenant = event["tenant"]
        return [
            Op(CLAIMED_OP, {"Delete": {
                "TableName": self.table, "Key": key(fleet_pk(tenant), f"{OUTBOX}{event['id']}"),
                "ConditionExpression": "claimBy = :me", "ExpressionAttributeValues": {":me": {"S": owner}}}}),
            Op(EVENT_OP, {"Put": {"TableName": self.table, "ConditionExpression": "attribute_not_exists(pk)",
                                  "Item": to_item({"pk": fleet_pk(tenant), "event": event,
                                                   "sk": f"{EVENT}{event['time']}#{event['id']}"})}}),
        ]

    def events(self, tenant: str) -> list[dict[str, Any]]:
        """The tenant's published events, oldest first."""
        items = query_all(self.client, self.table, KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                          ExpressionAttributeValues={":pk": {"S": fleet_pk(tenant)}, ":p": {"S": EVENT}})
        return [i["event"] for i in items]
