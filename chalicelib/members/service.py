"""`GET /resource-provisioning/{site}/members/{username}?providerProjectRef=...`.

Every failure is the same 404 `not_found`, so a Site's key learns nothing
about Projects it has no allocation for, nor about which condition failed.
Reads: one consistent BatchGet (provider ref + username), one query of the
sparse allocation index (ALLOCP#<site>#<projectId>, only non-retired
allocations whose latest accepted report resolved to the Project), one
consistent BatchGet (membership + the Party's binding at this Site).
"""

from __future__ import annotations

from typing import Any

from chalicelib.allocations.repository import AllocationRepository
from chalicelib.contract.types import is_opaque
from chalicelib.errors import BadRequest, NotFound
from chalicelib.members.repository import binding_from_item, membership_from_item, username_from_item
from chalicelib.members.rules import member_result, verified_party
from chalicelib.store.keys import key_id
from chalicelib.store.ops import batch_get
from chalicelib.store.table import TableAccess
from chalicelib.view.keys import membership_key, party_site_binding_key, ref_key, username_key
from chalicelib.view.projects import ref_bindings


def get_member(db: TableAccess, site: str, username: str, provider_project_ref: str | None) -> dict[str, Any]:
    if provider_project_ref is None:
        raise BadRequest("missing_provider_project_ref")
    if not is_opaque(provider_project_ref):
        raise BadRequest("invalid_provider_project_ref")
    if not is_opaque(username):
        raise BadRequest("invalid_username")

    ref, user = ref_key(provider_project_ref), username_key(site, username)
    found = batch_get(db.client, db.table, [ref, user])
    project_id = ref_bindings(found.get(key_id(ref))).project()
    party_id = verified_party(username_from_item(found.get(key_id(user))))
    if project_id is None or party_id is None:
        raise NotFound()
    if not AllocationRepository(db.client, db.table).project_has_live_allocation(site, project_id):
        raise NotFound()

    membership, binding = membership_key(project_id, party_id), party_site_binding_key(party_id, site)
    found = batch_get(db.client, db.table, [membership, binding])
    result = member_result(project_id, party_id, membership_from_item(found.get(key_id(membership))),
                           binding_from_item(found.get(key_id(binding))))
    if result is None:
        raise NotFound()
    return result
