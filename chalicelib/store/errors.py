"""The one place where store failures become our errors.

Conditional failures are business outcomes and are handled by each
repository; everything else (connection refused, timeouts, throttling that
outlived botocore's retries, 5xx) means the store is unavailable: 503, and the
caller repeats the request.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.errors import Unavailable

CONDITION_FAILED = "ConditionalCheckFailedException"
TRANSACTION_CANCELED = "TransactionCanceledException"


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def cancellation_codes(exc: ClientError) -> list[str]:
    """Per-item reason codes of a canceled transaction, in request order."""
    reasons: list[Any] = exc.response.get("CancellationReasons") or []
    codes = [str(r.get("Code") or "None") for r in reasons]
    if codes:
        return codes
    # Some emulators put the reasons only into the message: "... [None, ConditionalCheckFailed]".
    message = str(exc.response.get("Error", {}).get("Message", ""))
    if "[" in message and "]" in message:
        inner = message[message.rindex("[") + 1 : message.rindex("]")]
        return [c.strip() for c in inner.split(",")]
    return []


@contextmanager
def store_errors() -> Iterator[None]:
    try:
        yield
    except ClientError as exc:
        if error_code(exc) in (CONDITION_FAILED, TRANSACTION_CANCELED):
            raise
        raise Unavailable() from exc
    except BotoCoreError as exc:
        raise Unavailable() from exc
