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

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from chalicelib.retained.rules import Item, Project, SiteBinding
from chalicelib.store.ops import batch_get, query_all, query_pages
from chalicelib.view.keys import (
    accepted_item_key,
    index_query,
    membership_key,
    party_site_binding_key,
    project_key,
)

_WORKERS = 8

# The attributes the rules need; `pk` and `sk` tell the BatchGet answers apart.
_VIEW_PROJECTION = "pk, sk, #st, managementGeneration, bindingId, generation"
_ITEM_PROJECTION = "projectId, partyId, generation, managementGeneration"
# Items per Query page: bounds each call's work (an emulator serializing a full 1 MB page can
# outlast the client's read timeout); in DynamoDB it only splits the same read units over more calls.
_PAGE_ITEMS = 2000


def query_required_items(client: Any, table: str, site: str) -> list[Item]:
    partition = accepted_item_key(site, "-")["pk"]["S"]
    pages = query_pages(
        client, table, KeyConditionExpression="pk = :p", FilterExpression="#rq = :t",
        ProjectionExpression=_ITEM_PROJECTION, ExpressionAttributeNames={"#rq": "required"},
        ExpressionAttributeValues={":p": {"S": partition}, ":t": {"BOOL": True}}, Limit=_PAGE_ITEMS,
    )
    return [Item(v["projectId"], v["partyId"], int(v["generation"]), int(v["managementGeneration"]), required=True)
            for page in pages for v in page]


def query_scope(client: Any, table: str, site: str, scope: str) -> list[Item]:
    """The Site's required items in one scope, from the item index the intake keeps (view/marks.py)."""
    where = index_query(site, scope)
    values: dict[str, Any] = {":p": {"S": where.partition}}
    condition = "pk = :p"
    if where.prefix is not None:
        condition += " AND begins_with(sk, :s)"
        values[":s"] = {"S": where.prefix}
    items = []
    for entry in query_all(client, table, KeyConditionExpression=condition, ExpressionAttributeValues=values,
                           ProjectionExpression="sk, generation, managementGeneration"):
        other, _, _item_id = str(entry["sk"]).partition("#")
        project_id, party_id = (scope_id(scope), other) if where.by_project else (other, scope_id(scope))
        items.append(Item(project_id, party_id, int(entry["generation"]), int(entry["managementGeneration"]),
                          required=True))
    return items


def scope_id(scope: str) -> str:
    """The Project of a project or pair scope, the Party of a party scope."""
    return scope.split("#")[1]


def query_scopes(client: Any, table: str, site: str, scopes: Iterable[str]) -> list[Item]:
    """The required items of every scope (an item in two scopes comes twice: the rules keep sets), in parallel."""
    ordered = sorted(scopes)
    if len(ordered) <= 1:
        return [i for scope in ordered for i in query_scope(client, table, site, scope)]
    with ThreadPoolExecutor(max_workers=min(_WORKERS, len(ordered))) as pool:
        parts = list(pool.map(lambda scope: query_scope(client, table, site, scope), ordered))
    return [i for part in parts for i in part]


def batch_get_all(client: Any, table: str, keys: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Consistent reads of any number of view entities, by pk (their sk is always "-"), calls in parallel."""
    found = batch_get(client, table, keys, projection=_VIEW_PROJECTION, names={"#st": "state"}, workers=_WORKERS)
    return {pk: values for (pk, _sk), values in found.items()}


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
