"""View items a member answer reads, as domain records (members/models.py).

Each function takes a plain item (or None) as `store.ops` returns it. A
username counts as verified only when its item says `verified: true` (a
boolean, nothing truthy), as Beto wrote it.
"""

from __future__ import annotations

from typing import Any

from chalicelib.members.models import Membership, SiteBinding, Username


def username_from_item(item: dict[str, Any] | None) -> Username | None:
    if not item or "partyId" not in item:
        return None
    return Username(party_id=str(item["partyId"]), verified=item.get("verified") is True)


def membership_from_item(item: dict[str, Any] | None) -> Membership | None:
    if not item:
        return None
    return Membership(state=str(item.get("state")), generation=int(item["generation"]))


def binding_from_item(item: dict[str, Any] | None) -> SiteBinding | None:
    if not item:
        return None
    return SiteBinding(binding_id=str(item["bindingId"]), revision=int(item["revision"]),
                       state=str(item.get("state")))
