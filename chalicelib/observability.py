"""Structured logs and metrics (aws-lambda-powertools).

One log line per request: request id, site, operation, allocationId, status,
outcome, rejection code and latency. Never keys, never request bodies.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from aws_lambda_powertools import Logger

SERVICE_NAME = "resource-provisioning"

logging.getLogger("werkzeug").setLevel(logging.WARNING)

logger = Logger(service=SERVICE_NAME, level=os.environ.get("RP_LOG_LEVEL", "INFO"))


def record_request(
    *,
    operation: str,
    status: int,
    latency_ms: float,
    request_id: str | None,
    site: str | None,
    body: dict[str, Any] | None,
) -> None:
    body = body or {}
    rejection = body.get("rejection") or {}
    code = rejection.get("code") if rejection else body.get("code")
    logger.info(
        "request",
        extra={
            "operation": operation,
            "status": status,
            "site": site,
            "requestId": request_id,
            "allocationId": body.get("allocationId"),
            "outcome": body.get("outcome") or ("ok" if status < 400 else "error"),
            "code": code,
            "latencyMs": round(latency_ms, 2),
        },
    )
