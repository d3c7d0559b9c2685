"""Who a Site username is in a provider Project (pure): every condition or nothing.

The answer exists only when all hold; otherwise there is no member, and the
caller cannot tell which condition failed:
- the provider ref resolves to exactly one Project (checked by the caller);
- that Project has a non-retired allocation at this Site (checked by the caller);
- (site, username) maps to a verified Party;
- the Party's membership in the Project is `member`;
- the Party has a `site` binding at this Site (`retired` binding -> state `retired`).
"""

from __future__ import annotations

from typing import Any

from chalicelib.members.models import Membership, SiteBinding, Username


def verified_party(username: Username | None) -> str | None:
    if username is None or not username.verified:
        return None
    return username.party_id


def member_result(
    project_id: str,
    party_id: str,
    membership: Membership | None,
    binding: SiteBinding | None,
) -> dict[str, Any] | None:
    if membership is None or membership.state != "member":
        return None
    if binding is None:
        return None
    return {
        "projectId": project_id,
        "partyId": party_id,
        "bindingId": binding.binding_id,
        "bindingRevision": binding.revision,
        "generation": membership.generation,
        "state": "retired" if binding.state == "retired" else "active",
    }
