"""`GET /resource-provisioning/{site}/projects/{providerProjectRef}`: resolve through the view.

Also the store side of a provider ref: its item (`REF#<ref>`, one attribute
`b:<bindingId>` = {p: projectId, s: state, r: revision} per binding) read
into a `ProviderRef` that the pure rules resolve.
"""

from __future__ import annotations

from typing import Any

from chalicelib.contract.types import is_opaque
from chalicelib.errors import BadRequest, NotFound
from chalicelib.store.ops import get_item
from chalicelib.store.table import TableAccess
from chalicelib.view.keys import BINDING_ATTRIBUTE_PREFIX, ProviderRef, RefBinding, ref_key


def ref_bindings(item: dict[str, Any] | None) -> ProviderRef:
    """The bindings a ref item lists (entries that are not binding maps are no bindings)."""
    if not item:
        return ProviderRef()
    return ProviderRef(tuple(
        RefBinding(name[len(BINDING_ATTRIBUTE_PREFIX):], str(entry.get("p")), str(entry.get("s")))
        for name, entry in item.items()
        if name.startswith(BINDING_ATTRIBUTE_PREFIX) and isinstance(entry, dict)
    ))


def lookup_project(db: TableAccess, provider_project_ref: str) -> str | None:
    return ref_bindings(get_item(db.client, db.table, ref_key(provider_project_ref))).project()


def get_project(db: TableAccess, provider_project_ref: str) -> dict[str, Any]:
    if not is_opaque(provider_project_ref):
        raise BadRequest("invalid_provider_project_ref")
    project_id = lookup_project(db, provider_project_ref)
    if project_id is None:
        raise NotFound()
    return {"projectId": project_id}
