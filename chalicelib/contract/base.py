"""Base model for contract messages: strict types, no unknown fields, no explicit nulls."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, model_validator
from pydantic_core import PydanticCustomError

from chalicelib.contract.types import STRICT_MODEL


class ContractModel(BaseModel):
    model_config = STRICT_MODEL

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        # An optional field is absent, never null: the contract gives none of them a null type.
        if isinstance(data, dict) and any(v is None for v in data.values()):
            raise PydanticCustomError("null", "null is not allowed")
        return data

    def data(self) -> dict[str, Any]:
        """The message as JSON data under its contract names, absent fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
