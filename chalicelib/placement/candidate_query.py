"""GET /allocation_candidates' query string, parsed as Placement 16.0.0 parses it (placement/lib.py
RequestGroup.dict_from_request and RequestWideParams.from_request, placement/util.py normalize_*): pure.

Input is the query as the HTTP layer holds it (name -> every value sent, names in the order they first
appear) after the microversion's JSON schema passed (schemas/allocation_candidate.py); output the request
groups, in the order their suffixes first appear, and the request-wide parameters, in the generator's
types (candidates.py). Every refusal is an `errors.Invalid` with Placement's own text and code.

What needs the store (do the classes and traits exist, which providers are in an aggregate) is not here:
the service checks it, in upstream's order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from chalicelib.placement import errors
from chalicelib.placement.candidates import RequestGroup, RequestWide
from chalicelib.placement.list_filters import parse_member_of, parse_resources
from chalicelib.placement.traits import parse_required
from chalicelib.placement.uuids import is_uuid_like

Version = tuple[int, int]

GROUP_SUFFIX = r"[1-9][0-9]*"
GROUP_SUFFIX_1_33 = r"[a-zA-Z0-9_-]{1,64}"
_KINDS = ("resources", "required", "member_of", "in_tree")
_KEY = re.compile(rf"^({'|'.join(_KINDS)})({GROUP_SUFFIX})?$")
_KEY_1_33 = re.compile(rf"^({'|'.join(_KINDS)})({GROUP_SUFFIX_1_33})?$")

FORBIDDEN_TRAITS = (1, 22)
MULTIPLE_MEMBER_OF = (1, 24)
GRANULAR = (1, 25)
NESTED_AWARE = (1, 29)
FORBIDDEN_AGGREGATES = (1, 32)
STRING_SUFFIXES = (1, 33)
SAME_SUBTREE = (1, 36)
ANY_TRAITS = (1, 39)


def _bad(detail: str, code: str = errors.UNDEFINED) -> errors.Invalid:
    return errors.Invalid(detail, code)


@dataclass(frozen=True)
class CandidateQuery:
    groups: tuple[RequestGroup, ...]
    wide: RequestWide  # limit, group_policy, root_required/forbidden, same_subtrees, nested_aware
    requested_classes: frozenset[str] = field(default_factory=frozenset)  # what 1.10-1.26 summaries show


# --- one value at a time (util.normalize_*) -----------------------------------------------------------

def in_tree(value: str) -> str:
    stripped = value.strip()
    if not is_uuid_like(stripped):
        raise _bad("Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. "
                   f"Got: {value}")
    return stripped


# --- the request -----------------------------------------------------------------------------------

@dataclass
class _Group:
    resources: dict[str, int] = field(default_factory=dict)
    required: list[frozenset[str]] = field(default_factory=list)
    forbidden: set[str] = field(default_factory=set)
    member_of: list[frozenset[str]] = field(default_factory=list)
    forbidden_aggregates: set[str] = field(default_factory=set)
    in_tree: str | None = None


def _wide(query: Mapping[str, Sequence[str]], version: Version) -> RequestWide:
    limit = int(query["limit"][0]) if query.get("limit") else None
    group_policy = query["group_policy"][0] if query.get("group_policy") else None
    root_required: frozenset[str] = frozenset()
    root_forbidden: frozenset[str] = frozenset()
    sent = query.get("root_required") or []
    if sent:
        if len(sent) > 1:
            raise _bad("Query parameter 'root_required' may be specified only once.",
                       errors.QUERY_DUPLICATE_KEY)
        # As upstream: root_required takes no `in:` (it keeps the pre-1.39 parsing), one value only.
        parsed = parse_required([sent[0]], allow_forbidden=True, allow_any=False)
        required, forbidden = {t for s in parsed.required for t in s}, set(parsed.forbidden)
        conflicts = forbidden & required
        if conflicts:
            raise _bad("Conflicting required and forbidden traits found in root_required: "
                       f"{', '.join(sorted(conflicts))}", errors.QUERY_BAD_VALUE)
        root_required, root_forbidden = frozenset(required), frozenset(forbidden)
    same_subtrees: list[frozenset[str]] = []
    for value in query.get("same_subtree") or []:
        suffixes = frozenset(part.strip() for part in value.split(","))
        if "" in suffixes:
            raise _bad("Empty string (unsuffixed group) can not be specified in `same_subtree` ",
                       errors.QUERY_BAD_VALUE)
        same_subtrees.append(suffixes)
    return RequestWide(limit=limit, group_policy=group_policy, root_required=root_required,
                       root_forbidden=root_forbidden, same_subtrees=tuple(same_subtrees),
                       nested_aware=version >= NESTED_AWARE)


def _groups(query: Mapping[str, Sequence[str]], version: Version) -> dict[str, _Group]:
    pattern = _KEY_1_33 if version >= STRING_SUFFIXES else _KEY
    allow_forbidden = version >= FORBIDDEN_TRAITS
    allow_any = version >= ANY_TRAITS
    by_suffix: dict[str, _Group] = {}
    for name, values in query.items():
        match = pattern.match(name)
        if not match or not values:
            continue
        kind, suffix = match.group(1), match.group(2) or ""
        group = by_suffix.setdefault(suffix, _Group())
        if kind == "resources":
            for value in values:
                group.resources = parse_resources(value)
        elif kind == "required":
            # Before 1.39 a repeated `required` means its last value only (parse_required knows).
            parsed = parse_required(list(values), allow_forbidden=allow_forbidden, allow_any=allow_any)
            group.required, group.forbidden = list(parsed.required), set(parsed.forbidden)
        elif kind == "member_of":
            aggregates = parse_member_of(values, several=version >= MULTIPLE_MEMBER_OF,
                                         forbidden=version >= FORBIDDEN_AGGREGATES, suffix=suffix)
            group.member_of, group.forbidden_aggregates = list(aggregates.required), set(aggregates.forbidden)
        else:
            for value in values:
                group.in_tree = in_tree(value)
    return by_suffix


def _check_same_subtree(by_suffix: Mapping[str, _Group], wide: RequestWide) -> None:
    resourceless = [s for s, g in by_suffix.items() if not g.resources]
    if len(resourceless) == len(by_suffix):
        raise _bad("There must be at least one resources or resources[$S] parameter.",
                   errors.QUERY_MISSING_VALUE)
    in_subtrees = set().union(*wide.same_subtrees)
    bad = [s for s in resourceless if s not in in_subtrees]
    if bad:
        raise _bad("Resourceless suffixed group request should be specified in `same_subtree` query param: "
                   f"bad group(s) - {_py_list(bad)}.", errors.QUERY_BAD_VALUE)
    unknown = [s for s in in_subtrees if s not in by_suffix]
    if unknown:
        raise _bad(f"Real suffixes should be specified in `same_subtree`: {_py_list(unknown)} not found in "
                   f"{_py_list(list(by_suffix))}.", errors.QUERY_BAD_VALUE)


def _check_orphans(by_suffix: Mapping[str, _Group]) -> None:
    orphans = [f"required{s}" for s, g in by_suffix.items() if g.required and not g.resources]
    if orphans:
        raise _bad("All traits parameters must be associated with resources.  Found the following orphaned "
                   f"traits keys: {', '.join(orphans)}")
    orphans = [f"member_of{s}" for s, g in by_suffix.items()
               if not g.resources and (g.member_of or g.forbidden_aggregates)]
    if orphans:
        raise _bad("All member_of parameters must be associated with resources. Found the following orphaned "
                   f"member_of keys: {', '.join(orphans)}")
    if not all(g.resources for g in by_suffix.values()):
        raise _bad("All request groups must specify resources.")
    if not by_suffix:
        raise _bad("At least one request group (`resources` or `resources{$S}`) is required.")


def _check_conflicts(by_suffix: Mapping[str, _Group]) -> None:
    conflicting = [f"required{s}: ({', '.join(sorted(any_of))})"
                   for s, g in by_suffix.items() for any_of in g.required if any_of <= g.forbidden]
    if conflicting:
        raise _bad("Conflicting required and forbidden traits found in the following traits keys: "
                   f"{', '.join(sorted(conflicting))}")


def _py_list(values: Sequence[str]) -> str:
    """A list as Python's str() shows it (upstream formats these messages with %s of a list)."""
    return repr(list(values))


def parse(query: Mapping[str, Sequence[str]], version: Version) -> CandidateQuery:
    """The request groups and request-wide parameters; `query` already passed the version's schema."""
    wide = _wide(query, version)
    by_suffix = _groups(query, version)
    if version >= SAME_SUBTREE:
        _check_same_subtree(by_suffix, wide)
    else:
        _check_orphans(by_suffix)
    if version >= FORBIDDEN_TRAITS:
        _check_conflicts(by_suffix)
    granular = [s for s in by_suffix if s]
    if not wide.group_policy and len(granular) > 1:
        raise _bad('The "group_policy" parameter is required when specifying more than one "resources{N}" '
                   "parameter.")
    groups = tuple(RequestGroup(
        suffix=s, resources=dict(g.resources), required_traits=tuple(g.required),
        forbidden_traits=frozenset(g.forbidden), member_of=tuple(g.member_of),
        forbidden_aggregates=frozenset(g.forbidden_aggregates), in_tree=g.in_tree,
    ) for s, g in by_suffix.items())
    requested = frozenset(rc for g in groups for rc in g.resources)
    return CandidateQuery(groups, wide, requested)
