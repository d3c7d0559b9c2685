"""Reading what the retained list is computed from, bounded by the Site's own items.

One Query of the Site's item partition (`ITEMS#<site>`, consistent, paged,
only `required: true` items, only the attributes the rules need), then consistent
BatchGets of exactly the view entities those items name: their Projects,
their Parties' bindings at this Site and their memberships. The BatchGets run
in parallel (a thread pool; the boto3 client is thread-safe). Nothing else
in the table is read, whatever its size.

Cost: the Query's read units follow the Site's item bytes (4 KB per unit,
consistent), and each view entity is one unit (they are far below 4 KB).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from chalicelib.errors import Unavailable
from chalicelib.retained.rules import Item, Project, SiteBinding
from chalicelib.store.codec import from_item
from chalicelib.store.errors import store_errors
from chalicelib.view.keys import accepted_item_key, membership_key, party_site_binding_key, project_key

_BATCH_KEYS = 100
_WORKERS = 8
_MAX_UNPROCESSED_ROUNDS = 8

# The attributes the rules need; `pk` tells the BatchGet answers apart.
_VIEW_PROJECTION = "pk, #st, managementGeneration, bindingId, generation"
_ITEM_PROJECTION = "projectId, partyId, generation, managementGeneration"
# Items per Query page: bounds each call's work (an emulator serializing a full 1 MB page can
# outlast the client's read timeout); in DynamoDB it only splits the same read units over more calls.
_PAGE_ITEMS = 2000


def query_required_items(client: Any, table: str, site: str) -> list[Item]:
    partition = accepted_item_key(site, "-")["pk"]["S"]
    items: list[Item] = []
    kwargs: dict[str, Any] = {}
    while True:
        with store_errors():
            page = client.query(
                TableName=table, KeyConditionExpression="pk = :p", ConsistentRead=True,
                FilterExpression="#rq = :t", ProjectionExpression=_ITEM_PROJECTION,
                ExpressionAttributeNames={"#rq": "required"},
                ExpressionAttributeValues={":p": {"S": partition}, ":t": {"BOOL": True}},
                Limit=_PAGE_ITEMS, ReturnConsumedCapacity="TOTAL", **kwargs,
            )
        for raw in page.get("Items", []):
            values = from_item(raw) or {}
            items.append(Item(values["projectId"], values["partyId"], int(values["generation"]),
                              int(values["managementGeneration"]), required=True))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def _batch(client: Any, table: str, keys: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    pending: dict[str, Any] = {"Keys": keys, "ConsistentRead": True, "ProjectionExpression": _VIEW_PROJECTION,
                               "ExpressionAttributeNames": {"#st": "state"}}
    for _ in range(_MAX_UNPROCESSED_ROUNDS):
        with store_errors():
            response = client.batch_get_item(RequestItems={table: pending}, ReturnConsumedCapacity="TOTAL")
        for raw in response.get("Responses", {}).get(table, []):
            values = from_item(raw) or {}
            found[values["pk"]] = values
        unprocessed = response.get("UnprocessedKeys", {}).get(table)
        if not unprocessed:
            return found
        pending = unprocessed
    raise Unavailable()


def batch_get_all(client: Any, table: str, keys: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Consistent reads of any number of keys, by pk, 100 per call, calls in parallel."""
    chunks = [keys[i:i + _BATCH_KEYS] for i in range(0, len(keys), _BATCH_KEYS)]
    found: dict[str, dict[str, Any]] = {}
    if len(chunks) <= 1:
        for chunk in chunks:
            found.update(_batch(client, table, chunk))
        return found
    with ThreadPoolExecutor(max_workers=min(_WORKERS, len(chunks))) as pool:
        for part in pool.map(lambda chunk: _batch(client, table, chunk), chunks):
            found.update(part)
    return found


def read_view(
    client: Any, table: str, site: str, items: list[Item]
) -> tuple[dict[str, Project], dict[str, SiteBinding], dict[tuple[str, str], int]]:
    """The Projects, this Site's Party bindings and the memberships the items name."""
    projects_by_key = {project_key(p)["pk"]["S"]: p for p in {i.project_id for i in items}}
    bindings_by_key = {party_site_binding_key(q, site)["pk"]["S"]: q for q in {i.party_id for i in items}}
    memberships_by_key = {
        membership_key(p, q)["pk"]["S"]: (p, q) for p, q in {(i.project_id, i.party_id) for i in items}
    }
    keys = [project_key(p) for p in sorted(projects_by_key.values())]
    keys += [party_site_binding_key(q, site) for q in sorted(bindings_by_key.values())]
    keys += [membership_key(p, q) for p, q in sorted(memberships_by_key.values())]
    found = batch_get_all(client, table, keys)

    projects: dict[str, Project] = {}
    bindings: dict[str, SiteBinding] = {}
    memberships: dict[tuple[str, str], int] = {}
    for pk, values in found.items():
        if pk in projects_by_key:
            projects[projects_by_key[pk]] = Project(values["state"], int(values["managementGeneration"]))
        elif pk in bindings_by_key:
            bindings[bindings_by_key[pk]] = SiteBinding(values["bindingId"], values["state"])
        elif pk in memberships_by_key:
            memberships[memberships_by_key[pk]] = int(values["generation"])
    return projects, bindings, memberships
