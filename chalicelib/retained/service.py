"""`GET /resource-provisioning/{site}/retained-accounts`: the list, and a revision that never lies.

The list is stored (materialized.py) and recomputed only when an input changed since it was
computed: the intake adds 1 to one of the Site's change counters in the same transaction as every
applied item, Project, membership or Party Site binding event, and the stored list carries the
counts it was computed at (its stamp). A read whose counters equal the stamp answers the stored
list; otherwise it computes the list from the Site's items and the view entities they name
(reader.py, never a scan) and stores it for the reads after it
(docs/decisions/0002-retained-accounts-materialized.md).

The revision lives on the Site's `RETAINED#<site>` item, with the digest of the list that
revision denotes:

- The intake adds 1 to `revision` in the same transaction as every applied
  accepted_item of the Site (view/intake.py), so the revision leaves 0 with the
  Site's first item and rises with every item change, whatever the list.
- A read compares the digest of its list with the stored one. The
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

from chalicelib.errors import Unavailable
from chalicelib.observability import logger
from chalicelib.retained.materialized import (
    SiteState,
    claim_revision,
    read_list,
    read_revision,
    read_state,
    store_list,
)
from chalicelib.retained.reader import query_required_items, read_view
from chalicelib.retained.rules import (
    RetainedAccount,
    as_body,
    is_current,
    list_digest,
    retained_accounts,
)
from chalicelib.store.table import TableAccess

_MAX_ATTEMPTS = 5
MAX_ACCOUNTS = 10_000


# The named causes of this read's 503s (the HTTP layer logs the cause's class name).
class RetainedListTooLong(Exception):
    """The Site's list passes the contract's maximum."""


class StoredListKeptChanging(Exception):
    """Every attempt found the stored list replaced between its header and its chunks."""


class RevisionKeptMoving(Exception):
    """Every attempt to claim a revision for the list lost to another digest."""


def compute_list(db: TableAccess, site: str) -> list[RetainedAccount]:
    items = query_required_items(db.client, db.table, site)
    projects, bindings, memberships = read_view(db.client, db.table, site, items)
    return retained_accounts(items, projects, bindings, memberships)


def _current_list(db: TableAccess, site: str, state: SiteState) -> tuple[list[RetainedAccount], str] | None:
    """The Site's list and its digest; None when the stored list was replaced while being read."""
    header = state.header
    if header is not None and is_current(header.stamp, state.counters):
        stored = read_list(db.client, db.table, site, header)
        return None if stored is None else (stored, header.digest)
    # The counters were read before the inputs: the list reflects at least every change they count.
    accounts = compute_list(db, site)
    digest = list_digest(accounts)
    store_list(db.client, db.table, site, header, state.counters, accounts, digest)
    return accounts, digest


def _within_limit(site: str, accounts: list[RetainedAccount], limit: int) -> None:
    if len(accounts) > limit:
        # The contract's list is complete and holds at most 10,000 entries. A cut list would make the
        # agent withdraw accounts it must keep; unavailable makes it keep every account instead.
        logger.error("retained list exceeds the contract's maximum", extra={"site": site, "entries": len(accounts)})
        raise Unavailable() from RetainedListTooLong()


def get_retained_accounts(db: TableAccess, site: str, limit: int = MAX_ACCOUNTS) -> dict[str, Any]:
    for _ in range(_MAX_ATTEMPTS):
        state = read_state(db.client, db.table, site)
        if state.revision == 0:
            return as_body(0, [])
        current = _current_list(db, site, state)
        if current is not None:
            break
    else:
        raise Unavailable() from StoredListKeptChanging()
    accounts, digest = current
    _within_limit(site, accounts, limit)
    revision, stored = state.revision, state.list_hash
    for _ in range(_MAX_ATTEMPTS):
        if digest == stored:
            return as_body(revision, accounts)
        claimed = claim_revision(db.client, db.table, site, digest)
        if claimed is not None:
            return as_body(claimed, accounts)
        # Another reader stored this digest first: answer with the revision it denotes.
        revision, stored = read_revision(db.client, db.table, site)
    raise Unavailable() from RevisionKeptMoving()
