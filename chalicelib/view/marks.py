"""What an applied event changes for the Sites' retained lists (pure): the scopes it marks at each
Site, and an accepted item's entries in the Site's item index.

The intake writes both in the transaction that writes the entity (intake.py), so a Site's change
counters always name every scope whose rows may differ from its stored list, and the index always
holds exactly the Site's required items; the retained read recomputes only the marked scopes, from
the index (chalicelib/retained/, docs/decisions/0002-retained-accounts-materialized.md).

| event               | scopes marked                                   | at               |
|---------------------|-------------------------------------------------|------------------|
| project             | `project#<projectId>`                           | every Site       |
| membership          | `pair#<projectId>#<partyId>`                    | every Site       |
| party_site_binding  | `party#<partyId>`                               | its Site         |
| accepted_item       | `pair#...` of the item's old and new pair       | its Site         |
| project_binding, username | none: no list is computed from them       |                  |
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chalicelib.contract.types import SITES
from chalicelib.store.codec import to_item
from chalicelib.store.keys import key_id
from chalicelib.view.events import AcceptedItemEvent, MembershipEvent, PartySiteBindingEvent, ProjectEvent
from chalicelib.view.keys import change_shard, index_keys, pair_scope, party_scope, project_scope


@dataclass(frozen=True)
class IndexedItem:
    """What the index holds of one required item."""

    item_id: str
    project_id: str
    party_id: str
    generation: int
    management_generation: int


def indexed(values: Mapping[str, Any] | None) -> IndexedItem | None:
    """The index entry of an item's stored (or event) attributes; None when it is absent or not required."""
    if not values or values.get("required") is not True:
        return None
    return IndexedItem(str(values["itemId"]), str(values["projectId"]), str(values["partyId"]),
                       int(values["generation"]), int(values["managementGeneration"]))


def index_items(site: str, entry: IndexedItem) -> list[dict[str, Any]]:
    """The entry's two index items (by Project, by Party), ready to put."""
    attributes = to_item({"generation": entry.generation, "managementGeneration": entry.management_generation})
    return [{**k, **attributes} for k in index_keys(site, entry.project_id, entry.party_id, entry.item_id)]


@dataclass(frozen=True)
class IndexChange:
    deletes: list[dict[str, Any]] = field(default_factory=list)  # keys
    puts: list[dict[str, Any]] = field(default_factory=list)  # items


def index_change(site: str, old: IndexedItem | None, new: IndexedItem | None) -> IndexChange:
    """The index writes that take the item from `old` to `new` (a key put again is not also deleted)."""
    if old == new:
        return IndexChange()
    puts = index_items(site, new) if new is not None else []
    kept = {key_id(item) for item in puts}
    deletes = [] if old is None else [k for k in index_keys(site, old.project_id, old.party_id, old.item_id)
                                      if key_id(k) not in kept]
    return IndexChange(deletes, puts)


def marked_scopes(event: Any, old_item: Mapping[str, Any] | None = None) -> dict[str, set[str]]:
    """Site -> the scopes the applied event changed (an accepted item: its stored version before it)."""
    if isinstance(event, ProjectEvent):
        return {site: {project_scope(event.project_id)} for site in SITES}
    if isinstance(event, MembershipEvent):
        return {site: {pair_scope(event.project_id, event.party_id)} for site in SITES}
    if isinstance(event, PartySiteBindingEvent):
        return {event.site: {party_scope(event.party_id)}}
    if isinstance(event, AcceptedItemEvent):
        scopes = {pair_scope(event.project_id, event.party_id)}
        if old_item:
            scopes.add(pair_scope(str(old_item["projectId"]), str(old_item["partyId"])))
        return {event.site: scopes}
    return {}


def by_counter(marks: Mapping[str, set[str]]) -> dict[tuple[str, str], set[str]]:
    """(Site, counter shard) -> the scopes counted on it: one counter update each."""
    counters: dict[tuple[str, str], set[str]] = defaultdict(set)
    for site, scopes in marks.items():
        for scope in scopes:
            counters[(site, change_shard(scope))].add(scope)
    return dict(counters)
