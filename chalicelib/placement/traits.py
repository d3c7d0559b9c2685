"""Trait names and the trait query strings, pure: the standard traits (the `os-traits` package, loaded on
first use so that `import app` does not pay for it), which names a caller may create, `GET /traits`'s
`name` and `associated` filters, and the `required` filter of GET /resource_providers (1.18; forbidden
`!T` 1.22; any-of `in:` and repeated parameters 1.39), each parsed as Placement 16.0.0 parses it
(placement/util.py `normalize_traits_qs_param(s)`, placement/handlers/trait.py) with its 400 texts."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache

from chalicelib.placement import errors

CUSTOM_PREFIX = "CUSTOM_"
MAX_LENGTH = 255
SHARES_VIA_AGGREGATE = "MISC_SHARES_VIA_AGGREGATE"  # os_traits.MISC_SHARES_VIA_AGGREGATE (a sharing provider)
_CUSTOM = re.compile(r"^CUSTOM_[A-Z0-9_]+$")

INVALID_CUSTOM = ('The trait is invalid. A valid trait must be no longer than 255 characters, start with the '
                  'prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"')


@cache
def standard() -> frozenset[str]:
    """Every standard trait (os-traits' symbols, as Placement syncs them into its table)."""
    import os_traits  # on the first traits request, never at `import app` (cold start)

    return frozenset(os_traits.get_traits())


def is_standard(name: str) -> bool:
    return name in standard()


def is_custom_name(name: str) -> bool:
    """A name a caller may create with PUT /traits/{name} (Placement's CUSTOM_TRAIT schema)."""
    return len(name) <= MAX_LENGTH and bool(_CUSTOM.match(name))


def is_custom(name: str) -> bool:
    """Stored in the custom trait registry (os_traits.is_custom: the prefix is what counts)."""
    return name.startswith(CUSTOM_PREFIX)


# --- GET /traits ---------------------------------------------------------------------------------


@cache
def _like_prefix(prefix: str) -> re.Pattern[str]:
    """`name LIKE '<prefix>%'` as Placement's SQL says it: `_` any one character, `%` any run, and
    case-insensitive (as MySQL's default collation and sqlite compare)."""
    parts = ["." if c == "_" else ".*" if c == "%" else re.escape(c) for c in prefix]
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class TraitListFilter:
    """What GET /traits asks: names in a list, names with a prefix, held by some provider or by none."""

    name_in: frozenset[str] | None = None
    prefix: str | None = None
    associated: bool | None = None

    def matches_name(self, name: str) -> bool:
        if self.name_in is not None and name not in self.name_in:
            return False
        return self.prefix is None or _like_prefix(self.prefix).match(name) is not None


def custom_names_asked(wanted: TraitListFilter) -> list[str] | None:
    """With `name=in:`, the custom traits a list can show, to be read by key (a name that cannot be a custom
    trait is no key either, and is not looked up); None when it can show any."""
    if wanted.name_in is None:
        return None
    return sorted(n for n in wanted.name_in if is_custom_name(n))


_KEY_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def custom_prefix_asked(wanted: TraitListFilter) -> str | None:
    """With `name=startswith:`, the literal start every custom trait it keeps has (to read the registry from
    there on, not whole); None when that start is not known (no prefix, or one that starts with `%`).
    Stored names are `CUSTOM_[A-Z0-9_]+`, so a letter is its upper case and `_` within `CUSTOM_` is that
    prefix's character; the start ends at the first `%`, at a `_` after it, or at any other character (where
    case-insensitive matching may reach further than upper case: the filter decides on what is read). It is
    cut to the longest name there can be: a longer key condition is no valid DynamoDB request."""
    if wanted.prefix is None:
        return None
    start = ""
    for at, character in enumerate(wanted.prefix):
        if character == "_" and at < len(CUSTOM_PREFIX):
            start += CUSTOM_PREFIX[at]
        elif character.isascii() and character.upper() in _KEY_CHARACTERS:
            start += character.upper()
        else:
            break
    return start[:MAX_LENGTH] or None


@lru_cache(maxsize=256)
def standard_matching(wanted: TraitListFilter) -> tuple[str, ...]:
    """The standard traits a filter keeps (the set never changes while a process runs: asked once per filter)."""
    return tuple(sorted(n for n in standard() if wanted.matches_name(n)))


def parse_list_filter(name: str | None, associated: str | None) -> TraitListFilter:
    """`name=in:a,b` / `name=startswith:X` (another operator filters nothing, as upstream) and
    `associated=true|false` (any case)."""
    name_in: frozenset[str] | None = None
    prefix: str | None = None
    if name is not None:
        op, sep, value = name.partition(":")
        if not sep:
            raise errors.Invalid(
                "Badly formatted name parameter. Expected name query string parameter in form: "
                f'?name=[in|startswith]:[name1,name2|prefix]. Got: "{name}"')
        if op == "in":
            name_in = frozenset(value.split(","))
        elif op == "startswith":
            prefix = value
    held: bool | None = None
    if associated is not None:
        if associated.lower() not in ("true", "false"):
            raise errors.Invalid('The query parameter "associated" only accepts "true" or "false"')
        held = associated.lower() == "true"
    return TraitListFilter(name_in=name_in, prefix=prefix, associated=held)


# --- the `required` filter -----------------------------------------------------------------------


@dataclass(frozen=True)
class TraitQuery:
    """`required`: every group must meet the provider in at least one trait (a group of one is a plain
    required trait, an `in:` list a group of several), and no forbidden trait may be on it."""

    required: tuple[frozenset[str], ...] = ()
    forbidden: frozenset[str] = field(default_factory=frozenset)

    def matches(self, traits: Collection[str]) -> bool:
        return all(not group.isdisjoint(traits) for group in self.required) and self.forbidden.isdisjoint(traits)

    def required_names(self) -> list[str]:
        """The required names in the order they were asked, each once."""
        return list(dict.fromkeys(name for group in self.required for name in sorted(group)))


def _bad(detail: str) -> errors.Invalid:
    return errors.Invalid(f"Invalid query string parameters: {detail}")


def _parse_one(value: str, *, allow_forbidden: bool,
               allow_any: bool) -> tuple[list[frozenset[str]], frozenset[str]]:
    if value.startswith("in:"):
        if not allow_any:
            raise _bad("The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. "
                       f"Got: {value}")
        any_of = frozenset(part.strip() for part in value[3:].split(","))
        if not all(any_of):
            raise _bad("Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. "
                       f"Got an empty trait in: {value}")
        if any(name.startswith("!") for name in any_of):
            raise _bad(f"The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. "
                       f"Got: {value}")
        return [any_of], frozenset()
    names = [part.strip() for part in value.split(",")]
    # As upstream: every leading `!` goes (`!!FOO` forbids FOO), a bug Placement keeps until a microversion.
    forbidden = frozenset(name.lstrip("!") for name in names if name.startswith("!"))
    if not all(itertools.chain(forbidden, names)):
        form = "HW_CPU_X86_VMX,!CUSTOM_MAGIC" if allow_forbidden else "HW_CPU_X86_VMX,CUSTOM_MAGIC"
        raise _bad(f"Expected 'required' parameter value of the form: {form}. Got an empty trait in: {value}")
    if forbidden and not allow_forbidden:
        raise _bad(f"Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: {value}")
    return [frozenset([name]) for name in names if not name.startswith("!")], forbidden


def parse_required(values: list[str], *, allow_forbidden: bool, allow_any: bool) -> TraitQuery:
    """Every `required` parameter sent, in order. Before 1.39 only the last one counts (as upstream)."""
    required: list[frozenset[str]] = []
    forbidden: set[str] = set()
    for value in values if allow_any else values[-1:]:
        groups, banned = _parse_one(value, allow_forbidden=allow_forbidden, allow_any=allow_any)
        required += groups
        forbidden |= banned
    return TraitQuery(required=tuple(required), forbidden=frozenset(forbidden))


def first_unknown(names: Iterable[str], known: Callable[[str], bool]) -> str | None:
    return next((name for name in names if not known(name)), None)


def narrowest_indexed(query: TraitQuery, holders: Mapping[str, int], indexed: Collection[str]) -> str | None:
    """The required custom trait (a group of one) with the fewest holders among those whose holders are
    indexed (decision 0053): a list can read its holders alone. None when there is none."""
    alone = [name for group in query.required if len(group) == 1 for name in group
             if name in indexed and name in holders]
    return min(alone, key=lambda name: (holders[name], name), default=None)


def held_by_none(query: TraitQuery, holders: Mapping[str, int]) -> bool:
    """True when some required group is only custom traits that exist and no provider holds (`holders`: how
    many providers hold each existing custom trait): no provider has that group, so none matches. Standard
    traits' holders are not counted (not in `holders`), nor unknown traits' (the unknown-trait check's)."""
    return any(group and all(holders.get(n) == 0 for n in group) for group in query.required)
