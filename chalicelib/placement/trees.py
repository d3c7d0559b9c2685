"""Nested providers (1.14, re-parenting 1.37), pure: where a provider may go, which providers a move
rewrites, and how a tree is read by the children its items name (`members_by_level`, decision 0046). The
store writes the decision in one transaction conditioned on every provider it read.

Where the items do not name their children, and for the subtree a move rewrites, a tree is read as one
Query on gsi1 (`begins_with(gsi1sk, <root>)`, eventually consistent) and one consistent BatchGet of what it
finds. The index may lag: a provider just created may be missing, one just moved away may still be listed.
The consistent items settle the second (their `root` says where they are); the first is caught by the
`children` counters, which every create, delete and move of a child changes in the same transaction as the
child: a subtree read from a lagging index holds fewer providers than its counters say, and the caller
reads again (`SubtreeIncomplete`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from chalicelib.placement import errors
from chalicelib.placement.models import Provider

# A move writes the moved provider, its old and its new parent and each descendant (plus 2 items when the same
# PUT renames it): DynamoDB's transaction holds 100 items, so a subtree of at most this many descendants moves
# between two parents (one more when un-parented, two fewer with a rename); a larger one is TooLarge (400).
MAX_MOVED_DESCENDANTS = 97


class SubtreeIncomplete(Exception):
    """The index answered with fewer descendants than the counters say (it lags a recent write): read again."""


def tree_members(found: Iterable[Provider], root: str) -> list[Provider]:
    """The providers the index listed for `root` that are (still) in that tree, by the consistent read."""
    return [p for p in found if p.root == root]


def members_by_level(roots: Iterable[Provider], read: Callable[[list[str]], Mapping[str, Provider | None]],
                     ) -> tuple[dict[str, list[Provider]], set[str]]:
    """The providers of these roots' trees, read down a level at a time by the children each item names:
    `read` gets every tree's next level at once (decision 0046). Returns the members by root, and apart
    (with no members) the roots whose tree cannot be read so: an item that does not name its children, or
    a child read in another tree (moved meanwhile); those are for the index."""
    roots = list(roots)
    members = {root.uuid: [root] for root in roots}
    unnamed: set[str] = set()
    level = [root for root in roots if root.children]
    while level:
        unnamed |= {p.root for p in level if not p.children_named}
        parents = [p for p in level if p.root not in unnamed]
        found = read(sorted(kid for p in parents for kid in p.child_uuids))
        level = []
        for parent in parents:
            kids = [found.get(kid) for kid in sorted(parent.child_uuids)]
            if any(kid is None or kid.root != parent.root for kid in kids):
                unnamed.add(parent.root)
                continue
            members[parent.root] += [kid for kid in kids if kid is not None]
            level += [kid for kid in kids if kid is not None and kid.children]
    return {root: found for root, found in members.items() if root not in unnamed}, unnamed


def descendants(tree: Iterable[Provider], uuid: str) -> list[Provider]:
    """Every provider below `uuid` in `tree` (breadth first); SubtreeIncomplete when the `children` counters
    of the subtree promise more than the tree holds."""
    by_parent: dict[str, list[Provider]] = defaultdict(list)
    members = {p.uuid: p for p in tree}
    for provider in members.values():
        if provider.parent_uuid is not None:
            by_parent[provider.parent_uuid].append(provider)
    found: list[Provider] = []
    frontier = [uuid]
    promised = 0
    while frontier:
        current = frontier.pop(0)
        if current in members:
            promised += members[current].children
        below = sorted(by_parent.get(current, []), key=lambda p: p.uuid)
        found.extend(below)
        frontier.extend(p.uuid for p in below)
    if promised != len(found):
        raise SubtreeIncomplete()
    return found


@dataclass(frozen=True)
class Move:
    """A provider's new place: its new parent (None: it becomes a root) and root, and the descendants whose
    root changes with it (empty when the move stays within its tree, where they are only checked)."""

    parent_uuid: str | None
    root: str
    descendants: tuple[Provider, ...]

    @property
    def changes_root(self) -> bool:
        return any(p.root != self.root for p in self.descendants)


def _save_error(uuid: str, action: str, reason: str) -> errors.Invalid:
    return errors.Invalid(f"Unable to save resource provider {uuid}: Object action {action} failed because: "
                          f"{reason}")


def parent_missing_on_update(uuid: str) -> errors.Invalid:
    # Upstream names the action "create" here, though the provider is being updated.
    return _save_error(uuid, "create", "parent provider UUID does not exist.")


def decide_move(provider: Provider, parent: Provider | None, parent_uuid: str | None,
                subtree: list[Provider], *, reparenting: bool) -> Move:
    """Placement's checks of a PUT that changes `parent_provider_uuid`, in its order: the parent exists, a
    provider that has a parent keeps it before 1.37, and no provider becomes its own ancestor."""
    if parent_uuid is not None:
        if parent is None:
            raise parent_missing_on_update(provider.uuid)
        if provider.parent_uuid is not None and provider.parent_uuid != parent_uuid and not reparenting:
            raise _save_error(provider.uuid, "update", "re-parenting a provider is not currently allowed.")
        if parent_uuid == provider.uuid or parent_uuid in {p.uuid for p in subtree}:
            raise _save_error(provider.uuid, "update", "creating loop in the provider tree is not allowed.")
        return Move(parent_uuid, parent.root, tuple(subtree))
    if not reparenting:
        raise _save_error(provider.uuid, "update", "un-parenting a provider is not currently allowed.")
    return Move(None, provider.uuid, tuple(subtree))


def create_parent_problem(uuid: str, parent_uuid: str, parent: Provider | None) -> str | None:
    """Why a provider cannot be created under `parent_uuid` (Placement's reason), or None."""
    if parent_uuid == uuid:
        return ("parent provider UUID cannot be same as UUID. Please set parent provider UUID to None if "
                "there is no parent.")
    if parent is None:
        return "parent provider UUID does not exist."
    return None
