"""Where each view entity lives in the table, and how a provider ref resolves (pure).

Also the items the intake writes for the Sites' retained lists (the view owns every key it writes;
chalicelib/retained reads them, never the other way round): each Site's revision item, its change
counters with the scopes each applied event changed, and the index of its required items by Project
and by Party (docs/decisions/0002-retained-accounts-materialized.md).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from chalicelib.store.keys import key


def project_key(project_id: str) -> dict[str, Any]:
    return key(f"VIEW#project#{project_id}")


def project_binding_key(binding_id: str) -> dict[str, Any]:
    return key(f"VIEW#binding#{binding_id}")


def ref_key(provider_project_ref: str) -> dict[str, Any]:
    """The bindings that name one provider Project ref, one attribute per binding."""
    return key(f"REF#{provider_project_ref}")


def party_site_binding_key(party_id: str, site: str) -> dict[str, Any]:
    return key(f"VIEW#partysite#{party_id}#{site}")


def username_key(site: str, username: str) -> dict[str, Any]:
    return key(f"VIEW#username#{site}#{username}")


def membership_key(project_id: str, party_id: str) -> dict[str, Any]:
    return key(f"VIEW#membership#{project_id}#{party_id}")


def accepted_item_key(site: str, item_id: str) -> dict[str, Any]:
    return key(f"ITEMS#{site}", item_id)


def retained_key(site: str) -> dict[str, Any]:
    """The Site's revision item (`-`); its change counters and list header share the partition."""
    return key(f"RETAINED#{site}")


# --- what an applied event changed, for the Site's retained list ----------------------------------

CHANGE_SHARDS = 32


def change_shard(scope: str) -> str:
    """The sort key of the change counter a scope's changes are counted on (spreads concurrent events)."""
    return f"changes#{zlib.crc32(scope.encode()) % CHANGE_SHARDS:02d}"


def change_counter_key(site: str, shard: str) -> dict[str, Any]:
    return key(f"RETAINED#{site}", shard)


# A scope names the rows of a Site's list one input can change: every row of a Project (a project
# event), of a Party (its Party Site binding), or of one (Project, Party) pair (a membership; an item).
PROJECT_SCOPE, PARTY_SCOPE, PAIR_SCOPE = "project", "party", "pair"


def project_scope(project_id: str) -> str:
    return f"{PROJECT_SCOPE}#{project_id}"


def party_scope(party_id: str) -> str:
    return f"{PARTY_SCOPE}#{party_id}"


def pair_scope(project_id: str, party_id: str) -> str:
    return f"{PAIR_SCOPE}#{project_id}#{party_id}"


def by_project_partition(site: str, project_id: str) -> str:
    """The Site's required items of one Project: sort key `<partyId>#<itemId>`."""
    return f"RETAINEDIDX#{site}#{PROJECT_SCOPE}#{project_id}"


def by_party_partition(site: str, party_id: str) -> str:
    """The Site's required items of one Party: sort key `<projectId>#<itemId>`."""
    return f"RETAINEDIDX#{site}#{PARTY_SCOPE}#{party_id}"


@dataclass(frozen=True)
class IndexQuery:
    """The index partition that holds a scope's items, and the sort key prefix within it (or none)."""

    partition: str
    prefix: str | None
    by_project: bool  # sort keys start with the partyId (else with the projectId)


def index_query(site: str, scope: str) -> IndexQuery:
    kind, _, rest = scope.partition("#")
    if kind == PROJECT_SCOPE:
        return IndexQuery(by_project_partition(site, rest), None, True)
    if kind == PARTY_SCOPE:
        return IndexQuery(by_party_partition(site, rest), None, False)
    if kind == PAIR_SCOPE:
        project_id, _, party_id = rest.partition("#")
        return IndexQuery(by_project_partition(site, project_id), party_id + "#", True)
    raise ValueError(f"unknown scope {scope!r}")


def index_keys(site: str, project_id: str, party_id: str, item_id: str) -> list[dict[str, Any]]:
    """The two index items of one required item: by Project, then by Party."""
    return [key(by_project_partition(site, project_id), f"{party_id}#{item_id}"),
            key(by_party_partition(site, party_id), f"{project_id}#{item_id}")]


BINDING_ATTRIBUTE_PREFIX = "b:"


@dataclass(frozen=True)
class SiteBinding:
    """A Party's `site` binding at one Site, as the view stores it (members and the retained list read it)."""

    binding_id: str
    state: str
    revision: int = 0


@dataclass(frozen=True)
class RefBinding:
    """One Project binding that names a provider ref (an attribute `b:<bindingId>` of the ref's item)."""

    binding_id: str
    project_id: str
    state: str


def resolve_project(bindings: Iterable[RefBinding]) -> str | None:
    """Exactly one established binding for the ref resolves to its Project; none or several do not."""
    established = [b.project_id for b in bindings if b.state == "established"]
    return established[0] if len(established) == 1 else None


@dataclass(frozen=True)
class ProviderRef:
    """The bindings that name one provider Project ref."""

    bindings: tuple[RefBinding, ...] = ()

    def project(self) -> str | None:
        return resolve_project(self.bindings)
