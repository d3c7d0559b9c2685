"""AWS Signature Version 4 for the DynamoDB JSON protocol (POST / with a JSON body), as the direct
transport sends it (decision 0052).

botocore's signer builds the same header (tests/unit/test_store_sigv4.py compares the two for the same
request and instant) but derives the signing key again for every request and walks a general HTTP
request model; here the key is derived once per secret, day, region and service, and the canonical request
is the fixed shape DynamoDB's calls have. Secrets never leave this module's arguments and are never logged.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from dataclasses import dataclass

ALGORITHM = "AWS4-HMAC-SHA256"
CONTENT_TYPE = "application/x-amz-json-1.0"


@dataclass(frozen=True)
class Credentials:
    access_key: str
    secret_key: str
    token: str | None = None


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


class Signer:
    """Signs one service's requests in one region; thread-safe (the derived keys are a small cache)."""

    def __init__(self, region: str, service: str = "dynamodb") -> None:
        self.region = region
        self.service = service
        self._lock = threading.Lock()
        self._keys: dict[tuple[str, str], bytes] = {}

    def _signing_key(self, secret: str, day: str) -> bytes:
        cache_key = (hashlib.sha256(secret.encode()).hexdigest(), day)  # the secret itself is not kept as a key
        with self._lock:
            found = self._keys.get(cache_key)
        if found is not None:
            return found
        key = _hmac(_hmac(_hmac(_hmac(("AWS4" + secret).encode("utf-8"), day), self.region), self.service),
                    "aws4_request")
        with self._lock:
            if len(self._keys) > 8:  # rotated credentials and new days: keep only the recent
                self._keys.clear()
            self._keys[cache_key] = key
        return key

    def headers(self, credentials: Credentials, host: str, target: str, body: bytes,
                amz_date: str) -> dict[str, str]:
        """The headers of a signed request: `amz_date` is the instant as YYYYMMDDTHHMMSSZ (UTC)."""
        day = amz_date[:8]
        signed = {"content-type": CONTENT_TYPE, "host": host, "x-amz-date": amz_date}
        if credentials.token:
            signed["x-amz-security-token"] = credentials.token
        signed["x-amz-target"] = target
        names = ";".join(signed)  # already in sorted order
        canonical = "\n".join((
            "POST", "/", "",
            "".join(f"{name}:{value}\n" for name, value in signed.items()),
            names,
            hashlib.sha256(body).hexdigest(),
        ))
        scope = f"{day}/{self.region}/{self.service}/aws4_request"
        to_sign = "\n".join((ALGORITHM, amz_date, scope, hashlib.sha256(canonical.encode("utf-8")).hexdigest()))
        signature = hmac.new(self._signing_key(credentials.secret_key, day), to_sign.encode("utf-8"),
                             hashlib.sha256).hexdigest()
        headers = {"Content-Type": CONTENT_TYPE, "Host": host, "X-Amz-Date": amz_date, "X-Amz-Target": target,
                   "Authorization": f"{ALGORITHM} Credential={credentials.access_key}/{scope}, "
                                    f"SignedHeaders={names}, Signature={signature}"}
        if credentials.token:
            headers["X-Amz-Security-Token"] = credentials.token
        return headers
