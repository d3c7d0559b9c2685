"""What one accounts report may do (pure): validation beyond the schema, and the ordering rules.

- Every accountReference must be a name the Site could have made (names.py);
  a partyId or an accountReference listed twice makes the report 400.
- The resource must be a known, non-retired allocation of this Site
  (`unknown_resource`, `retired`).
- Against the set saved for the resource: an older observedAt is `stale`; an
  equal instant is accepted without change when the accounts are identical (as
  a set), and `stale` otherwise; a newer one replaces the set completely.
Refusals are never saved, so the requestId of a refused report stays free.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.accounts.models import Account
from chalicelib.accounts.names import valid_account_reference
from chalicelib.accounts.sets import SetHeader, reported_row
from chalicelib.allocations.models import AllocationRecord
from chalicelib.contract.instants import parse_instant
from chalicelib.errors import BadRequest
from chalicelib.idempotency import fingerprint

UNKNOWN_RESOURCE = "unknown_resource"
RETIRED = "retired"
STALE = "stale"

MESSAGES = {
    UNKNOWN_RESOURCE: "No allocation for this resource at this Site; report the resource first.",
    RETIRED: "The allocation is retired and accepts no accounts report.",
    STALE: "A newer or different accounts report for this resource at this instant was already applied.",
}


def check_accounts(site: str, accounts: list[Account]) -> None:
    """400 for a name the Site could not have made, or a Party or name listed twice; never echoes input."""
    parties: set[str] = set()
    references: set[str] = set()
    for account in accounts:
        if not valid_account_reference(site, account.account_reference):
            raise BadRequest("invalid_account_reference")
        if account.party_id in parties:
            raise BadRequest("duplicate_party")
        if account.account_reference in references:
            raise BadRequest("duplicate_account_reference")
        parties.add(account.party_id)
        references.add(account.account_reference)


def set_fingerprint(accounts: list[Account]) -> str:
    """Identity of the reported set: the order of the list is not content."""
    return fingerprint(sorted(reported_row(a) for a in accounts))


def confirmed_count(accounts: list[Account]) -> int:
    return sum(1 for a in accounts if a.ready)


@dataclass(frozen=True)
class Accepted:
    changed: bool  # False: equal instant and identical set, nothing to write but the result


@dataclass(frozen=True)
class Rejected:
    code: str


def decide(
    site: str,
    allocation: AllocationRecord | None,
    current: SetHeader | None,
    observed_at: str,
    set_fp: str,
) -> Accepted | Rejected:
    # Another Site's allocation is indistinguishable from none at all.
    if allocation is None or allocation.site != site:
        return Rejected(UNKNOWN_RESOURCE)
    if allocation.lifecycle == "retired":
        return Rejected(RETIRED)
    if current is None:
        return Accepted(changed=True)
    new_at, old_at = parse_instant(observed_at), parse_instant(current.observed_at)
    if new_at < old_at:
        return Rejected(STALE)
    if new_at == old_at:
        return Accepted(changed=False) if set_fp == current.fingerprint else Rejected(STALE)
    return Accepted(changed=True)
