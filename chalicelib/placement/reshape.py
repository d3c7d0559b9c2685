"""POST /reshaper (1.30), pure: upstream's decision, and the fenced multi-transaction protocol that applies it
(docs/decisions/0041-reshaper-protocol.md) as named transaction operations. No boto3 here: the driver is
reshaper.py, the items are read by store.py.

The protocol, one TransactWriteItems per step, each step moving the intent item's `step` by one under the
condition that it is the step before (so a step applies once, and the owner and a recoverer never interleave):

  1      open      the intent (`PLRESHAPE#<id>`) is created; every provider involved is fenced (`fence` = id,
                   `version` + 1, conditioned on the version the decision read and on no other fence).
  2..K+1 rewrite   chunk k's consumers get their new record, fenced, with the old one kept (`prev`); their
                   allocation items are rewritten. Readers of a fenced consumer see `prev` until the switch.
  K+2    switch    every provider gets its final item, unfenced; the intent becomes `done`. The visibility
                   point: before it every reader sees the old state, after it the new one.
  K+3..  clean-up  chunk k's consumers lose fence and `prev` (a removed one is deleted); the usage counters
                   move; the last one deletes the intent.

Before the switch a reshape can be rolled back (state `aborting`, the chunks undone in reverse order, then the
providers unfenced and the intent deleted); after it, it can only be finished.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from chalicelib.placement import errors, items, rules
from chalicelib.placement.models import Consumer, ConsumerWrite, Inventory, Provider
from chalicelib.store.codec import key, to_item, to_value
from chalicelib.store.ops import MAX_TRANSACTION_OPS, Op

# A pending reshape whose owner has not moved it for this long is rolled back by the next request meeting it:
# twice the functions' timeout (infra/definitions.py: 60 s), so a live owner is never rolled back under it.
LEASE_SECONDS = 120

PENDING, ABORTING, DONE = "pending", "aborting", "done"
INTENT = "reshape_intent"
CHUNK_ROOM = MAX_TRANSACTION_OPS - 1  # every step's transaction also moves the intent


class Fenced(Exception):
    """A write met an item fenced by the reshape `reshape_id` (the service recovers it or answers 409)."""

    def __init__(self, reshape_id: str) -> None:
        super().__init__(reshape_id)
        self.reshape_id = reshape_id


def intent_key(reshape_id: str) -> dict[str, Any]:
    return key(f"PLRESHAPE#{reshape_id}")


def chunk_key(reshape_id: str, index: int) -> dict[str, Any]:
    return key(f"PLRESHAPE#{reshape_id}", f"CHUNK#{index:05d}")


def moves_inventory(plan: Plan, rp: str) -> bool:
    """A provider whose inventory the reshape writes (its linked version moves, as any inventory write's)."""
    return plan.final[rp].inventory_version != plan.read[rp].inventory_version


# --- the decision (upstream's placement/objects/reshaper.py and handlers/reshaper.py) -------------------


@dataclass(frozen=True)
class ConsumerChange:
    uuid: str
    old: Consumer | None
    new: Consumer | None  # None: the consumer goes (it has no allocations left)


@dataclass(frozen=True)
class Chunk:
    index: int  # 1-based
    changes: list[ConsumerChange]
    usage: rules.UsageDeltas = field(default_factory=dict)


@dataclass
class Plan:
    reshape_id: str
    read: dict[str, Provider]  # every provider involved, as the decision read it (unfenced)
    final: dict[str, Provider]  # their final items
    chunks: list[Chunk]

    @property
    def steps(self) -> int:
        """open, K rewrites, switch, K clean-ups (the last deletes the intent; without consumers, the switch)."""
        return 2 + 2 * len(self.chunks)


def decide(
    reshape_id: str,
    inventories: dict[str, tuple[int, dict[str, Inventory]]],
    writes: list[ConsumerWrite],
    consumers: dict[str, Consumer | None],
    providers: dict[str, Provider | None],
    class_exists: Any,
) -> Plan:
    """Upstream's checks in upstream's order, then the final state of every provider and consumer involved.

    providers: every provider named in `inventories` or in `writes`, and every provider the written consumers
    hold allocations on now. The allocations are checked against an interim inventory (the old one with the new
    records over it), and classes the final inventory drops must be unused after the allocations, as upstream.
    Generations move as upstream's three steps move them: +1 for a non-empty interim inventory, +1 when the
    allocations touch the provider, +1 for the final inventory."""
    for rp, (generation, _) in inventories.items():
        provider = providers.get(rp)
        if provider is None:
            raise errors.Invalid(f"Resource provider {rp} in inventories not found: No resource provider with uuid "
                                 f"{rp} found", errors.PROVIDER_NOT_FOUND)
        if provider.generation != generation:
            raise errors.ConcurrentUpdate(f"resource provider generation conflict for provider {rp}: actual: "
                                          f"{provider.generation}, given: {generation}")
    for write in writes:
        rules.check_consumer_generation(consumers.get(write.uuid), write)
    for write in writes:
        for rp in write.allocations:
            if providers.get(rp) is None:
                raise errors.UnknownProvider(f"Allocation for resource provider '{rp}' that does not exist.")
    interim: dict[str, Provider | None] = dict(providers)
    for rp, (_, new) in inventories.items():
        for rc in new:
            if not class_exists(rc):
                raise errors.UnknownResourceClass(f"malformed reshaper data: No such resource class {rc}.")
        provider = providers[rp]
        assert provider is not None
        if new:
            interim[rp] = replace(provider, inventories={**provider.inventories, **new})
    decision = rules.decide_allocations(writes, consumers, interim, class_exists,
                                        lambda _c: "malformed reshaper data: ")
    final: dict[str, Provider] = {}
    read: dict[str, Provider] = {}
    for rp, provider in providers.items():
        if provider is None:
            continue
        read[rp] = provider
        change = decision.providers.get(rp)
        usages = dict(provider.usages)
        for rc, delta in (change.deltas if change else {}).items():
            usages[rc] = usages.get(rc, 0) + delta
        usages = {rc: n for rc, n in usages.items() if n}
        bumps = 1 if change is not None and change.bump_generation else 0
        inventory = provider.inventories
        if rp in inventories:
            inventory = inventories[rp][1]
            bumps += (1 if inventory else 0) + 1
        final[rp] = replace(provider, inventories=dict(inventory), usages=usages,
                            generation=provider.generation + bumps, version=provider.version + 2,
                            inventory_version=provider.inventory_version + (1 if rp in inventories else 0))
    for rp in inventories:
        dropped = [rc for rc in read[rp].inventories if rc not in final[rp].inventories]
        in_use = rules.classes_in_use(final[rp], dropped)
        if in_use:
            raise errors.InventoryInUse(f"update conflict: {rules.in_use_message(in_use, rp)}")
    changes = [ConsumerChange(w.uuid, consumers.get(w.uuid), decision.consumers.get(w.uuid)) for w in writes]
    return Plan(reshape_id, read, final, pack([c for c in changes if c.old is not None or c.new is not None]))


def _allocation_ops(change: ConsumerChange) -> int:
    old = set(change.old.allocations) if change.old else set()
    new = set(change.new.allocations) if change.new else set()
    return len(old | new)


def pack(changes: list[ConsumerChange]) -> list[Chunk]:
    """Consecutive consumers per chunk while its rewrite (a record and its allocation items per consumer) and
    its clean-up (a record per consumer and the usage counters it moves) each fit one transaction."""
    chunks: list[Chunk] = []
    current: list[ConsumerChange] = []
    usage: rules.UsageDeltas = {}

    def close() -> None:
        if current:
            chunks.append(Chunk(len(chunks) + 1, list(current), rules.nonzero(usage)))

    for change in changes:
        alone = _usage_of([change])
        if 1 + _allocation_ops(change) > CHUNK_ROOM or 1 + items.usage_items_moved(alone) > CHUNK_ROOM:
            raise errors.TooLarge(f"Consumer {change.uuid} has allocations on too many providers to reshape.")
        merged = _merge(usage, alone)
        rewrite = sum(1 + _allocation_ops(c) for c in current) + 1 + _allocation_ops(change)
        if rewrite > CHUNK_ROOM or len(current) + 1 + items.usage_items_moved(merged) > CHUNK_ROOM:
            close()
            current, merged = [], alone
        current.append(change)
        usage = merged
    close()
    return chunks


def _usage_of(changes: list[ConsumerChange]) -> rules.UsageDeltas:
    deltas: rules.UsageDeltas = {}
    for change in changes:
        if change.old is not None:
            rules.count_consumer(deltas, change.old, -1)
        if change.new is not None:
            rules.count_consumer(deltas, change.new, +1)
    return rules.nonzero(deltas)


def _merge(a: rules.UsageDeltas, b: rules.UsageDeltas) -> rules.UsageDeltas:
    merged = {bucket_key: dict(delta) for bucket_key, delta in a.items()}
    for bucket_key, delta in b.items():
        bucket = merged.setdefault(bucket_key, {})
        for k, n in delta.items():
            bucket[k] = bucket.get(k, 0) + n
    return rules.nonzero(merged)


def check_size(plan: Plan) -> None:
    """The open and the switch transactions carry every provider (the switch also their class references,
    resource-class index items and linked versions): a reshape needing more than one transaction for
    either is refused (400)."""
    switch = len(switch_ops("t", plan)) if plan.final else 1
    if max(switch, len(plan.read) + 1) > MAX_TRANSACTION_OPS:
        raise errors.TooLarge(f"This reshape involves {len(plan.read)} resource providers; their final state "
                              f"must fit one transaction of {MAX_TRANSACTION_OPS} items.")


def class_deltas(plan: Plan) -> dict[str, int]:
    total: dict[str, int] = {}
    for rp, provider in plan.final.items():
        for rc, delta in items.class_ref_deltas(plan.read[rp].inventories, provider.inventories).items():
            total[rc] = total.get(rc, 0) + delta
    return total


# --- serialisation of the plan (the intent and chunk items carry it for a recoverer) ---------------------


def provider_json(p: Provider) -> dict[str, Any]:
    return {"uuid": p.uuid, "name": p.name, "generation": p.generation, "version": p.version,
            "inventory_version": p.inventory_version,
            "inventories": {rc: inv.as_dict() for rc, inv in p.inventories.items()}, "usages": p.usages,
            "updated_at": p.updated_at, "linked_version": list(p.linked_version) if p.linked_version else None,
            "created_at": p.created_at, "parent_uuid": p.parent_uuid, "root_uuid": p.root_uuid,
            "children": p.children, "child_uuids": sorted(p.child_uuids), "traits": sorted(p.traits),
            "aggregates": sorted(p.aggregates)}


def provider_from(data: dict[str, Any]) -> Provider:
    linked = data.get("linked_version")
    return Provider(**{**data, "inventories": {rc: Inventory(**inv) for rc, inv in data["inventories"].items()},
                       "linked_version": (linked[0], linked[1]) if linked else None,
                       "traits": frozenset(data["traits"]), "aggregates": frozenset(data["aggregates"]),
                       # an intent written before the children's uuids were kept has none: they are then unknown
                       "child_uuids": frozenset(data.get("child_uuids", ()))})


def consumer_json(c: Consumer | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {"uuid": c.uuid, "project_id": c.project_id, "user_id": c.user_id, "generation": c.generation,
            "version": c.version, "allocations": c.allocations, "consumer_type": c.consumer_type}


def consumer_from(data: dict[str, Any] | None) -> Consumer | None:
    return None if data is None else Consumer(**data)


def _usage_json(usage: rules.UsageDeltas) -> list[Any]:
    return [[list(bucket), delta] for bucket, delta in usage.items()]


def chunk_body(chunk: Chunk) -> str:
    return json.dumps({"changes": [{"uuid": c.uuid, "old": consumer_json(c.old), "new": consumer_json(c.new)}
                                   for c in chunk.changes], "usage": _usage_json(chunk.usage)})


def chunk_from(index: int, body: str) -> Chunk:
    data = json.loads(body)
    return Chunk(index, [ConsumerChange(c["uuid"], consumer_from(c["old"]), consumer_from(c["new"]))
                         for c in data["changes"]],
                 {(b[0], b[1], b[2]): delta for b, delta in data["usage"]})


def plan_json(plan: Plan) -> str:
    return json.dumps({"read": {rp: provider_json(p) for rp, p in plan.read.items()},
                       "final": {rp: provider_json(p) for rp, p in plan.final.items()}})


def plan_from(reshape_id: str, body: str, chunks: list[Chunk]) -> Plan:
    data = json.loads(body)
    return Plan(reshape_id, {rp: provider_from(p) for rp, p in data["read"].items()},
                {rp: provider_from(p) for rp, p in data["final"].items()}, chunks)


# --- the steps' operations -------------------------------------------------------------------------


def chunk_put(table: str, reshape_id: str, chunk: Chunk) -> Op:
    """A chunk of the plan, inert until the intent exists (written with the open step, or before it)."""
    return Op(f"chunk:{chunk.index}", {"Put": {"TableName": table, "Item": to_item({
        "pk": f"PLRESHAPE#{reshape_id}", "sk": f"CHUNK#{chunk.index:05d}", "body": chunk_body(chunk)})}})


def chunk_delete(table: str, reshape_id: str, index: int) -> Op:
    return Op(f"chunk:{index}", {"Delete": {"TableName": table, "Key": chunk_key(reshape_id, index)}})


def _advance(table: str, reshape_id: str, step: int, state: str, *, new_state: str | None = None,
             to: int | None = None) -> Op:
    """The intent moves from `step` to `to` (default `step + 1`; a rollback moves back) and maybe to another
    state, if it is at `step` in `state`."""
    sets = "step = :next" + (", #state = :new" if new_state else "")
    values = {":step": to_value(step), ":next": to_value(step + 1 if to is None else to), ":state": to_value(state)}
    if new_state:
        values[":new"] = to_value(new_state)
    return Op(INTENT, {"Update": {"TableName": table, "Key": intent_key(reshape_id), "UpdateExpression": "SET " + sets,
                                  "ConditionExpression": "step = :step AND #state = :state",
                                  "ExpressionAttributeNames": {"#state": "state"},
                                  "ExpressionAttributeValues": values}})


def _end(table: str, reshape_id: str, step: int, state: str) -> Op:
    return Op(INTENT, {"Delete": {"TableName": table, "Key": intent_key(reshape_id),
                                  "ConditionExpression": "step = :step AND #state = :state",
                                  "ExpressionAttributeNames": {"#state": "state"},
                                  "ExpressionAttributeValues": {":step": to_value(step), ":state": to_value(state)}}})


def open_ops(table: str, plan: Plan, expires_at: int) -> list[Op]:
    """Step 1: the intent (at step 1, or `done`'s predecessor when there are no consumers) and the fences."""
    intent = to_item({"pk": f"PLRESHAPE#{plan.reshape_id}", "sk": "-", "kind": "placement-reshape",
                      "state": PENDING, "step": 1, "chunks": len(plan.chunks), "expiresAt": expires_at,
                      "plan": plan_json(plan)})
    ops = [Op(INTENT, {"Put": {"TableName": table, "Item": intent, "ConditionExpression": "attribute_not_exists(pk)"}})]
    for rp, provider in sorted(plan.read.items()):
        ops.append(Op(f"provider:{rp}", {"Update": {
            "TableName": table, "Key": items.provider_key(rp),
            "UpdateExpression": "SET fence = :id, version = version + :one",
            "ConditionExpression": "version = :read AND attribute_not_exists(fence)",
            "ExpressionAttributeValues": {":id": to_value(plan.reshape_id), ":one": to_value(1),
                                          ":read": to_value(provider.version)}}}))
    return ops


def _consumer_item(consumer: Consumer) -> dict[str, Any]:
    return {"pk": f"PLCONS#{consumer.uuid}", "sk": "-", "kind": "placement-consumer", "uuid": consumer.uuid,
            "project": consumer.project_id, "user": consumer.user_id, "generation": consumer.generation,
            "version": consumer.version, **items.consumer_allocations_attributes(consumer.allocations),
            "updatedAt": items.now(),
            "ctype": consumer.consumer_type}


def _allocation_rewrite(table: str, uuid: str, before: Consumer | None, after: Consumer | None) -> list[Op]:
    old = set(before.allocations) if before else set()
    new = set(after.allocations) if after else set()
    ops = [Op(f"allocation:{rp}:{uuid}", {"Delete": {"TableName": table, "Key": items.allocation_key(rp, uuid)}})
           for rp in sorted(old - new)]
    if after is not None:
        ops += [Op(f"allocation:{rp}:{uuid}", {"Put": {"TableName": table, "Item": to_item({
            "pk": f"PLRP#{rp}", "sk": f"ALLOC#{uuid}", "resources": after.allocations[rp],
            "consumerGeneration": after.generation, "updatedAt": items.now()})}}) for rp in sorted(new)]
    return ops


def _fenced_condition(old: Consumer | None) -> tuple[str, dict[str, Any]]:
    if old is None:
        return "attribute_not_exists(pk)", {}
    return "version = :read AND attribute_not_exists(fence)", {":read": to_value(old.version)}


def rewrite_ops(table: str, plan: Plan, chunk: Chunk) -> list[Op]:
    """Step 1 + k: chunk k's consumers rewritten, fenced, their old record kept in `prev` (JSON)."""
    ops = [_advance(table, plan.reshape_id, chunk.index, PENDING)]
    for change in chunk.changes:
        condition, values = _fenced_condition(change.old)
        record: dict[str, Any] = {"pk": f"PLCONS#{change.uuid}", "sk": "-", "uuid": change.uuid}
        if change.new is not None:
            record = _consumer_item(change.new)
        else:
            record["kind"] = "placement-consumer-removed"
            record["version"] = (change.old.version + 1) if change.old else 1
        record.update(fence=plan.reshape_id, prev=json.dumps(consumer_json(change.old)))
        put: dict[str, Any] = {"TableName": table, "Item": to_item(record), "ConditionExpression": condition}
        if values:
            put["ExpressionAttributeValues"] = values
        ops.append(Op(f"consumer:{change.uuid}", {"Put": put}))
        ops += _allocation_rewrite(table, change.uuid, change.old, change.new)
    return ops


def _fenced_consumer_delete(table: str, uuid: str, reshape_id: str) -> Op:
    """The consumer item goes, if this reshape still fences it."""
    return Op(f"consumer:{uuid}", {"Delete": {
        "TableName": table, "Key": items.consumer_key(uuid), "ConditionExpression": "fence = :id",
        "ExpressionAttributeValues": {":id": to_value(reshape_id)}}})


def undo_ops(table: str, plan: Plan, chunk: Chunk) -> list[Op]:
    """Rolling chunk k back (intent at step 1 + k, aborting): the old records and allocation items again."""
    ops = [_advance(table, plan.reshape_id, chunk.index + 1, ABORTING, to=chunk.index)]
    fenced = {":id": to_value(plan.reshape_id)}
    for change in chunk.changes:
        if change.old is None:
            ops.append(_fenced_consumer_delete(table, change.uuid, plan.reshape_id))
        else:
            restored = _consumer_item(replace(change.old, version=change.old.version + 2))
            ops.append(Op(f"consumer:{change.uuid}", {"Put": {
                "TableName": table, "Item": to_item(restored), "ConditionExpression": "fence = :id",
                "ExpressionAttributeValues": fenced}}))
        ops += _allocation_rewrite(table, change.uuid, change.new, change.old)
    return ops


def unfence_ops(table: str, plan: Plan) -> list[Op]:
    """The end of a rollback (intent at step 1, aborting): the providers unfenced as they were, the intent gone."""
    ops = [_end(table, plan.reshape_id, 1, ABORTING)]
    for rp in sorted(plan.read):
        ops.append(Op(f"provider:{rp}", {"Update": {
            "TableName": table, "Key": items.provider_key(rp),
            "UpdateExpression": "REMOVE fence SET version = version + :one", "ConditionExpression": "fence = :id",
            "ExpressionAttributeValues": {":id": to_value(plan.reshape_id), ":one": to_value(1)}}}))
    return ops


def switch_ops(table: str, plan: Plan) -> list[Op]:
    """Step K + 2, the visibility point: the providers' final items (unfenced), class references, the
    resource-class index items (allocation candidates read them), linked versions; the intent `done` (or
    deleted, without consumers to clean up)."""
    step = len(plan.chunks) + 1
    ops = [_end(table, plan.reshape_id, step, PENDING) if not plan.chunks
           else _advance(table, plan.reshape_id, step, PENDING, new_state=DONE)]
    for rp, provider in sorted(plan.final.items()):
        values = {":fenced": to_value(plan.read[rp].version + 1)}
        ops.append(replace(items.provider_put(table, provider, "version = :fenced", values,
                                              fenced_by=plan.reshape_id), name=f"provider:{rp}"))
        if moves_inventory(plan, rp):
            ops += items.linked_version_bump(table, provider)
            ops += items.class_index_updates(table, rp, plan.read[rp].inventories, provider.inventories)
    ops += items.class_ref_updates(table, class_deltas(plan))
    return ops


def cleanup_ops(table: str, plan: Plan, chunk: Chunk) -> list[Op]:
    """Step K + 2 + k: chunk k's consumers unfenced (a removed one deleted), its usage counters moved; the last
    one deletes the intent."""
    step = len(plan.chunks) + 1 + chunk.index
    last = chunk.index == len(plan.chunks)
    ops = [_end(table, plan.reshape_id, step, DONE) if last else _advance(table, plan.reshape_id, step, DONE)]
    fenced = {":id": to_value(plan.reshape_id)}
    for change in chunk.changes:
        if change.new is None:
            ops.append(_fenced_consumer_delete(table, change.uuid, plan.reshape_id))
        else:
            ops.append(Op(f"consumer:{change.uuid}", {"Update": {
                "TableName": table, "Key": items.consumer_key(change.uuid), "UpdateExpression": "REMOVE fence, prev",
                "ConditionExpression": "fence = :id", "ExpressionAttributeValues": fenced}}))
    ops += items.usage_updates(table, chunk.usage)  # as the allocation transaction moves them
    return ops


# --- what readers see ------------------------------------------------------------------------------


def sees_old(state: str | None) -> bool:
    """Before the switch (pending, aborting) readers of a fenced consumer see its old record (`prev`); after it
    (done, or the intent gone) the item as written."""
    return state in (PENDING, ABORTING)


def old_record(item: dict[str, Any]) -> Consumer | None:
    return consumer_from(json.loads(item["prev"]))
