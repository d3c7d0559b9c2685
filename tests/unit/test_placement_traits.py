"""Trait names and trait query strings (chalicelib/placement/traits.py), as Placement 16.0.0 parses them,
and the items a provider traits write is made of (chalicelib/placement/items.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.placement import errors, items, traits
from chalicelib.placement.models import Provider
from chalicelib.placement.traits import (
    TraitListFilter,
    TraitQuery,
    custom_names_asked,
    custom_prefix_asked,
    parse_list_filter,
    parse_required,
)

# --- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "valid"), [
    ("CUSTOM_A", True),
    ("CUSTOM_A_1_B", True),
    ("CUSTOM_", False),  # the pattern wants one character after the prefix
    ("TRAIT_X", False),
    ("CUSTOM_ABC:1", False),
    ("CUSTOM_abc", False),
    ("CUSTOM_" + "A" * 248, True),  # 255 characters
    ("CUSTOM_" + "A" * 249, False),  # 256
])
def test_which_names_a_caller_may_create(name: str, valid: bool) -> None:
    assert traits.is_custom_name(name) is valid


def test_standard_traits_are_os_traits() -> None:
    assert traits.is_standard("HW_CPU_X86_SHA") and traits.is_standard(traits.SHARES_VIA_AGGREGATE)
    assert not traits.is_standard("CUSTOM_X") and not traits.is_standard("NON_EXISTED")
    assert items.SHARES_VIA_AGGREGATE == traits.SHARES_VIA_AGGREGATE


def test_os_traits_loads_on_the_first_traits_request_not_at_import_app() -> None:
    probe = "import sys, app; print('os_traits' in sys.modules)"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- GET /traits ---------------------------------------------------------------------------------


def test_name_filters() -> None:
    listed = parse_list_filter("in:CUSTOM_A,CUSTOM_B", None)
    assert listed.matches_name("CUSTOM_A") and not listed.matches_name("CUSTOM_C")
    prefixed = parse_list_filter("startswith:CUSTOM_T", None)
    assert prefixed.matches_name("CUSTOM_TRAIT_1") and not prefixed.matches_name("CUSTOM_ANOTHER")
    assert parse_list_filter("other:X", None).matches_name("ANYTHING")  # an unknown operator filters nothing


def test_a_prefix_is_matched_as_sql_like_matches_it() -> None:
    """`_` is one character, `%` any run, and case does not count (sqlite's and MySQL's LIKE)."""
    assert parse_list_filter("startswith:HW_CPU", None).matches_name("HWXCPU_FOO")
    assert parse_list_filter("startswith:custom_", None).matches_name("CUSTOM_A")
    assert parse_list_filter("startswith:C%_B", None).matches_name("CUSTOM_AB")
    assert parse_list_filter("startswith:", None).matches_name("X")


def test_a_name_filter_without_an_operator_is_400() -> None:
    with pytest.raises(errors.Invalid) as raised:
        parse_list_filter("in_abc", None)
    assert raised.value.detail == ('Badly formatted name parameter. Expected name query string parameter in form: '
                                   '?name=[in|startswith]:[name1,name2|prefix]. Got: "in_abc"')


@pytest.mark.parametrize(("sent", "held"), [("true", True), ("FALSE", False), ("True", True)])
def test_associated(sent: str, held: bool) -> None:
    assert parse_list_filter(None, sent).associated is held


def test_associated_is_true_or_false() -> None:
    with pytest.raises(errors.Invalid) as raised:
        parse_list_filter(None, "xyz")
    assert raised.value.detail == 'The query parameter "associated" only accepts "true" or "false"'


def test_what_a_filter_leaves_unsaid_is_none() -> None:
    assert parse_list_filter(None, None) == TraitListFilter()
    assert parse_list_filter("in:A", None) == TraitListFilter(name_in=frozenset({"A"}))
    assert parse_list_filter("startswith:A", None) == TraitListFilter(prefix="A")


@pytest.mark.parametrize(("name", "asked"), [
    ("in:CUSTOM_B,CUSTOM_A", ["CUSTOM_A", "CUSTOM_B"]),       # read by key, in key order
    ("in:HW_CPU_X86_AVX,CUSTOM_A", ["CUSTOM_A"]),            # a standard trait is os-traits', not stored
    ("in:custom_a,CUSTOM_,", []),                             # no custom trait has these names: no key to read
    ("in:CUSTOM_" + "A" * 249, []),                          # longer than a trait may be
    ("in:CUSTOM_" + "A" * 248, ["CUSTOM_" + "A" * 248]),      # the longest there may be
    ("startswith:CUSTOM_A", None),                            # a prefix may match any: the registry is read
    (None, None),
])
def test_which_custom_traits_a_list_reads_by_key(name: str | None, asked: list[str] | None) -> None:
    assert custom_names_asked(parse_list_filter(name, None)) == asked


@pytest.mark.parametrize(("name", "start"), [
    ("startswith:CUSTOM_BENCH", "CUSTOM_BENCH"),
    ("startswith:custom_bench", "CUSTOM_BENCH"),  # stored names are upper case
    ("startswith:cUsToM_9z", "CUSTOM_9Z"),
    ("startswith:CUSTOM_A_B", "CUSTOM_A"),  # `_` after CUSTOM_ is any one character
    ("startswith:CUSTOM__", "CUSTOM_"),
    ("startswith:_USTOM_X", "CUSTOM_X"),  # within CUSTOM_ it can only be that prefix's character
    ("startswith:C______Y", "CUSTOM_Y"),
    ("startswith:C_____Y", "CUSTOMY"),  # no custom trait has Y where CUSTOM_ has `_`: reads none
    ("startswith:H_", "HU"),  # no custom trait starts so: reads none
    ("startswith:CUST%X", "CUST"),
    ("startswith:CUSTOM_A%", "CUSTOM_A"),
    ("startswith:CUSTOM_\u017f", "CUSTOM_"),  # not an ASCII key character: the filter decides from there
    ("startswith:CUSTOM_A-B", "CUSTOM_A"),
    ("startswith:CUSTOM_a b", "CUSTOM_A"),
    ("startswith:CUSTOM_" + "A" * 2000, "CUSTOM_" + "A" * 248),  # no stored name is longer than 255
    ("startswith:%CUSTOM", None),
    ("startswith:", None),
    ("startswith:-", None),
    ("in:CUSTOM_A", None),
    (None, None),
])
def test_where_a_prefix_list_starts_reading_the_registry(name: str | None, start: str | None) -> None:
    assert custom_prefix_asked(parse_list_filter(name, None)) == start


@settings(max_examples=300, deadline=None)
@given(prefix=st.text(alphabet="CUSTOMAB9_%cusab\u017f-", max_size=10),
       names=st.lists(st.from_regex(r"CUSTOM_[AB9S_]{1,4}", fullmatch=True), max_size=8))
def test_a_prefix_start_never_drops_a_trait_the_filter_keeps(prefix: str, names: list[str]) -> None:
    """Every custom name the LIKE filter keeps begins with the start the registry is read from."""
    wanted = parse_list_filter(f"startswith:{prefix}", None)
    start = custom_prefix_asked(wanted) or ""
    assert all(n.startswith(start) for n in names if wanted.matches_name(n))


def test_a_name_filter_splits_at_its_first_colon() -> None:
    assert parse_list_filter("in:A,B:C", None).name_in == {"A", "B:C"}
    assert parse_list_filter("startswith:A:B", None).prefix == "A:B"


@pytest.mark.parametrize(("name", "custom"), [("CUSTOM_A", True), ("CUSTOM_", True), ("HW_CPU_X86_SHA", False),
                                               ("custom_a", False)])
def test_a_custom_trait_is_one_with_the_prefix(name: str, custom: bool) -> None:
    assert traits.is_custom(name) is custom


def test_the_first_unknown_name_in_the_order_given() -> None:
    known = {"A", "C"}.__contains__
    assert traits.first_unknown(["A", "B", "C", "D"], known) == "B"
    assert traits.first_unknown(["A", "C"], known) is None
    assert traits.first_unknown([], known) is None


# --- required --------------------------------------------------------------------------------------

NEW = {"allow_forbidden": True, "allow_any": True}  # 1.39
FORBID = {"allow_forbidden": True, "allow_any": False}  # 1.22-1.38
OLD = {"allow_forbidden": False, "allow_any": False}  # 1.18-1.21


def test_required_and_forbidden() -> None:
    query = parse_required(["A, !B,C"], **FORBID)
    assert query == TraitQuery(required=(frozenset({"A"}), frozenset({"C"})), forbidden=frozenset({"B"}))
    assert query.matches({"A", "C"}) and not query.matches({"A"}) and not query.matches({"A", "B", "C"})
    assert query.required_names() == ["A", "C"]


def test_every_leading_bang_goes_as_upstream() -> None:
    assert parse_required(["!!FOO"], **FORBID).forbidden == {"FOO"}
    assert parse_required(["!XYZ_TRAIT"], **FORBID).forbidden == {"XYZ_TRAIT"}  # only the bangs


def test_from_1_39_every_required_forbids_too() -> None:
    assert parse_required(["!A", "B,!C"], **NEW) == TraitQuery(required=(frozenset({"B"}),),
                                                                forbidden=frozenset({"A", "C"}))


def test_before_1_39_the_last_required_counts() -> None:
    assert parse_required(["A", "B"], **FORBID).required == (frozenset({"B"}),)
    assert parse_required(["A", "B"], **NEW).required == (frozenset({"A"}), frozenset({"B"}))


def test_any_of() -> None:
    query = parse_required(["in:A, B", "C,!D"], **NEW)
    assert query.matches({"B", "C"}) and not query.matches({"C"}) and not query.matches({"A", "C", "D"})


@pytest.mark.parametrize(("values", "allowed", "detail"), [
    ([""], FORBID, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. "
                   "Got an empty trait in: "),
    ([""], OLD, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. "
                "Got an empty trait in: "),
    (["A,,B"], FORBID, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. "
                       "Got an empty trait in: A,,B"),
    (["!"], FORBID, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. "
                    "Got an empty trait in: !"),
    (["!A"], OLD, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !A"),
    (["in:A,B"], FORBID, "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. "
                         "Got: in:A,B"),
    (["in:A,"], NEW, "Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. "
                     "Got an empty trait in: in:A,"),
    (["in:A,!B"], NEW, "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. "
                       "Got: in:A,!B"),
])
def test_bad_required_values_are_400_in_upstreams_words(values: list[str], allowed: dict[str, bool],
                                                         detail: str) -> None:
    with pytest.raises(errors.Invalid) as raised:
        parse_required(values, **allowed)
    assert raised.value.detail == f"Invalid query string parameters: {detail}"


def test_only_the_last_value_is_checked_before_1_39() -> None:
    """As upstream: the earlier values are dropped unread, however malformed."""
    assert parse_required(["in:A", "B"], **FORBID).required == (frozenset({"B"}),)


@pytest.mark.parametrize(("required", "holders", "none"), [
    ([{"CUSTOM_A"}], {"CUSTOM_A": 0}, True),
    ([{"CUSTOM_A"}], {"CUSTOM_A": 1}, False),
    ([{"CUSTOM_A"}, {"CUSTOM_B"}], {"CUSTOM_A": 3, "CUSTOM_B": 0}, True),        # every group must match
    ([{"CUSTOM_A", "CUSTOM_B"}], {"CUSTOM_A": 0, "CUSTOM_B": 2}, False),         # any of a group is enough
    ([{"CUSTOM_A", "CUSTOM_B"}], {"CUSTOM_A": 0, "CUSTOM_B": 0}, True),
    ([{"CUSTOM_A", "HW_CPU_X86_SHA"}], {"CUSTOM_A": 0}, False),                   # a standard trait: not counted
    ([{"CUSTOM_A"}], {}, False),                                                  # unknown: the 400's to say
    ([], {"CUSTOM_A": 0}, False),                                                 # forbidden only
])
def test_a_required_filter_nobody_can_match(required: list[set[str]], holders: dict[str, int], none: bool) -> None:
    query = TraitQuery(required=tuple(frozenset(g) for g in required), forbidden=frozenset({"CUSTOM_Z"}))
    assert traits.held_by_none(query, holders) is none


def test_the_standard_traits_a_filter_keeps_are_asked_once_per_filter() -> None:
    wanted = parse_list_filter("startswith:HW_CPU_X86_S", None)
    found = traits.standard_matching(wanted)
    assert found == tuple(sorted(n for n in traits.standard() if n.startswith("HW_CPU_X86_S"))) and found
    assert traits.standard_matching(parse_list_filter("startswith:HW_CPU_X86_S", None)) is found
    assert traits.standard_matching(parse_list_filter("startswith:CUSTOM_", None)) == ()


# --- the items of a traits write ---------------------------------------------------------------------


def _ops(before: set[str], after: set[str]) -> list[str]:
    read = Provider(uuid="u1", name="n", traits=frozenset(before), version=3, generation=2)
    written, ops = items.write_traits("t", read, frozenset(after))
    assert (written.generation, written.version, written.inventory_version) == (3, 4, read.inventory_version)
    return [op.name for op in ops]


def test_a_traits_write_counts_custom_traits_and_the_sharing_index() -> None:
    assert _ops(set(), {"HW_CPU_X86_SHA", "CUSTOM_A"}) == ["provider", "trait_ref:CUSTOM_A", "trait_holder:CUSTOM_A"]
    assert _ops({"CUSTOM_A"}, {"CUSTOM_B", traits.SHARES_VIA_AGGREGATE}) == [
        "provider", "trait_ref:CUSTOM_A", "trait_ref:CUSTOM_B", "trait_holder:CUSTOM_B", "trait_holder:CUSTOM_A",
        "sharing"]
    assert _ops({traits.SHARES_VIA_AGGREGATE}, set()) == ["provider", "sharing"]
    assert _ops({"HW_CPU_X86_SHA"}, {"HW_CPU_X86_SHA", "STORAGE_DISK_SSD"}) == ["provider"]


def test_deleting_a_provider_releases_its_custom_traits_and_sharing_item() -> None:
    read = Provider(uuid="u1", name="n", traits=frozenset({"CUSTOM_A", "HW_CPU_X86_SHA",
                                                           traits.SHARES_VIA_AGGREGATE}))
    ops = items.delete_provider("t", read)
    refs = [op for op in ops if op.name == "trait_ref:CUSTOM_A"]
    assert refs and refs[0].request["Update"]["ExpressionAttributeValues"][":d"] == {"N": "-1"}
    assert [op.request for op in ops if op.name == "sharing"] == [
        {"Delete": {"TableName": "t", "Key": items.sharing_key("u1")}}]
    assert [op.request for op in ops if op.name.startswith(items.TRAIT_HOLDER)] == [
        {"Delete": {"TableName": "t", "Key": items.TRAIT_HOLDERS.key("CUSTOM_A", "u1")}}]


def test_a_custom_traits_holder_item_is_written_for_the_providers_new_version() -> None:
    read = Provider(uuid="u1", name="n", version=3, created_at=7)
    _, ops = items.write_traits("t", read, frozenset({"CUSTOM_A"}))
    [holder] = [op for op in ops if op.name == "trait_holder:CUSTOM_A"]
    assert holder.request["Put"]["Item"] == {"pk": {"S": "PLTRH#CUSTOM_A"}, "sk": {"S": "u1"},
                                             "kind": {"S": "placement-trait-holder"}, "v": {"N": "4"},
                                             "inc": {"N": "7"}}


@pytest.mark.parametrize(("required", "holders", "indexed", "narrowest"), [
    ([{"CUSTOM_A"}, {"CUSTOM_B"}], {"CUSTOM_A": 5, "CUSTOM_B": 2}, {"CUSTOM_A", "CUSTOM_B"}, "CUSTOM_B"),
    ([{"CUSTOM_A"}, {"CUSTOM_B"}], {"CUSTOM_A": 5, "CUSTOM_B": 2}, {"CUSTOM_A"}, "CUSTOM_A"),  # B made before 0053
    ([{"CUSTOM_A", "CUSTOM_B"}], {"CUSTOM_A": 1, "CUSTOM_B": 1}, {"CUSTOM_A", "CUSTOM_B"}, None),  # any of: both
    ([{"HW_CPU_X86_SHA"}], {}, set(), None),  # standard traits have no holder items
    ([{"CUSTOM_A"}, {"CUSTOM_C"}], {"CUSTOM_A": 3, "CUSTOM_C": 3}, {"CUSTOM_A", "CUSTOM_C"}, "CUSTOM_A"),
])
def test_a_list_reads_the_holders_of_its_narrowest_indexed_custom_trait(required, holders, indexed,
                                                                         narrowest) -> None:
    query = traits.TraitQuery(required=tuple(frozenset(g) for g in required))
    assert traits.narrowest_indexed(query, holders, indexed) == narrowest
