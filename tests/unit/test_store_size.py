"""Item sizes as DynamoDB counts them (store/size.py), on items in the low-level form we write."""

from __future__ import annotations

import pytest

from chalicelib.store.codec import to_item
from chalicelib.store.size import MAX_ITEM_BYTES, MAX_NAME_BYTES, fits, item_size, longest_name, value_size


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ({"S": ""}, 0),
        ({"S": "abc"}, 3),
        ({"S": "\u00e9"}, 2),
        ({"S": "\U0001f600"}, 4),
        ({"B": b"\x00\x01\x02"}, 3),
        ({"BOOL": True}, 1),
        ({"NULL": True}, 1),
        ({"N": "0"}, 1),
        ({"N": "7"}, 2),
        ({"N": "12"}, 2),
        ({"N": "123"}, 3),
        ({"N": "-123"}, 4),
        ({"N": "9007199254740991"}, 9),
        ({"L": []}, 3),
        ({"L": [{"S": "ab"}, {"N": "1"}]}, 3 + (1 + 2) + (1 + 2)),
        ({"M": {}}, 3),
        ({"M": {"cpu": {"N": "1000"}}}, 3 + 1 + 3 + 3),
        ({"M": {"gpu.x": {"M": {"k": {"S": "v"}}}}}, 3 + 1 + 5 + (3 + 1 + 1 + 1)),
        ({"SS": ["a", "bc"]}, 3),
    ],
)
def test_value_sizes(value, size) -> None:
    assert value_size(value) == size


def test_an_item_counts_its_names_and_values() -> None:
    item = {"pk": {"S": "ALLOC#x"}, "sk": {"S": "-"}, **to_item({"version": 12, "paused": False})}
    assert item_size(item) == (2 + 7) + (2 + 1) + (7 + 2) + (6 + 1)


def test_the_bound() -> None:
    filler = MAX_ITEM_BYTES - item_size({"pk": {"S": "P"}, "sk": {"S": "-"}, "d": {"S": ""}})
    at_bound = {"pk": {"S": "P"}, "sk": {"S": "-"}, "d": {"S": "x" * filler}}
    assert item_size(at_bound) == MAX_ITEM_BYTES and fits(at_bound)
    assert not fits({**at_bound, "d": {"S": "x" * (filler + 1)}})


def test_the_longest_name_counts_map_keys_at_any_depth() -> None:
    item = {"pk": {"S": "P"}, "configured": {"M": {"gpu.abc": {"N": "1"}}},
            "l": {"L": [{"M": {"x" * 40: {"M": {"\u00e9" * 30: {"N": "1"}}}}}]}}
    assert longest_name(item) == 60  # thirty two-byte characters, two levels down in a list
    assert longest_name({"pk": {"S": "x" * 100}}) == 2  # values are no names


def test_a_name_over_the_bound_does_not_fit_in_a_small_item() -> None:
    base = {"pk": {"S": "P"}, "sk": {"S": "-"}}
    assert fits({**base, "m": {"M": {"g" * MAX_NAME_BYTES: {"N": "1"}}}})
    assert not fits({**base, "m": {"M": {"g" * (MAX_NAME_BYTES + 1): {"N": "1"}}}})
