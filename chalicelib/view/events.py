"""The event types the intake accepts (pure models).

Every event names one entity of Beto's and carries Beto's `revision` for it;
an event whose revision is not newer than the stored one is ignored, so
duplicates and out-of-order delivery are harmless.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

from chalicelib.contract.types import STRICT_MODEL, Id, Opaque, StoredRevision, StrictBoolean

Site = Literal["k8s", "slurm"]
MAX_EVENTS = 500


class _Event(BaseModel):
    model_config = STRICT_MODEL
    revision: StoredRevision


class ProjectEvent(_Event):
    type: Literal["project"]
    project_id: Id = Field(alias="projectId")
    state: Literal["active", "closed"]
    management_generation: StoredRevision = Field(alias="managementGeneration")


class ProjectBindingEvent(_Event):
    type: Literal["project_binding"]
    binding_id: Opaque = Field(alias="bindingId")
    project_id: Id = Field(alias="projectId")
    provider_project_ref: Opaque = Field(alias="providerProjectRef")
    state: Literal["established", "retired"]


class PartySiteBindingEvent(_Event):
    type: Literal["party_site_binding"]
    binding_id: Opaque = Field(alias="bindingId")
    party_id: Id = Field(alias="partyId")
    site: Site
    state: Literal["established", "retired"]


class UsernameEvent(_Event):
    type: Literal["username"]
    site: Site
    username: Opaque
    party_id: Id = Field(alias="partyId")
    verified: StrictBoolean


class MembershipEvent(_Event):
    type: Literal["membership"]
    project_id: Id = Field(alias="projectId")
    party_id: Id = Field(alias="partyId")
    generation: StoredRevision
    state: Literal["member", "left"]


class AcceptedItemEvent(_Event):
    type: Literal["accepted_item"]
    item_id: Opaque = Field(alias="itemId")
    site: Site
    project_id: Id = Field(alias="projectId")
    party_id: Id = Field(alias="partyId")
    generation: StoredRevision
    management_generation: StoredRevision = Field(alias="managementGeneration")
    required: StrictBoolean


Event = Annotated[
    ProjectEvent | ProjectBindingEvent | PartySiteBindingEvent | UsernameEvent | MembershipEvent | AcceptedItemEvent,
    Field(discriminator="type"),
]


class EventBatch(BaseModel):
    model_config = STRICT_MODEL
    events: list[Event] = Field(max_length=MAX_EVENTS)


EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
