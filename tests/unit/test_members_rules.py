"""Who a username is (pure rules over the items as the store adapter reads them): each condition on its own,
each failure the same None."""

from __future__ import annotations

import pytest

from chalicelib.members.repository import binding_from_item, membership_from_item, username_from_item
from chalicelib.members.rules import member_result, verified_party

PROJECT = "11111111-1111-4111-8111-111111111111"
PARTY = "33333333-3333-4333-8333-333333333333"

MEMBER = {"state": "member", "generation": 3, "revision": 9}
BINDING = {"bindingId": "sb-1", "state": "established", "revision": 4}


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (None, None),
        ({}, None),
        ({"partyId": PARTY, "verified": False}, None),
        ({"partyId": PARTY, "verified": "true"}, None),
        ({"partyId": PARTY, "verified": True}, PARTY),
    ],
)
def test_verified_party(item, expected) -> None:
    assert verified_party(username_from_item(item)) == expected


@pytest.mark.parametrize(
    ("membership", "binding", "expected"),
    [
        (None, BINDING, None),
        ({**MEMBER, "state": "left"}, BINDING, None),
        (MEMBER, None, None),
        (MEMBER, BINDING, {"projectId": PROJECT, "partyId": PARTY, "bindingId": "sb-1", "bindingRevision": 4,
                           "generation": 3, "state": "active"}),
        (MEMBER, {**BINDING, "state": "retired"}, {"projectId": PROJECT, "partyId": PARTY, "bindingId": "sb-1",
                                                    "bindingRevision": 4, "generation": 3, "state": "retired"}),
    ],
)
def test_member_result(membership, binding, expected) -> None:
    assert member_result(PROJECT, PARTY, membership_from_item(membership), binding_from_item(binding)) == expected
