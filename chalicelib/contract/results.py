"""Result bodies shared by the two report operations (contract: ReportResult, AccountsResult)."""

from __future__ import annotations

from typing import Any


def rejected(request_id: str, allocation_id: str, code: str, message: str) -> dict[str, Any]:
    return {
        "requestId": request_id,
        "allocationId": allocation_id,
        "outcome": "rejected",
        "rejection": {"code": code, "message": message},
    }
