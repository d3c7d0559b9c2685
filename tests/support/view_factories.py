"""Builders for issue 3's messages: the view's party/username/membership/item events and accounts reports.

Valid by default, overridable field by field (like factories.py).
"""

from __future__ import annotations

import uuid
from typing import Any

from tests.support.factories import PROJECT

PARTY = "33333333-3333-4333-8333-333333333333"
OTHER_PARTY = "44444444-4444-4444-8444-444444444444"


def site_binding_event(party_id: str = PARTY, site: str = "k8s", binding_id: str = "sb-1",
                       state: str = "established", revision: int = 1) -> dict[str, Any]:
    return {"type": "party_site_binding", "bindingId": binding_id, "partyId": party_id, "site": site,
            "state": state, "revision": revision}


def username_event(username: str = "alice", party_id: str = PARTY, site: str = "k8s", verified: bool = True,
                   revision: int = 1) -> dict[str, Any]:
    return {"type": "username", "site": site, "username": username, "partyId": party_id,
            "verified": verified, "revision": revision}


def membership_event(project_id: str = PROJECT, party_id: str = PARTY, generation: int = 1,
                     state: str = "member", revision: int = 1) -> dict[str, Any]:
    return {"type": "membership", "projectId": project_id, "partyId": party_id, "generation": generation,
            "state": state, "revision": revision}


def item_event(item_id: str = "item-1", site: str = "k8s", project_id: str = PROJECT, party_id: str = PARTY,
               generation: int = 1, management_generation: int = 1, required: bool = True,
               revision: int = 1) -> dict[str, Any]:
    return {"type": "accepted_item", "itemId": item_id, "site": site, "projectId": project_id,
            "partyId": party_id, "generation": generation, "managementGeneration": management_generation,
            "required": required, "revision": revision}


def account(party_id: str | None = None, reference: str | None = None, native_uid: str | None = None,
            binding_id: str = "sb-1", generation: int = 1, state: str = "ready", site: str = "k8s") -> dict[str, Any]:
    party_id = party_id or str(uuid.uuid4())
    if reference is None:
        reference = f"member-{party_id[:8]}" if site == "k8s" else f"u{party_id[:8]}"
    return {"partyId": party_id, "accountReference": reference, "nativeUid": native_uid or str(uuid.uuid4()),
            "bindingId": binding_id, "generation": generation, "state": state}


def accounts_report(accounts: list[dict[str, Any]] | None = None, request_id: str | None = None,
                    resource_ref: str = "res-1", observed_at: str = "2026-03-01T10:00:00Z") -> dict[str, Any]:
    return {"requestId": request_id or f"acc-{uuid.uuid4().hex}", "resourceRef": resource_ref,
            "observedAt": observed_at, "accounts": [account()] if accounts is None else accounts}


EVENTS = "/api/resource-provisioning/events"


def post_events(api: Any, *events: dict[str, Any]) -> dict[str, int]:
    answer = api.post(EVENTS, {"events": list(events)}, key="service")
    assert answer.status == 200, answer.body
    return answer.body


def allocate(api: Any, site: str = "k8s", resource_ref: str = "res-1", provider_ref: str = "wproj-1",
             project_id: str = PROJECT, binding_id: str | None = None, **resource: Any) -> str:
    """Bind the provider ref to the Project and report the resource at the Site; returns the allocationId."""
    post_events(api, {"type": "project_binding", "bindingId": binding_id or f"pb-{provider_ref}",
                      "projectId": project_id, "providerProjectRef": provider_ref, "state": "established",
                      "revision": 1})
    body = {"requestId": f"req-{uuid.uuid4().hex}", "resource": {
        "resourceRef": resource_ref, "offeringRef": "off-1", "providerProjectRef": provider_ref,
        "providerState": "OK", "paused": False, "nativeScope": "ns-1", "configured": {"cpu": 1},
        "applied": {"cpu": 1}, "observedAt": "2026-03-01T09:00:00Z", **resource}}
    answer = api.post(f"/resource-provisioning/{site}/reports", body, key=site)
    assert answer.status == 200, answer.body
    return answer.body["allocationId"]
