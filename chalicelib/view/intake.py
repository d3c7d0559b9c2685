"""Applying Beto's events to the view: newest revision per entity wins.

Each event is one conditional write (`revision` must be newer than the stored
one), so a duplicate or a late event is ignored and a repeated batch
converges. Events that also maintain an index (a Project binding's entry in
its provider ref; an accepted item's Site revision) write both in one
transaction.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from chalicelib.contract.types import SITES
from chalicelib.contract.validation import invalid_input
from chalicelib.errors import Unavailable
from chalicelib.retained.keys import change_counter_key
from chalicelib.retained.rules import change_shard
from chalicelib.store.codec import to_item, to_value
from chalicelib.store.errors import store_errors
from chalicelib.store.ops import TransactionCanceled, get_item, transact
from chalicelib.view import keys
from chalicelib.view.events import (
    AcceptedItemEvent,
    EventBatch,
    MembershipEvent,
    PartySiteBindingEvent,
    ProjectBindingEvent,
    ProjectEvent,
    UsernameEvent,
)

_MAX_ATTEMPTS = 8
_WORKERS = 8

NEWER = "attribute_not_exists(pk) OR revision < :rev"


@dataclass(frozen=True)
class IntakeResult:
    applied: int
    ignored: int

    def body(self) -> dict[str, int]:
        return {"applied": self.applied, "ignored": self.ignored}


def parse_batch(data: dict[str, Any]) -> EventBatch:
    """The whole batch is validated before anything is applied."""
    try:
        return EventBatch.model_validate(data)
    except ValidationError as exc:
        raise invalid_input(exc, data) from None  # the log says where and which rule; the answer only the code


_ENTITY_KEYS: dict[type, Callable[[Any], dict[str, Any]]] = {
    ProjectEvent: lambda e: keys.project_key(e.project_id),
    ProjectBindingEvent: lambda e: keys.project_binding_key(e.binding_id),
    PartySiteBindingEvent: lambda e: keys.party_site_binding_key(e.party_id, e.site),
    UsernameEvent: lambda e: keys.username_key(e.site, e.username),
    MembershipEvent: lambda e: keys.membership_key(e.project_id, e.party_id),
    AcceptedItemEvent: lambda e: keys.accepted_item_key(e.site, e.item_id),
}


def _attributes(event: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(key, attributes) of the entity an event names: the event's own fields, by their contract names."""
    entity_key = _ENTITY_KEYS[type(event)](event)
    return entity_key, event.model_dump(by_alias=True, exclude={"type", "revision"})


def _sites_whose_list_reads(event: Any) -> tuple[str, ...]:
    """The Sites whose retained list is computed from the entity (retained/rules.py's inputs)."""
    if isinstance(event, (ProjectEvent, MembershipEvent)):
        return SITES
    if isinstance(event, PartySiteBindingEvent):
        return (event.site,)
    return ()


class ViewIntake:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def apply_batch(self, batch: EventBatch) -> IntakeResult:
        """Entities in parallel, each entity's events in batch order.

        Order within an entity only affects the applied/ignored count (the
        newest revision wins either way); across entities there is no order.
        """
        groups: dict[str, list[Any]] = defaultdict(list)
        for event in batch.events:
            entity_key, _ = _attributes(event)
            groups[entity_key["pk"]["S"] + "|" + entity_key["sk"]["S"]].append(event)

        def apply_group(events: list[Any]) -> int:
            return sum(1 for event in events if self.apply(event))

        if len(groups) <= 1:
            applied = sum(apply_group(g) for g in groups.values())
        else:
            with ThreadPoolExecutor(max_workers=min(_WORKERS, len(groups))) as pool:
                applied = sum(pool.map(apply_group, groups.values()))
        return IntakeResult(applied, len(batch.events) - applied)

    def apply(self, event: Any) -> bool:
        """True when the event was newer than the view and is now applied."""
        entity_key, attributes = _attributes(event)
        item = {**entity_key, **to_item({**attributes, "revision": event.revision})}
        if isinstance(event, ProjectBindingEvent):
            return self._apply_project_binding(event, item)
        if isinstance(event, AcceptedItemEvent):
            # Any applied item of a Site moves that Site's retained revision on (off 0 the first time),
            # and its item change counter (the revision item's own `changes`).
            return self._put_counted(item, event.revision, [{
                "TableName": self._table, "Key": keys.retained_key(event.site),
                "UpdateExpression": "ADD revision :one, changes :one",
                "ExpressionAttributeValues": {":one": {"N": "1"}}}])
        sites = _sites_whose_list_reads(event)
        if not sites:
            return self._put_if_newer(item, event.revision)
        shard = change_shard(entity_key["pk"]["S"])
        return self._put_counted(item, event.revision, [{
            "TableName": self._table, "Key": change_counter_key(site, shard),
            "UpdateExpression": "ADD changes :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}
            for site in sites])

    def _put_if_newer(self, item: dict[str, Any], revision: int) -> bool:
        try:
            with store_errors():
                self._client.put_item(
                    TableName=self._table, Item=item, ConditionExpression=NEWER,
                    ExpressionAttributeValues={":rev": {"N": str(revision)}},
                )
        except self._client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def _put_counted(self, item: dict[str, Any], revision: int, counters: list[dict[str, Any]]) -> bool:
        """The entity, if newer, and 1 added to each counter, in one transaction (so a stored list
        stamped with the old counts is never taken for current once the entity changed)."""
        ops = [{"Put": {"TableName": self._table, "Item": item, "ConditionExpression": NEWER,
                        "ExpressionAttributeValues": {":rev": {"N": str(revision)}}}}]
        ops += [{"Update": update} for update in counters]
        for _ in range(_MAX_ATTEMPTS):
            try:
                transact(self._client, ops)
                return True
            except TransactionCanceled as canceled:
                if canceled.failed(0) and not canceled.conflict:
                    return False
        raise Unavailable()

    def _apply_project_binding(self, event: ProjectBindingEvent, item: dict[str, Any]) -> bool:
        entity_key = keys.project_binding_key(event.binding_id)
        entry_name = keys.BINDING_ATTRIBUTE_PREFIX + event.binding_id
        entry = to_value({"p": event.project_id, "s": event.state, "r": event.revision})
        for _ in range(_MAX_ATTEMPTS):
            old = get_item(self._client, self._table, entity_key)
            if old is not None and int(old["revision"]) >= event.revision:
                return False
            if old is None:
                condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
            else:
                condition = {
                    "ConditionExpression": "revision = :old",
                    "ExpressionAttributeValues": {":old": {"N": str(old["revision"])}},
                }
            # The ref's item keeps only established bindings (the only ones that resolve): retired ones
            # would pile up in it for ever, past DynamoDB's 400 KB item (docs/limits-events.md).
            if event.state == "established":
                ref_update: dict[str, Any] = {"UpdateExpression": "SET #b = :entry",
                                              "ExpressionAttributeValues": {":entry": entry}}
            else:
                ref_update = {"UpdateExpression": "REMOVE #b"}
            ops: list[dict[str, Any]] = [
                {"Put": {"TableName": self._table, "Item": item, **condition}},
                {"Update": {"TableName": self._table, "Key": keys.ref_key(event.provider_project_ref),
                            "ExpressionAttributeNames": {"#b": entry_name}, **ref_update}},
            ]
            if old is not None and old["providerProjectRef"] != event.provider_project_ref:
                ops.append({"Update": {"TableName": self._table,
                                       "Key": keys.ref_key(old["providerProjectRef"]),
                                       "UpdateExpression": "REMOVE #b",
                                       "ExpressionAttributeNames": {"#b": entry_name}}})
            try:
                transact(self._client, ops)
                return True
            except TransactionCanceled:
                continue  # a concurrent event for this binding won; re-read and decide again
        raise Unavailable()
