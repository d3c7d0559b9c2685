"""GET /allocation_candidates' query parser (pure): upstream's groups, gates and 400 texts, as a table."""

from __future__ import annotations

import pytest

from chalicelib.placement import errors
from chalicelib.placement.candidate_query import parse

AGG1 = "11111111-1111-1111-1111-111111111111"
AGG2 = "22222222-2222-2222-2222-222222222222"
RP = "33333333-3333-3333-3333-333333333333"


def q(text: str) -> dict[str, list[str]]:
    """A query string as the HTTP layer holds it: names in first-appearance order, every value."""
    found: dict[str, list[str]] = {}
    for part in text.split("&"):
        name, _, value = part.partition("=")
        found.setdefault(name, []).append(value)
    return found


def v(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


PARSED = [
    # (version, query, per group: suffix -> (resources, required, forbidden, member_of, forbidden aggs, in_tree))
    ("1.10", "resources=VCPU:1,MEMORY_MB:512", {"": ({"VCPU": 1, "MEMORY_MB": 512}, [], set(), [], set(), None)}),
    ("1.17", "resources=VCPU:1&required=HW_CPU_X86_AVX,CUSTOM_A",
     {"": ({"VCPU": 1}, [{"HW_CPU_X86_AVX"}, {"CUSTOM_A"}], set(), [], set(), None)}),
    ("1.22", "resources=VCPU:1&required=A,!B,!!C", {"": ({"VCPU": 1}, [{"A"}], {"B", "C"}, [], set(), None)}),
    ("1.21", f"resources=VCPU:1&member_of=in:{AGG1},{AGG2}",
     {"": ({"VCPU": 1}, [], set(), [{AGG1, AGG2}], set(), None)}),
    ("1.24", f"resources=VCPU:1&member_of={AGG1}&member_of={AGG2}",
     {"": ({"VCPU": 1}, [], set(), [{AGG1}, {AGG2}], set(), None)}),
    ("1.32", f"resources=VCPU:1&member_of=!in:{AGG1},{AGG2}",
     {"": ({"VCPU": 1}, [], set(), [], {AGG1, AGG2}, None)}),
    ("1.31", f"resources=VCPU:1&in_tree={RP}", {"": ({"VCPU": 1}, [], set(), [], set(), RP)}),
    ("1.25", "resources1=VCPU:1&required1=A&resources=DISK_GB:5",
     {"1": ({"VCPU": 1}, [{"A"}], set(), [], set(), None), "": ({"DISK_GB": 5}, [], set(), [], set(), None)}),
    ("1.33", "resources_COMPUTE=VCPU:1&in_tree_COMPUTE=" + RP,
     {"_COMPUTE": ({"VCPU": 1}, [], set(), [], set(), RP)}),
    ("1.38", "resources=VCPU:1&required=A&required=B", {"": ({"VCPU": 1}, [{"B"}], set(), [], set(), None)}),
    ("1.39", "resources=VCPU:1&required=in:A,B&required=!C",
     {"": ({"VCPU": 1}, [{"A", "B"}], {"C"}, [], set(), None)}),
    ("1.36", "resources1=VCPU:1&required2=A&same_subtree=1,2&group_policy=none",
     {"1": ({"VCPU": 1}, [], set(), [], set(), None), "2": ({}, [{"A"}], set(), [], set(), None)}),
]


@pytest.mark.parametrize(("version", "query", "groups"), PARSED)
def test_groups_as_upstream_reads_them(version, query, groups):
    parsed = parse(q(query), v(version))
    got = {g.suffix: (dict(g.resources), [set(s) for s in g.required_traits], set(g.forbidden_traits),
                      [set(s) for s in g.member_of], set(g.forbidden_aggregates), g.in_tree) for g in parsed.groups}
    assert got == groups
    assert [g.suffix for g in parsed.groups] == list(groups)  # the order suffixes first appear in


def test_request_wide_parameters():
    parsed = parse(q("resources=VCPU:1&limit=5&limit=7&root_required=A,!B&group_policy=isolate"), (1, 35))
    wide = parsed.wide
    assert (wide.limit, wide.group_policy, set(wide.root_required), set(wide.root_forbidden)) == (
        5, "isolate", {"A"}, {"B"})
    assert wide.nested_aware and not parse(q("resources=VCPU:1"), (1, 28)).wide.nested_aware
    subtrees = parse(q("resources1=VCPU:1&resources2=VCPU:1&group_policy=none&same_subtree=1,2"), (1, 36))
    assert subtrees.wide.same_subtrees == (frozenset({"1", "2"}),)
    assert parsed.requested_classes == {"VCPU"}


REFUSED = [
    ("1.10", "resources=", "Badly formed resources parameter. Expected resources query string parameter in form: "
     "?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.", errors.UNDEFINED),
    ("1.10", "resources=VCPU:1:2", "Badly formed resources parameter. Expected resources query string parameter in "
     "form: ?resources=VCPU:2,MEMORY_MB:1024. Got: VCPU:1:2.", errors.UNDEFINED),
    ("1.10", "resources=VCPU:x", "Requested resource VCPU expected positive integer amount. Got: x.",
     errors.UNDEFINED),
    ("1.10", "resources=VCPU:-1", "Requested resource VCPU requires amount >= 1. Got: -1.", errors.UNDEFINED),
    ("1.17", "resources=VCPU:1&required=A,!B", "Invalid query string parameters: Expected 'required' parameter "
     "value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: A,!B", errors.UNDEFINED),
    ("1.22", "resources=VCPU:1&required=A,", "Invalid query string parameters: Expected 'required' parameter "
     "value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: A,", errors.UNDEFINED),
    ("1.22", "resources=VCPU:1&required=A,!A", "Conflicting required and forbidden traits found in the following "
     "traits keys: required: (A)", errors.UNDEFINED),
    ("1.38", "resources=VCPU:1&required=in:A,B", "Invalid query string parameters: The format "
     "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: in:A,B", errors.UNDEFINED),
    ("1.39", "resources=VCPU:1&required=in:A,!B", "Invalid query string parameters: The format "
     "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: in:A,!B", errors.UNDEFINED),
    ("1.39", "resources=VCPU:1&required=in:A,", "Invalid query string parameters: Expected 'required' parameter "
     "value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: in:A,", errors.UNDEFINED),
    ("1.21", f"resources=VCPU:1&member_of={AGG1}&member_of={AGG2}", "Multiple member_of parameters are not "
     "supported", errors.UNDEFINED),
    ("1.24", f"resources=VCPU:1&member_of={AGG1},{AGG2}", "Multiple values for 'member_of' must be prefixed with "
     f"the 'in:' or '!in:' keyword using the valid microversion. Got: {AGG1},{AGG2}", errors.UNDEFINED),
    ("1.31", f"resources=VCPU:1&member_of=!{AGG1}", "Forbidden member_of parameters are not supported in the "
     "specified microversion", errors.UNDEFINED),
    ("1.24", "resources=VCPU:1&member_of=nope", "Invalid query string parameters: Expected 'member_of' parameter "
     "to contain valid UUID(s). Got: nope", errors.UNDEFINED),
    ("1.31", "resources=VCPU:1&in_tree=nope", "Invalid query string parameters: Expected 'in_tree' parameter to be "
     "a format of uuid. Got: nope", errors.UNDEFINED),
    ("1.25", "required1=A&resources=VCPU:1", "All traits parameters must be associated with resources.  Found the "
     "following orphaned traits keys: required1", errors.UNDEFINED),
    ("1.25", f"member_of1={AGG1}&resources=VCPU:1", "All member_of parameters must be associated with resources. "
     "Found the following orphaned member_of keys: member_of1", errors.UNDEFINED),
    ("1.31", f"in_tree1={RP}&resources=VCPU:1", "All request groups must specify resources.", errors.UNDEFINED),
    ("1.25", "limit=1", "At least one request group (`resources` or `resources{$S}`) is required.",
     errors.UNDEFINED),
    ("1.25", "resources1=VCPU:1&resources2=VCPU:1", 'The "group_policy" parameter is required when specifying more '
     'than one "resources{N}" parameter.', errors.UNDEFINED),
    ("1.35", "resources=VCPU:1&root_required=A&root_required=B", "Query parameter 'root_required' may be specified "
     "only once.", errors.QUERY_DUPLICATE_KEY),
    ("1.35", "resources=VCPU:1&root_required=A,!A", "Conflicting required and forbidden traits found in "
     "root_required: A", errors.QUERY_BAD_VALUE),
    ("1.35", "resources=VCPU:1&root_required=in:A,B", "Invalid query string parameters: The format "
     "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: in:A,B", errors.UNDEFINED),
    ("1.36", "resources=VCPU:1&same_subtree=1,", "Empty string (unsuffixed group) can not be specified in "
     "`same_subtree` ", errors.QUERY_BAD_VALUE),
    ("1.36", "required1=A", "There must be at least one resources or resources[$S] parameter.",
     errors.QUERY_MISSING_VALUE),
    ("1.36", "resources=VCPU:1&required1=A", "Resourceless suffixed group request should be specified in "
     "`same_subtree` query param: bad group(s) - ['1'].", errors.QUERY_BAD_VALUE),
    ("1.36", "resources=VCPU:1&same_subtree=7", "Real suffixes should be specified in `same_subtree`: ['7'] not "
     "found in [''].", errors.QUERY_BAD_VALUE),
]


@pytest.mark.parametrize(("version", "query", "detail", "code"), REFUSED)
def test_refusals_in_upstreams_words(version, query, detail, code):
    with pytest.raises(errors.Invalid) as refused:
        parse(q(query), v(version))
    assert refused.value.detail == detail
    assert refused.value.code == code


def test_before_1_33_a_string_suffix_is_no_group():
    assert [g.suffix for g in parse(q("resources=VCPU:1&resources_X=VCPU:1"), (1, 32)).groups] == [""]
