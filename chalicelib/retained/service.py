"""`GET /resource-provisioning/{site}/retained-accounts`: the list, and a revision that never lies.

The list is stored (materialized.py) and kept up to date by each change: the intake counts every
applied item, Project, membership or Party Site binding event on one of the Site's change counters,
with the scopes (a Project, a Party, a (Project, Party) pair) whose rows it can change, in the
transaction that writes the entity, and keeps an index of the Site's required items by Project and
by Party (view/marks.py). A read with no pending scope answers the stored list. A read with pending
scopes folds them in: it recomputes only their rows, from the index and the view entities it names
(reader.py), patches the stored list, and stores it in the same transaction that takes those
scopes off the counters. More than MAX_FOLDED_SCOPES pending scopes, no stored list yet, or a
Site with items from before the index: the list is computed from the Site's items and the view
entities they name (never a scan), as on a Site's first read
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

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from chalicelib.errors import Unavailable
from chalicelib.observability import logger
from chalicelib.retained.materialized import (
    Header,
    SiteState,
    StoredList,
    claim_revision,
    prune,
    read_list,
    read_revision,
    read_state,
    read_stored,
    store_list,
)
from chalicelib.retained.reader import query_required_items, query_scopes, read_view
from chalicelib.retained.rules import (
    RetainedAccount,
    as_body,
    is_current,
    list_digest,
    patch_list,
    retained_accounts,
)
from chalicelib.store.table import TableAccess

_MAX_ATTEMPTS = 5
MAX_ACCOUNTS = 10_000
# More pending scopes than this (a burst of events between two reads) and one full computation is
# cheaper than a Query per scope: the list is computed from the Site's items, as on its first read.
MAX_FOLDED_SCOPES = 200


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


def _stored(db: TableAccess, site: str, header: Header) -> tuple[list[RetainedAccount], str] | None:
    stored = read_list(db.client, db.table, site, header)
    return None if stored is None else (stored, header.digest)


def _fold(db: TableAccess, site: str, state: SiteState, header: Header,
          scopes: frozenset[str]) -> tuple[list[RetainedAccount], str] | None:
    """The stored list with the rows of the pending scopes computed again from the item index and the
    view entities they name; stored, and the scopes taken off the counters, in one transaction."""
    client, table = db.client, db.table
    with ThreadPoolExecutor(max_workers=1) as pool:
        reading = pool.submit(read_stored, client, table, site, header)
        items = query_scopes(client, table, site, scopes)
        projects, bindings, memberships = read_view(client, table, site, items)
        stored = reading.result()
    if stored is None:
        return None
    before = stored.accounts()
    recomputed = retained_accounts(items, projects, bindings, memberships)
    accounts = patch_list(before, scopes, recomputed)
    if accounts == before:
        store_list(client, table, site, state, accounts, header.digest, unchanged=True)
        return accounts, header.digest
    # The same list as the stored base with one patch: the earlier patch's rows outside these scopes,
    # and the rows recomputed for them.
    patch = StoredList(stored.base, stored.scopes | scopes, patch_list(stored.rows, scopes, recomputed))
    digest = list_digest(accounts)
    store_list(client, table, site, state, accounts, digest, patch=patch)
    return accounts, digest


def _current_list(db: TableAccess, site: str, state: SiteState) -> tuple[list[RetainedAccount], str] | None:
    """The Site's list and its digest; None when the stored list was replaced while being read."""
    header = state.header
    if header is not None and state.indexed:
        # The counters name every scope whose rows may have changed since the list was stored.
        pending = state.pending
        if not pending:
            return _stored(db, site, header)
        if len(pending) <= MAX_FOLDED_SCOPES:
            return _fold(db, site, state, header, pending)
    elif header is not None and is_current(header.stamp, state.counters):
        return _stored(db, site, header)  # a Site with items from before the index: as in 0002
    # The counters were read before the inputs: the list reflects at least every change they count.
    accounts = compute_list(db, site)
    digest = list_digest(accounts)
    store_list(db.client, db.table, site, state, accounts, digest)
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
            # No item ever: the empty list. Project and membership events mark every Site, so their
            # scopes are taken off here too, or a Site without items would gather them for ever.
            if state.scopes:
                prune(db.client, db.table, site, state)
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
