"""Applying Beto's events to the view: newest revision per entity wins.

Each event is one conditional write (`revision` must be newer than the stored
one), so a duplicate or a late event is ignored and a repeated batch
converges. Events that also maintain an index (a Project binding's entry in
its provider ref; an accepted item's Site revision and item index) or that
change a Site's retained list (marks.py: the scopes counted on its change
counters) write all of it in one transaction.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from chalicelib.contract.validation import invalid_input
from chalicelib.errors import Unavailable
from chalicelib.store.codec import to_item, to_value
from chalicelib.store.ops import ConditionFailed, Op, get_item, put_if, transact
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
from chalicelib.view.marks import by_counter, index_change, indexed, marked_scopes

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


def counter_updates(table: str, marks: dict[str, set[str]]) -> list[dict[str, Any]]:
    """One Update per change counter the marks fall on: 1 added to its count, the scopes to its set."""
    return [{"Update": {"TableName": table, "Key": keys.change_counter_key(site, shard),
                        "UpdateExpression": "ADD changes :one, scopes :s",
                        "ExpressionAttributeValues": {":one": {"N": "1"}, ":s": {"SS": sorted(scopes)}}}}
            for (site, shard), scopes in sorted(by_counter(marks).items())]


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
            return self._apply_item(event, item, attributes)
        marks = marked_scopes(event)
        if not marks:
            return self._put_if_newer(item, event.revision)
        return self._put_counted(item, event.revision, counter_updates(self._table, marks))

    def _put_if_newer(self, item: dict[str, Any], revision: int) -> bool:
        return put_if(self._client, self._table, item, NEWER, values={":rev": {"N": str(revision)}})

    def _put_counted(self, item: dict[str, Any], revision: int, counters: list[dict[str, Any]]) -> bool:
        """The entity, if newer, and its marks on the change counters, in one transaction (so a stored
        list is never taken for current once the entity changed)."""
        ops = [Op("entity", {"Put": {"TableName": self._table, "Item": item, "ConditionExpression": NEWER,
                                     "ExpressionAttributeValues": {":rev": {"N": str(revision)}}}}),
               *(Op("change_counter", c) for c in counters)]
        for _ in range(_MAX_ATTEMPTS):
            try:
                transact(self._client, ops)
                return True
            except ConditionFailed as failed:
                if "entity" in failed and not failed.conflict:
                    return False
        raise Unavailable()

    def _apply_item(self, event: AcceptedItemEvent, item: dict[str, Any], attributes: dict[str, Any]) -> bool:
        """The item, its index entries (old ones replaced), 1 added to the Site's revision and the
        marks of its old and new pair, in one transaction conditioned on the version it replaces.

        The stored version is read first: the index entries to remove and the pair it leaves are
        its own. A concurrent event for the same item makes the condition fail: read and decide again.
        """
        entity_key = keys.accepted_item_key(event.site, event.item_id)
        for _ in range(_MAX_ATTEMPTS):
            old = get_item(self._client, self._table, entity_key)
            if old is not None and int(old["revision"]) >= event.revision:
                return False
            if old is None:
                condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
            else:
                condition = {"ConditionExpression": "revision = :old",
                             "ExpressionAttributeValues": {":old": {"N": str(old["revision"])}}}
            change = index_change(event.site, indexed(old), indexed(attributes))
            ops = [
                Op("entity", {"Put": {"TableName": self._table, "Item": item, **condition}}),
                # Any applied item of a Site moves that Site's retained revision on (off 0 the first time).
                Op("retained_revision", {"Update": {"TableName": self._table, "Key": keys.retained_key(event.site),
                                                    "UpdateExpression": "ADD revision :one",
                                                    "ExpressionAttributeValues": {":one": {"N": "1"}}}}),
                *(Op("item_index", {"Delete": {"TableName": self._table, "Key": k}}) for k in change.deletes),
                *(Op("item_index", {"Put": {"TableName": self._table, "Item": i}}) for i in change.puts),
                *(Op("change_counter", c) for c in counter_updates(self._table, marked_scopes(event, old))),
            ]
            try:
                transact(self._client, ops)
                return True
            except ConditionFailed:
                continue  # another version of this item was written, or a counter was busy: decide again
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
            ops = [
                Op("entity", {"Put": {"TableName": self._table, "Item": item, **condition}}),
                Op("ref_bindings", {"Update": {"TableName": self._table,
                                               "Key": keys.ref_key(event.provider_project_ref),
                                               "ExpressionAttributeNames": {"#b": entry_name}, **ref_update}}),
            ]
            if old is not None and old["providerProjectRef"] != event.provider_project_ref:
                ops.append(Op("ref_bindings", {"Update": {"TableName": self._table,
                                                          "Key": keys.ref_key(old["providerProjectRef"]),
                                                          "UpdateExpression": "REMOVE #b",
                                                          "ExpressionAttributeNames": {"#b": entry_name}}}))
            try:
                transact(self._client, ops)
                return True
            except ConditionFailed:
                continue  # a concurrent event for this binding won; re-read and decide again
        raise Unavailable()
