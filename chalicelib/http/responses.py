"""JSON responses: every body is JSON, every error exactly `{"code": "..."}`."""

from __future__ import annotations

import json
from typing import Any

from chalice import Response

JSON = {"Content-Type": "application/json"}


def json_response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    return Response(
        body=json.dumps(body, separators=(",", ":")),
        status_code=status,
        headers={**JSON, **(headers or {})},
    )


def error_body(code: str) -> dict[str, str]:
    return {"code": code}
