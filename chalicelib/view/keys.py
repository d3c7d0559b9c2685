"""Where each view entity lives in the table, and how a provider ref resolves (pure)."""

from __future__ import annotations

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
    return key(f"RETAINED#{site}")


BINDING_ATTRIBUTE_PREFIX = "b:"


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
