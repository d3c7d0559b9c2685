"""`GET /resource-provisioning/{site}/retained-accounts`: the list, and a revision that never lies.

The list is computed at read time from the Site's items and the view entities
they name (reader.py), never from a scan. The revision lives on the Site's
`RETAINED#<site>` item, with the digest of the list that revision denotes:

- The intake adds 1 to `revision` in the same transaction as every applied
  accepted_item of the Site (view/intake.py), so the revision leaves 0 with the
  Site's first item and rises with every item change, whatever the list.
- A read compares the digest of the list it computed with the stored one. The
  same digest: the stored revision already denotes this list. Another digest
  (a view change, such as a Project closing or a binding retiring, altered the
  list; or an item change did): the read claims the next revision for its
  digest in one atomic update (`ADD revision 1, SET listHash`, on condition
  that the stored digest differs) and answers with the revision it got. If the
  condition fails, another reader already stored this very digest: its
  revision denotes our list. No read is ever refused because events keep
  arriving (an earlier design retried on any revision move and starved).

Each revision value is stored with exactly one digest and only ever replaced
by a higher value, so a revision never denotes two different lists and never
falls. A revision the intake created has no digest of its own yet; it carries
the previous one (absent before the first read: the empty list, which is what
revision 0 denoted). The read never creates `RETAINED#<site>`: no accepted
item ever, revision 0 and an empty list.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from chalicelib.errors import Unavailable
from chalicelib.observability import logger
from chalicelib.retained.reader import query_required_items, read_view
from chalicelib.retained.rules import EMPTY_DIGEST, RetainedAccount, as_body, list_digest, retained_accounts
from chalicelib.runtime import Services
from chalicelib.store.codec import from_item
from chalicelib.store.errors import CONDITION_FAILED, error_code, store_errors
from chalicelib.view.keys import retained_key

_MAX_ATTEMPTS = 5
MAX_ACCOUNTS = 10_000


def compute_list(services: Services, site: str, limit: int = MAX_ACCOUNTS) -> list[RetainedAccount]:
    items = query_required_items(services.client, services.table, site)
    projects, bindings, memberships = read_view(services.client, services.table, site, items)
    accounts = retained_accounts(items, projects, bindings, memberships)
    if len(accounts) > limit:
        # The contract's list is complete and holds at most 10,000 entries. A cut list would make the
        # agent withdraw accounts it must keep; unavailable makes it keep every account instead.
        logger.error("retained list exceeds the contract's maximum", extra={"site": site, "entries": len(accounts)})
        raise Unavailable()
    return accounts


def _state(services: Services, site: str) -> tuple[int, str]:
    with store_errors():
        raw = services.client.get_item(
            TableName=services.table, Key=retained_key(site), ConsistentRead=True, ReturnConsumedCapacity="TOTAL",
        ).get("Item")
    item = from_item(raw) or {}
    return int(item.get("revision", 0)), str(item.get("listHash", EMPTY_DIGEST))


def _claim(services: Services, site: str, digest: str) -> int | None:
    """The next revision, now denoting `digest`; None when the stored digest already is `digest`."""
    try:
        with store_errors():
            response = services.client.update_item(
                TableName=services.table, Key=retained_key(site),
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


def get_retained_accounts(services: Services, site: str, limit: int = MAX_ACCOUNTS) -> dict[str, Any]:
    revision, stored = _state(services, site)
    if revision == 0:
        return as_body(0, [])
    accounts = compute_list(services, site, limit)
    digest = list_digest(accounts)
    for _ in range(_MAX_ATTEMPTS):
        if digest == stored:
            return as_body(revision, accounts)
        claimed = _claim(services, site, digest)
        if claimed is not None:
            return as_body(claimed, accounts)
        # Another reader stored this digest first: answer with the revision it denotes.
        revision, stored = _state(services, site)
    raise Unavailable()
