"""The report message (contract: ReportRequest, Resource)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from chalicelib.contract.base import ContractModel
from chalicelib.contract.types import Limits, Opaque, StrictBoolean, Timestamp

ProviderState = Literal["Creating", "OK", "Updating", "Erred", "Terminating", "Terminated"]


class Resource(ContractModel):
    resource_ref: Opaque = Field(alias="resourceRef")
    offering_ref: Opaque = Field(alias="offeringRef")
    provider_project_ref: Opaque = Field(alias="providerProjectRef")
    provider_state: ProviderState = Field(alias="providerState")
    paused: StrictBoolean
    native_scope: Opaque | None = Field(default=None, alias="nativeScope")
    configured: Limits
    applied: Limits | None = None
    used: Limits | None = None
    observed_at: Timestamp = Field(alias="observedAt")


class ReportRequest(ContractModel):
    request_id: Opaque = Field(alias="requestId")
    resource: Resource
