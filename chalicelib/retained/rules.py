"""Which accounts a Site keeps for accepted work (pure): the fences and the list.

An account (projectId, partyId, bindingId, generation) is retained while some
accepted item of the Site for it has `required: true` and is not fenced. An
item is fenced when
- its Project is not `active` (unknown counts as not active), or the
  Project's managementGeneration differs from the item's;
- the Party's `site` binding at this Site is missing or retired;
- the Party's membership in the Project has a newer generation than the item.
A Party that merely left (no newer generation) is not fenced: keeping its
account for accepted work is the point of the list. `bindingId` is the
Party's current binding at this Site; `generation` is the item's.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# The scopes and counters are the view's keys (it writes them); the list is computed from them.
from chalicelib.view.keys import CHANGE_SHARDS as CHANGE_SHARDS
from chalicelib.view.keys import PAIR_SCOPE, PARTY_SCOPE, PROJECT_SCOPE
from chalicelib.view.keys import SiteBinding as SiteBinding  # the view's record, read by the list's rules
from chalicelib.view.keys import change_shard as change_shard

PROJECT_INACTIVE = "project_inactive"
MANAGEMENT_GENERATION = "management_generation"
BINDING_MISSING = "binding_missing"
BINDING_RETIRED = "binding_retired"
NEWER_MEMBERSHIP = "newer_membership"
NOT_REQUIRED = "not_required"


@dataclass(frozen=True)
class Item:
    project_id: str
    party_id: str
    generation: int
    management_generation: int
    required: bool


@dataclass(frozen=True)
class Project:
    state: str
    management_generation: int



RetainedAccount = tuple[str, str, str, int]  # projectId, partyId, bindingId, generation


def fence(
    item: Item, project: Project | None, binding: SiteBinding | None, membership_generation: int | None
) -> str | None:
    """Why the item keeps no account, or None when it does."""
    if not item.required:
        return NOT_REQUIRED
    if project is None or project.state != "active":
        return PROJECT_INACTIVE
    if project.management_generation != item.management_generation:
        return MANAGEMENT_GENERATION
    if binding is None:
        return BINDING_MISSING
    if binding.state != "established":
        return BINDING_RETIRED
    if membership_generation is not None and membership_generation > item.generation:
        return NEWER_MEMBERSHIP
    return None


def retained_accounts(
    items: Iterable[Item],
    projects: Mapping[str, Project],
    bindings: Mapping[str, SiteBinding],
    memberships: Mapping[tuple[str, str], int],
) -> list[RetainedAccount]:
    """The distinct retained accounts, sorted (bindings are this Site's, by partyId)."""
    kept: set[RetainedAccount] = set()
    for item in items:
        binding = bindings.get(item.party_id)
        project = projects.get(item.project_id)
        generation = memberships.get((item.project_id, item.party_id))
        if fence(item, project, binding, generation) is None:
            assert binding is not None
            kept.add((item.project_id, item.party_id, binding.binding_id, item.generation))
    return sorted(kept)


def list_digest(accounts: list[RetainedAccount]) -> str:
    canonical = json.dumps(accounts, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


EMPTY_DIGEST = list_digest([])


def as_body(revision: int, accounts: list[RetainedAccount]) -> dict[str, object]:
    return {
        "revision": revision,
        "accounts": [
            {"projectId": p, "partyId": q, "bindingId": b, "generation": g} for p, q, b, g in accounts
        ],
    }


# --- the stored list (docs/decisions/0002-retained-accounts-materialized.md) -------------------

LIST_FORMAT = 1
# A chunk's bytes stay well below DynamoDB's 400 KB item limit, with room for its key and names.
CHUNK_BYTES = 350_000

Stamp = Mapping[str, int]  # change counter (its sort key) -> its count, as a list was computed from


def is_current(stamp: Stamp | None, counters: Stamp) -> bool:
    """Whether a list computed at `stamp` reflects every change the `counters` (read now) count.

    Counters only rise and the stamp was read before the list was computed, so equal counts mean
    no change since; an absent counter is 0.
    """
    if stamp is None:
        return False
    names = set(stamp) | set(counters)
    return all(stamp.get(n, 0) == counters.get(n, 0) for n in names)


@dataclass(frozen=True)
class Scopes:
    """Scopes parsed once (a list of thousands of rows is tested against them)."""

    projects: frozenset[str]
    parties: frozenset[str]
    pairs: frozenset[tuple[str, str]]

    @classmethod
    def of(cls, scopes: Iterable[str]) -> Scopes:
        projects, parties, pairs = set(), set(), set()
        for scope in scopes:
            kind, *ids = scope.split("#")
            if kind == PROJECT_SCOPE:
                projects.add(ids[0])
            elif kind == PARTY_SCOPE:
                parties.add(ids[0])
            elif kind == PAIR_SCOPE:
                pairs.add((ids[0], ids[1]))
            else:
                raise ValueError(f"unknown scope {scope!r}")
        return cls(frozenset(projects), frozenset(parties), frozenset(pairs))

    def holds(self, account: RetainedAccount) -> bool:
        """Whether a change of one of the scopes can change this row (its Project, Party or pair)."""
        return account[0] in self.projects or account[1] in self.parties or account[:2] in self.pairs


def in_scopes(account: RetainedAccount, scopes: Iterable[str]) -> bool:
    return Scopes.of(scopes).holds(account)


def patch_list(stored: Iterable[RetainedAccount], scopes: Iterable[str],
               recomputed: Iterable[RetainedAccount]) -> list[RetainedAccount]:
    """The list with every row of the scopes replaced by `recomputed` (the rows of every item in them).

    A row depends only on the items of its (Project, Party) pair and that pair's Project, binding and
    membership, so the rows outside the scopes are what a full computation would give them.
    """
    parsed = Scopes.of(scopes)
    rows = [row for row in stored if not parsed.holds(row)]  # sorted and distinct, as stored
    for row in sorted(set(recomputed)):  # a few rows: inserted in place rather than the whole list sorted
        at = bisect.bisect_left(rows, row)
        if at == len(rows) or rows[at] != row:
            rows.insert(at, row)
    return rows


def encode_list(accounts: list[RetainedAccount]) -> bytes:
    """zlib of `{"v", "s": strings, "r": rows of string indexes and the generation}` (compact JSON).

    The ids repeat (a Project or a Party has several accounts), so each string is stored once.
    """
    strings = sorted({s for p, q, b, _ in accounts for s in (p, q, b)})
    index = {s: i for i, s in enumerate(strings)}
    rows = [[index[p], index[q], index[b], g] for p, q, b, g in accounts]
    document = {"v": LIST_FORMAT, "s": strings, "r": rows}
    return zlib.compress(json.dumps(document, separators=(",", ":")).encode("ascii"))


def decode_list(data: bytes) -> list[RetainedAccount]:
    document = json.loads(zlib.decompress(data))
    if document.get("v") != LIST_FORMAT:
        raise ValueError("unknown list format")
    strings = document["s"]
    return [(strings[p], strings[q], strings[b], int(g)) for p, q, b, g in document["r"]]


def encode_strings(strings: list[str]) -> bytes:
    """zlib of a compact JSON list of strings (a patch's scopes)."""
    return zlib.compress(json.dumps(strings, separators=(",", ":")).encode("ascii"))


def decode_strings(data: bytes) -> list[str]:
    return [str(s) for s in json.loads(zlib.decompress(data))]


def split(data: bytes, size: int = CHUNK_BYTES) -> list[bytes]:
    """Consecutive slices of at most `size` bytes; at least one, so an empty list is one chunk."""
    return [data[i:i + size] for i in range(0, len(data), size)] or [b""]
