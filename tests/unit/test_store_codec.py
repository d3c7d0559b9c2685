"""Plain values <-> DynamoDB attribute values: what the store adapters write and read back."""

from __future__ import annotations

from decimal import Decimal

import pytest
from boto3.dynamodb.types import Binary, TypeSerializer
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.store.codec import from_item, to_item, to_value
from chalicelib.store.keys import holdable, key, key_id


def test_to_item_serializes_each_value_and_leaves_none_out() -> None:
    assert to_item({"s": "x", "n": 3, "b": True, "l": [1, "a"], "m": {"k": 2}, "gone": None}) == {
        "s": {"S": "x"},
        "n": {"N": "3"},
        "b": {"BOOL": True},
        "l": {"L": [{"N": "1"}, {"S": "a"}]},
        "m": {"M": {"k": {"N": "2"}}},
    }


def test_to_value() -> None:
    assert to_value(7) == {"N": "7"}
    assert to_value("7") == {"S": "7"}
    assert to_value({"a": None}) == {"M": {"a": {"NULL": True}}}


def test_from_item_of_nothing_is_none() -> None:
    assert from_item(None) is None


def test_numbers_come_back_as_int_when_integral_else_float() -> None:
    item = from_item({
        "i": {"N": "9007199254740993"},
        "f": {"N": "2.5"},
        "z": {"N": "3.0"},
        "m": {"M": {"n": {"N": "4"}, "l": {"L": [{"N": "5"}, {"N": "0.5"}, {"S": "s"}]}}},
        "ns": {"NS": ["1", "2"]},
        "s": {"S": "text"},
        "b": {"BOOL": False},
    })
    assert item == {"i": 9007199254740993, "f": 2.5, "z": 3, "m": {"n": 4, "l": [5, 0.5, "s"]}, "ns": {1, 2},
                    "s": "text", "b": False}
    assert type(item["i"]) is int and type(item["z"]) is int and type(item["f"]) is float
    assert type(item["m"]["n"]) is int and type(item["m"]["l"][0]) is int
    assert all(type(v) is int for v in item["ns"])


@pytest.mark.parametrize(
    "values",
    [
        {"pk": "A#1", "sk": "-", "n": 12, "limits": {"cpu": 2000, "gpu.a100": 1}, "reasons": ["a", "b"], "ok": True},
        {"big": 2**53 + 1, "neg": -5, "empty": {}, "nested": [[1], {"x": [2]}]},
    ],
)
def test_round_trip(values) -> None:
    assert from_item(to_item(values)) == values


def test_decimal_values_are_plain_numbers_after_a_read() -> None:
    assert from_item(to_item({"d": Decimal("1.50"), "e": Decimal("10")})) == {"d": 1.5, "e": 10}


def test_keys() -> None:
    assert key("ALLOC#a") == {"pk": {"S": "ALLOC#a"}, "sk": {"S": "-"}}
    assert key("ACCTS#a", "B#07") == {"pk": {"S": "ACCTS#a"}, "sk": {"S": "B#07"}}
    assert key_id(key("ACCTS#a", "B#07")) == ("ACCTS#a", "B#07")
    assert key_id({"pk": {"S": "p"}, "sk": {"S": "s"}, "other": {"S": "x"}}) == ("p", "s")


@pytest.mark.parametrize(("wire", "plain"), [
    ({"S": "-12"}, "-12"),
    ({"N": "0"}, 0),
    ({"N": "-7"}, -7),
    ({"N": "-0.5"}, -0.5),
    ({"N": "1E+2"}, 100),
    ({"SS": ["a", "b"]}, {"a", "b"}),
    ({"BOOL": True}, True),
    ({"NULL": True}, None),
    ({"L": []}, []),
    ({"M": {"a": {"L": [{"M": {}}]}}}, {"a": [{}]}),
    ({"B": b"\x00\x01"}, Binary(b"\x00\x01")),
    ({"NS": ["1", "0.5"]}, {1, 0.5}),
    ({"BS": [b"a"]}, {Binary(b"a")}),
])
def test_each_kind_of_attribute_value_as_boto3_reads_it(wire, plain) -> None:
    """The one-pass decoder agrees with boto3's TypeDeserializer on every kind."""
    got = from_item({"v": wire})["v"]
    assert got == plain
    assert type(got) is type(plain)


def test_a_value_of_no_dynamodb_type_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^X is not a DynamoDB attribute type$"):
        from_item({"v": {"X": "1"}})


def test_sets_hold_their_members_decoded() -> None:
    assert [type(n) for n in sorted(from_item({"v": {"NS": ["2", "0.5"]}})["v"])] == [float, int]


@pytest.mark.parametrize(("pk", "sk", "held"), [
    ("P" * 2048, "s" * 1024, True),  # DynamoDB's limits: 2,048 and 1,024 bytes
    ("P", "-", True),  # one byte each is enough
    ("P" * 2049, "-", False),
    ("P", "s" * 1025, False),
    ("P", "\u00e9" * 512, True),  # two UTF-8 bytes each: 1,024
    ("P", "\u00e9" * 513, False),
    ("\u00e9" * 1025, "-", False),
    ("", "-", False),  # empty key values are refused too
    ("P", "", False),
])
def test_which_keys_dynamodb_can_hold(pk: str, sk: str, held: bool) -> None:
    assert holdable(key(pk, sk)) is held



_scalars = st.one_of(
    st.text(max_size=5), st.booleans(), st.none(), st.binary(max_size=4), st.floats(allow_nan=True),
    st.integers(), st.integers(min_value=10**37, max_value=10**40).flatmap(lambda n: st.sampled_from([n, -n])),
    st.decimals(allow_nan=True, allow_infinity=True), st.builds(Binary, st.binary(max_size=4)),
    st.frozensets(st.integers(max_value=10**39), max_size=3), st.sets(st.text(max_size=3), max_size=3),
    st.sets(st.binary(max_size=3), max_size=3), st.just(object()),
)
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner, inner), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=12)


def _outcome(serialize, value):
    try:
        return serialize(value)
    except Exception as exc:  # noqa: BLE001 - the kind of refusal is what is compared
        return type(exc)


@given(_values)
def test_to_value_answers_as_boto3s_serializer(value) -> None:
    """to_value's fast paths (str, int, dict, list, bool, None) leave every answer and refusal boto3's:
    38-digit numbers, floats, sets, tuples, Binary and unsupported types included."""
    assert _outcome(to_value, value) == _outcome(TypeSerializer().serialize, value)


@pytest.mark.parametrize("number", [10**38 - 1, 10**38, -(10**38 - 1), -(10**38), 0, True, False])
def test_numbers_at_dynamodbs_38_digits_answer_as_boto3s_serializer(number) -> None:
    assert _outcome(to_value, number) == _outcome(TypeSerializer().serialize, number)
