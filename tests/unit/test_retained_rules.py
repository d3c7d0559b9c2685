"""Retained accounts (pure): every fence on its own, and what is not a fence."""

from __future__ import annotations

import hashlib
import json
import zlib

import pytest

from chalicelib.retained.rules import (
    BINDING_MISSING,
    BINDING_RETIRED,
    CHANGE_SHARDS,
    CHUNK_BYTES,
    EMPTY_DIGEST,
    LIST_FORMAT,
    MANAGEMENT_GENERATION,
    NEWER_MEMBERSHIP,
    NOT_REQUIRED,
    PROJECT_INACTIVE,
    Item,
    Project,
    SiteBinding,
    as_body,
    change_shard,
    decode_list,
    decode_strings,
    encode_list,
    encode_strings,
    fence,
    is_current,
    list_digest,
    retained_accounts,
    split,
)

P, Q = "p-1", "q-1"
P_ID, PARTY_ID = "11111111-1111-4111-8111-111111111111", "33333333-3333-4333-8333-333333333333"
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


def test_digest_is_the_sha256_of_the_compact_json_list() -> None:
    # Pinned: a digest kept in the store must mean the same list after any change to the code.
    assert hashlib.sha256(b"[]").hexdigest() == EMPTY_DIGEST
    assert list_digest([(P, Q, "sb-1", 2)]) == hashlib.sha256(b'[["p-1","q-1","sb-1",2]]').hexdigest()
    assert list_digest([(P, Q, "b", 1)]) != list_digest([(P, Q, "b", 2)])


def test_a_newer_membership_fences_the_list_per_project_and_party() -> None:
    items = [Item("p-1", Q, 2, 1, True), Item("p-2", Q, 2, 1, True), Item("p-1", "q-2", 2, 1, True)]
    projects = {"p-1": Project("active", 1), "p-2": Project("active", 1)}
    bindings = {Q: SiteBinding("sb-1", "established"), "q-2": SiteBinding("sb-2", "established")}
    # Q was added again to p-1 (generation 3): only that account goes; the same Party in p-2,
    # and another Party in p-1, keep theirs; an equal or older generation fences nothing.
    memberships = {("p-1", Q): 3, ("p-2", Q): 2, ("p-1", "q-2"): 1}
    assert retained_accounts(items, projects, bindings, memberships) == [
        ("p-1", "q-2", "sb-2", 2), ("p-2", Q, "sb-1", 2),
    ]


def test_every_fence_applies_in_the_list() -> None:
    items = [
        Item("p-1", Q, 1, 1, True),  # kept
        Item("p-1", Q, 1, 1, False),  # not required (the required twin keeps the account)
        Item("p-x", Q, 1, 1, True),  # unknown project
        Item("p-2", Q, 1, 1, True),  # project closed
        Item("p-3", Q, 1, 1, True),  # other management generation
        Item("p-1", "q-gone", 1, 1, True),  # no binding
        Item("p-1", "q-old", 1, 1, True),  # retired binding
    ]
    projects = {"p-1": Project("active", 1), "p-2": Project("closed", 1), "p-3": Project("active", 2)}
    bindings = {Q: SiteBinding("sb-1", "established"), "q-old": SiteBinding("sb-0", "retired")}
    assert retained_accounts(items, projects, bindings, {}) == [("p-1", Q, "sb-1", 1)]
    assert retained_accounts([Item("p-1", Q, 1, 1, False)], projects, bindings, {}) == []


def test_as_body_names_every_field_in_list_order() -> None:
    accounts = [("p-1", "q-1", "sb-1", 1), ("p-2", "q-2", "sb-2", 7)]
    assert as_body(9, accounts) == {
        "revision": 9,
        "accounts": [
            {"projectId": "p-1", "partyId": "q-1", "bindingId": "sb-1", "generation": 1},
            {"projectId": "p-2", "partyId": "q-2", "bindingId": "sb-2", "generation": 7},
        ],
    }
    assert as_body(1, []) == {"revision": 1, "accounts": []}


def test_as_body_conforms_to_the_contract() -> None:
    from tests.support.contract import validate_schema

    body = as_body(3, [(P_ID, PARTY_ID, "sb-1", 1)])
    validate_schema("RetainedAccounts", body)


# --- the stored list ----------------------------------------------------------------------------

ACCOUNTS = [(P, Q, "sb-1", 1), (P, "q-2", "sb-2", 9007199254740991), ("p-2", Q, "sb-1", 3)]


@pytest.mark.parametrize(
    ("stamp", "counters", "current"),
    [
        (None, {}, False),  # no list stored yet
        ({}, {}, True),
        ({"-": 2}, {"-": 2}, True),
        ({"-": 2, "changes#03": 0}, {"-": 2}, True),  # an absent counter is 0
        ({"-": 2}, {"-": 2, "changes#03": 0}, True),  # on either side
        ({"-": 2}, {"-": 3}, False),  # an item changed since
        ({"-": 2}, {"-": 2, "changes#03": 1}, False),  # a view input changed since (a new counter)
        ({"-": 2, "changes#03": 1}, {"-": 2, "changes#03": 2}, False),
        ({"-": 2, "changes#03": 1}, {"-": 2}, False),  # counters never fall; not the same state
    ],
)
def test_is_current(stamp, counters, current) -> None:
    assert is_current(stamp, counters) is current


def test_change_shards_are_few_stable_and_spread() -> None:
    entities = [f"VIEW#membership#{P}#q-{n}" for n in range(200)]
    shards = {change_shard(e) for e in entities}
    assert shards <= {f"changes#{n:02d}" for n in range(CHANGE_SHARDS)}
    assert len(shards) > CHANGE_SHARDS // 2  # concurrent bumps land on different items
    assert change_shard(entities[0]) == change_shard(entities[0])
    assert change_shard("VIEW#project#p-1") == "changes#06"  # crc32("VIEW#project#p-1") % 32: pinned


@pytest.mark.parametrize("accounts", [[], ACCOUNTS, [(P, Q, b, g) for b in ("a", "b") for g in range(1, 400)]])
def test_encoded_list_decodes_to_itself(accounts) -> None:
    assert decode_list(encode_list(accounts)) == accounts


def test_encoding_stores_each_string_once() -> None:
    text = zlib.decompress(encode_list(ACCOUNTS)).decode("ascii")
    assert " " not in text  # compact: the stored list is what a read pays for
    document = json.loads(text)
    assert document == {"v": LIST_FORMAT, "s": [P, "p-2", Q, "q-2", "sb-1", "sb-2"],
                        "r": [[0, 2, 4, 1], [0, 3, 5, 9007199254740991], [1, 2, 4, 3]]}


@pytest.mark.parametrize("strings", [[], ["p-1/q-1"], ["b", "a", "a"], ["\u00e9"]])
def test_encoded_strings_decode_to_themselves_as_compact_ascii_json(strings) -> None:
    data = encode_strings(strings)
    assert zlib.decompress(data) == json.dumps(strings, separators=(",", ":")).encode("ascii")  # \u escapes
    assert decode_strings(data) == strings


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError) as refused:
        decode_list(zlib.compress(b'{"v":2,"s":[],"r":[]}'))
    assert str(refused.value) == "unknown list format"


@pytest.mark.parametrize(
    ("data", "size", "chunks"),
    [
        (b"", 3, [b""]),  # the empty list still has its one chunk
        (b"abc", 3, [b"abc"]),
        (b"abcd", 3, [b"abc", b"d"]),
        (b"abcdef", 3, [b"abc", b"def"]),
        (b"abcdefg", 2, [b"ab", b"cd", b"ef", b"g"]),
    ],
)
def test_split(data, size, chunks) -> None:
    assert split(data, size) == chunks
    assert b"".join(split(data, size)) == data


def test_the_default_chunk_fits_a_dynamodb_item_with_room_for_its_key() -> None:
    assert CHUNK_BYTES <= 400 * 1024 - 10_000
