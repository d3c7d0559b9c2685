"""Retained accounts (pure): every fence on its own, and what is not a fence."""

from __future__ import annotations

import pytest

from chalicelib.retained.rules import (
    BINDING_MISSING,
    BINDING_RETIRED,
    EMPTY_DIGEST,
    MANAGEMENT_GENERATION,
    NEWER_MEMBERSHIP,
    NOT_REQUIRED,
    PROJECT_INACTIVE,
    Item,
    Project,
    SiteBinding,
    fence,
    list_digest,
    retained_accounts,
)

P, Q = "p-1", "q-1"
ITEM = Item(P, Q, generation=2, management_generation=5, required=True)
ACTIVE = Project("active", 5)
BOUND = SiteBinding("sb-1", "established")


@pytest.mark.parametrize(
    ("item", "project", "binding", "membership", "expected"),
    [
        (ITEM, ACTIVE, BOUND, None, None),  # no membership known: nothing newer
        (ITEM, ACTIVE, BOUND, 2, None),  # same generation (member or merely left): kept
        (ITEM, ACTIVE, BOUND, 1, None),  # older membership generation: kept
        (ITEM, ACTIVE, BOUND, 3, NEWER_MEMBERSHIP),
        (ITEM, None, BOUND, None, PROJECT_INACTIVE),
        (ITEM, Project("closed", 5), BOUND, None, PROJECT_INACTIVE),
        (ITEM, Project("active", 4), BOUND, None, MANAGEMENT_GENERATION),
        (ITEM, Project("active", 6), BOUND, None, MANAGEMENT_GENERATION),
        (ITEM, ACTIVE, None, None, BINDING_MISSING),
        (ITEM, ACTIVE, SiteBinding("sb-1", "retired"), None, BINDING_RETIRED),
        (Item(P, Q, 2, 5, required=False), ACTIVE, BOUND, None, NOT_REQUIRED),
    ],
)
def test_fence(item, project, binding, membership, expected) -> None:
    assert fence(item, project, binding, membership) == expected


def test_list_is_distinct_sorted_and_uses_the_current_binding() -> None:
    items = [
        Item("p-2", Q, 1, 1, True),
        Item("p-1", Q, 1, 1, True),
        Item("p-1", Q, 1, 1, True),  # a second item for the same account
        Item("p-1", Q, 2, 1, True),  # an item of a later generation: its own entry
        Item("p-1", "q-2", 1, 1, True),  # fenced: no binding
    ]
    projects = {"p-1": Project("active", 1), "p-2": Project("active", 1)}
    bindings = {Q: SiteBinding("sb-9", "established")}
    assert retained_accounts(items, projects, bindings, {}) == [
        ("p-1", Q, "sb-9", 1), ("p-1", Q, "sb-9", 2), ("p-2", Q, "sb-9", 1),
    ]


def test_digest_tells_lists_apart() -> None:
    assert list_digest([]) == EMPTY_DIGEST
    assert list_digest([(P, Q, "b", 1)]) != list_digest([(P, Q, "b", 2)])
