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


def verified_party(username_item: dict[str, Any] | None) -> str | None:
    if not username_item or username_item.get("verified") is not True:
        return None
    return str(username_item["partyId"])


def member_result(
    project_id: str,
    party_id: str,
    membership_item: dict[str, Any] | None,
    binding_item: dict[str, Any] | None,
) -> dict[str, Any] | None:
    if not membership_item or membership_item.get("state") != "member":
        return None
    if not binding_item:
        return None
    return {
        "projectId": project_id,
        "partyId": party_id,
        "bindingId": binding_item["bindingId"],
        "bindingRevision": int(binding_item["revision"]),
        "generation": int(membership_item["generation"]),
        "state": "retired" if binding_item.get("state") == "retired" else "active",
    }
