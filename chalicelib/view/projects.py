"""`GET /resource-provisioning/{site}/projects/{providerProjectRef}`: resolve through the view."""

from __future__ import annotations

from typing import Any

from chalicelib.contract.types import is_opaque
from chalicelib.errors import BadRequest, NotFound
from chalicelib.runtime import Services
from chalicelib.store.codec import from_item
from chalicelib.store.errors import store_errors
from chalicelib.view.keys import ref_key, resolve_project


def lookup_project(services: Services, provider_project_ref: str) -> str | None:
    with store_errors():
        item = services.client.get_item(
            TableName=services.table, Key=ref_key(provider_project_ref), ConsistentRead=True
        ).get("Item")
    return resolve_project(from_item(item))


def get_project(services: Services, provider_project_ref: str) -> dict[str, Any]:
    if not is_opaque(provider_project_ref):
        raise BadRequest("invalid_provider_project_ref")
    project_id = lookup_project(services, provider_project_ref)
    if project_id is None:
        raise NotFound()
    return {"projectId": project_id}
